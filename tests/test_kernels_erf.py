"""The kernels' erf (numerics/kernels/erf_poly.py) against mpmath at 30 digits.

Bound 2 eps relative, derived: the degree-11 Chebyshev interpolants on intervals of width 1/4 have
a remainder max|f^(12)| / (12! 2^11 8^12) <= 2.2e-18 (f = erf; f = erf/x on the first interval:
8.6e-19), below 0.05 eps relative to erf >= 0.27 there (1.1 x on the first); the coefficients
are rounded once (<= 0.5 ulp each, weighted by |u|^k <= 1, the leading one dominating); t0 + u S
rounds once at the result's size (0.5 ulp) with |u S| <= 0.15 |t0| carrying a few eps of its own;
the first interval multiplies by |x| (0.5 ulp). Relative to eps (= 1 ulp of [1, 2), 2 ulp of
[1/2, 1)) this stays below ~1.5 eps (measured 1.41 eps at 30,000 points).
"""

import math

import mpmath as mp
import numpy as np
import pytest

EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def erf_values():
    from compiled_in_tests import njit_over_kernels

    from numerics.kernels.erf_poly import erf_poly, erf_table

    @njit_over_kernels
    def evaluate(xs, table):
        out = np.empty_like(xs)
        for i in range(xs.size):
            out[i] = erf_poly(xs[i], table)
        return out

    return lambda xs: evaluate(np.asarray(xs, dtype=float), erf_table())


def test_erf_to_two_eps_against_mpmath(erf_values):
    # Every interval densely, both signs, the interval ends, tiny arguments, the cut at 6.
    xs = np.concatenate([np.linspace(0.0, 6.5, 6001)[1:], np.arange(1, 25) / 4.0,
                         np.nextafter(np.arange(1, 25) / 4.0, 0.0), np.geomspace(1e-300, 0.25, 400)])
    xs = np.concatenate([xs, -xs])
    got = erf_values(xs)
    with mp.workdps(30):
        rel = [float(abs(mp.mpf(g) - mp.erf(mp.mpf(x))) / abs(mp.erf(mp.mpf(x)))) for g, x in zip(got, xs)]
    assert max(rel) <= 2 * EPS, (max(rel) / EPS, xs[int(np.argmax(rel))])
    assert max(rel) > 0  # a polynomial, not the exact function


def test_erf_special_values(erf_values):
    got = erf_values([0.0, -0.0, np.inf, -np.inf, np.nan, 6.0, -1e308])
    assert got[0] == 0.0 and math.copysign(1.0, got[1]) == -1.0
    assert list(got[[2, 3, 5, 6]]) == [1.0, -1.0, 1.0, -1.0]
    assert np.isnan(got[4])


def test_erf_table_is_the_chebyshev_interpolant():
    """The table's rows evaluated at the interpolation nodes give erf (erf/x on the first interval)
    to the rounding of the coefficients: a wrong node, interval or basis conversion would not."""
    from numerics.kernels.erf_poly import ERF_DEGREE, erf_table

    table, n = erf_table(), ERF_DEGREE + 1
    u = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    for i, row in enumerate(table):
        x = (i + 0.5) / 4 + u / 8
        want = [float(mp.erf(v) / (v if i == 0 else 1)) for v in x]
        assert np.max(np.abs(np.polynomial.polynomial.polyval(u, row) - want)) <= 4 * EPS, i


def test_shipped_erf_table_is_regenerated_bit_for_bit():
    """The table the kernels read (numerics/kernels/_erf_table.py) is the text ``erf_table_source`` writes from a
    fresh mpmath computation, and ``erf_table()`` reads back those exact floats."""
    import pathlib

    from numerics.kernels import _erf_table
    from numerics.kernels.erf_poly import chebyshev_erf_table, erf_table, erf_table_source

    fresh = chebyshev_erf_table()
    assert pathlib.Path(_erf_table.__file__).read_text() == erf_table_source(fresh)
    assert erf_table().tobytes() == fresh.tobytes() and not erf_table().flags.writeable
