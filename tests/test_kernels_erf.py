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

    import numerics.kernels.erf_poly as ke

    @njit_over_kernels
    def evaluate(xs, table):
        out = np.empty_like(xs)
        for i in range(xs.size):
            out[i] = ke.erf_poly(xs[i], table)
        return out

    return lambda xs: evaluate(np.asarray(xs, dtype=float), ke.erf_table())


def _relative_errors(got, xs):
    """|got - erf(x)| / |erf(x)| for the points xs = (x_1..x_n, -x_1..-x_n), erf at 30 digits (mpmath), computed
    once per pair: mpmath's erf is odd to the bit (the series in |x|, then the sign; round to nearest), so the
    value at -x is minus that at x."""
    half = xs.size // 2
    assert np.array_equal(xs[half:], -xs[:half])
    with mp.workdps(30):
        exact = [mp.erf(mp.mpf(x)) for x in xs[:half]]
        return ([float(abs(mp.mpf(g) - e) / abs(e)) for g, e in zip(got[:half], exact)]
                + [float(abs(mp.mpf(g) + e) / abs(e)) for g, e in zip(got[half:], exact)])


def test_erf_to_two_eps_against_mpmath(erf_values):
    # Every interval densely, both signs, the interval ends, tiny arguments, the cut at 6.
    xs = np.concatenate([np.linspace(0.0, 6.5, 6001)[1:], np.arange(1, 25) / 4.0,
                         np.nextafter(np.arange(1, 25) / 4.0, 0.0), np.geomspace(1e-300, 0.25, 400)])
    xs = np.concatenate([xs, -xs])
    rel = _relative_errors(erf_values(xs), xs)
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
    """The tables the kernels read (numerics/kernels/_erf_table.py) are the text ``erf_table_source`` writes from
    fresh mpmath computations, and ``erf_table()``, ``erf_block_table()`` read back those exact floats."""
    from numerics.kernels.erf_poly import (ERF_TABLE_FILE, chebyshev_erf_block_table, chebyshev_erf_table,
                                           erf_block_table, erf_table, erf_table_source)

    fresh, fresh_block = chebyshev_erf_table(), chebyshev_erf_block_table()
    assert ERF_TABLE_FILE.read_text() == erf_table_source(fresh, fresh_block)
    assert erf_table().tobytes() == fresh.tobytes() and not erf_table().flags.writeable
    assert erf_block_table().tobytes() == fresh_block.tobytes() and not erf_block_table().flags.writeable


@pytest.fixture(scope="module")
def erf_block_values():
    from compiled_in_tests import njit_over_kernels

    import numerics.kernels.erf_poly as ke

    @njit_over_kernels
    def evaluate(xs):
        out, E = xs.copy(), -(xs * xs)  # E: the reduced-SGD kernel's -(lambda p)^2, then its exp
        K = np.empty((2, xs.size), np.int64)  # work space of both
        ke.exp_block(E, K)
        ke.erf_block(out, E, K, np.empty((2, xs.size + 7)))
        return out

    return lambda xs: evaluate(np.asarray(xs, dtype=float))


def test_erf_block_to_two_eps_against_mpmath(erf_block_values):
    """``erf_block`` (the reduced-SGD kernel's erf, vectorised) within 2 eps relative of mpmath's erf at 30 digits,
    derived in docs/math/kernels.md#erf-without-table-lookups (u = eps/2): |x| < 1, x P(2 x^2 - 1) within ~3u (the
    interpolant's remainder below 1e-19, its rounded argument 0.5u, Horner's scheme ~1.5u, the product u); |x| >= 1,
    1 - E R with E within (x^2 + 2)u of exp(-x^2) relative and R within a few u, so E R within erfc(x)(x^2 + 6)u
    <= 1.1u absolute (largest at x = 1), plus the last rounding, below 2.4u relative to erf >= 0.84. Every piece
    densely, both signs, the pieces' ends and their neighbours, tiny arguments, beyond the cut at 6."""
    ends = np.array([1.0, 2.5, 6.0])
    xs = np.concatenate([np.linspace(0.0, 6.5, 6501)[1:], ends, np.nextafter(ends, 0.0), np.nextafter(ends, 7.0),
                         np.geomspace(1e-300, 1.0, 400), np.random.default_rng(0).uniform(0.0, 6.0, 3000)])
    xs = np.concatenate([xs, -xs])
    rel = _relative_errors(erf_block_values(xs), xs)
    assert max(rel) <= 2 * EPS, (max(rel) / EPS, xs[int(np.argmax(rel))])
    assert max(rel) > 0  # polynomials, not the exact function


def test_erf_block_special_values(erf_block_values):
    got = erf_block_values([0.0, -0.0, np.inf, -np.inf, np.nan, 6.0, -1e308, 1e200])
    assert got[0] == 0.0 and math.copysign(1.0, got[1]) == -1.0
    assert list(got[[2, 3, 5, 6, 7]]) == [1.0, -1.0, 1.0, -1.0, 1.0]
    assert np.isnan(got[4])


def test_erf_block_table_is_the_chebyshev_interpolant():
    """The block table's rows at their interpolation nodes give erf(x)/x (row 0, degree 12, at u = 2 x^2 - 1) and
    erfc(x) exp(x^2) (rows 1-2, degree 18, on [1, 2.5) and [2.5, 6]) to the rounding of the coefficients."""
    from numerics.kernels.erf_poly import ERF_BLOCK_DEGREE, erf_block_table

    table = erf_block_table()
    assert table.shape == (3, ERF_BLOCK_DEGREE + 1) and not np.any(table[0, 13:])
    with mp.workdps(30):
        for row, n, f, (a, b) in ((table[0], 13, lambda t: mp.erf(mp.sqrt(t)) / mp.sqrt(t), (0, 1)),
                                  (table[1], 19, lambda x: mp.erfc(x) * mp.exp(x * x), (1, 2.5)),
                                  (table[2], 19, lambda x: mp.erfc(x) * mp.exp(x * x), (2.5, 6))):
            u = np.cos(np.pi * (np.arange(n) + 0.5) / n)
            want = [float(f(mp.mpf(z))) for z in (a + b) / 2 + u * (b - a) / 2]
            assert np.max(np.abs(np.polynomial.polynomial.polyval(u, row) - want)) <= 4 * EPS, (a, b)


def test_exp_block_within_one_ulp_against_mpmath():
    """``exp_block`` (the reduced-SGD kernel's exp(-(lambda p)^2), vectorised) against mpmath at 30 digits: within
    1 ulp of exp(y) at the float y for y in [-708, 0] (derived in its docstring and
    docs/math/kernels.md#reduced-sgd: the reduction exact to ~1e-24, the Taylor remainder < 5e-18 relative, one
    rounding of 1 + (r + r^2 S) at the result's size (0.5 ulp) plus that of r + r^2 S (at most 0.25 ulp of the
    result, |r + r^2 S| <= 0.42), r^2 S's own below 0.05 ulp; the scaling by 2^k exact); in the subnormals
    (y < -708) within one ulp of the smallest subnormal; 0 below -746, nan for nan, 1 at 0."""
    from compiled_in_tests import njit_over_kernels

    import numerics.kernels.erf_poly as ke

    @njit_over_kernels
    def evaluate(ys):
        out = ys.copy()
        ke.exp_block(out, np.empty((2, out.size), np.int64))
        return out

    rng = np.random.default_rng(0)
    ys = np.concatenate([-np.linspace(0.0, 1.0, 3001) ** 2 * 745.0, -rng.uniform(0, 2, 4000),
                         -rng.uniform(0, 745.0, 4000), -np.log(2) / 2 * np.arange(0, 2150),  # the rounding ties of k
                         -np.nextafter(np.log(2) / 2 * np.arange(1, 2150), 0.0)])
    ys = ys[ys >= -745.0]
    got = evaluate(ys)
    with mp.workdps(30):
        exact = [mp.exp(mp.mpf(y)) for y in ys]
    normal = ys >= -708.0
    ulp = np.spacing(np.array([float(e) for e in exact]))
    err = np.array([float(abs(mp.mpf(g) - e)) for g, e in zip(got, exact)])
    assert np.max(err[normal] / ulp[normal]) <= 1.0, np.max(err[normal] / ulp[normal])
    assert np.max(err[~normal]) <= 5e-324
    assert np.any(got != np.exp(ys))  # a polynomial, not libm's exp
    special = evaluate(np.array([0.0, -0.0, -746.0, -1e300, -np.inf, np.nan]))
    assert list(special[:5]) == [1.0, 1.0, 0.0, 0.0, 0.0] and np.isnan(special[5])


def test_erf_block_lists_the_tail_values_and_puts_them_back(erf_block_values):
    """``erf_block`` takes the values at or above 1 apart from the others (listed, then put back): in a block that
    mixes them in random order, each value is the one it has alone in a block of one, bit for bit, nan and inf
    included."""
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.uniform(-1.0, 1.0, 300), rng.uniform(1.0, 7.0, 60) * rng.choice([-1.0, 1.0], 60),
                         [1.0, -1.0, np.nextafter(1.0, 0.0), 2.5, np.inf, -np.inf, np.nan]])
    for block in (rng.permutation(xs), xs[:50], xs[-60:]):
        alone = np.concatenate([erf_block_values([x]) for x in block])
        np.testing.assert_array_equal(erf_block_values(block), alone)
