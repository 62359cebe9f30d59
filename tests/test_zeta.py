"""zeta(t, g) = E[erf(t + g Z)^2], Z ~ N(0, 1), and its t-derivatives by the Owen's T closed form
``theory.zeta`` (float64) against the references (docs/math/risk.md#derivatives-of-zeta): the
40-digit mpmath grid tests/data/zeta_reference.csv (``zeta_grid``), live mpmath points and special
values. The closed form is proved symbolically in tests/test_zeta_symbolic.py; the reference routes
themselves are tested in tests/test_zeta_reference.py.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.special import owens_t

from theory.zeta import (ZETA_MAX_RELATIVE_ERROR, zeta, zeta_of_ratio, zeta_t, zeta_t_derivatives, zeta_tt,
                         zeta_ttt)
from theory.zeta_reference import zeta_derivatives_mpmath, zeta_owen_mpmath
from zeta_grid import (COLUMNS, DERIVATIVE_TOL, EPS, FLOOR, REFERENCE, ZETA_RTOL, mixed_error,
                       reference_error)


def test_closed_form_matches_mpmath_reference_grid():
    """Relative error of zeta on the 40-digit grid: within the a priori bound ZETA_RTOL and
    within the documented ZETA_MAX_RELATIVE_ERROR."""
    t, g, _ = REFERENCE
    hi = REFERENCE[2]["zeta"][0]
    rel = reference_error(zeta(t, g), "zeta") / hi
    worst = np.argmax(rel)
    where = (f"{rel[worst]:.3g} = {rel[worst] / EPS:.2f} eps "
             f"at t={float(t[worst])!r}, g={float(g[worst])!r}")
    assert rel[worst] <= ZETA_RTOL, where
    assert rel[worst] <= ZETA_MAX_RELATIVE_ERROR, "theory.zeta documents a smaller error: " + where


def test_documented_error_bound_is_a_few_ulps():
    """theory.zeta.ZETA_MAX_RELATIVE_ERROR must not claim less accuracy than the a priori bound."""
    assert ZETA_MAX_RELATIVE_ERROR <= ZETA_RTOL, (
        f"ZETA_MAX_RELATIVE_ERROR = {ZETA_MAX_RELATIVE_ERROR:.3g} exceeds the derived "
        f"{ZETA_RTOL:.3g} = {ZETA_RTOL / EPS:.0f} eps")


def test_closed_form_at_random_points_near_the_branch_corners(rng):
    """Off-grid: random (t, g) where zeta is O(1) and both branches of theory.zeta meet."""
    t = rng.uniform(-2.0, 2.0, 120)
    g = rng.uniform(0.0, 1.0, 120)
    with mpmath.workdps(25):
        refs = [zeta_owen_mpmath(ti, gi) for ti, gi in zip(t, g)]
        rel = np.array([float(abs((mpmath.mpf(float(z)) - r) / r))
                        for z, r in zip(zeta(t, g), refs)])
    worst = np.argmax(rel)
    assert rel[worst] <= ZETA_RTOL, (
        f"{rel[worst] / EPS:.2f} eps at t={float(t[worst])!r}, g={float(g[worst])!r}")


@pytest.mark.parametrize("k, fn", [(1, zeta_t), (2, zeta_tt), (3, zeta_ttt)])
def test_derivatives_match_mpmath_reference_grid(k, fn):
    t, g, ref = REFERENCE
    scale = np.abs(ref[COLUMNS[k]][0]) + np.abs(t * ref[COLUMNS[k + 1]][0])
    mixed = reference_error(fn(t, g), COLUMNS[k]) / np.maximum(scale, FLOOR)
    worst = np.argmax(mixed)
    assert mixed[worst] <= DERIVATIVE_TOL, (
        f"{COLUMNS[k]}: {mixed[worst]:.3g} at t={float(t[worst])!r}, g={float(g[worst])!r}")


def test_special_values():
    g = np.logspace(-8, 8, 161)
    with mpmath.workdps(30):
        at_zero = np.array([float(2 / mpmath.pi * mpmath.asin(2 * mpmath.mpf(x)**2
                                                              / (1 + 2 * mpmath.mpf(x)**2)))
                            for x in g])
    np.testing.assert_allclose(zeta(0.0, g), at_zero, rtol=ZETA_RTOL, atol=0)
    t = np.concatenate([np.logspace(-10, 1.5, 116), [0.0]])
    with mpmath.workdps(30):
        erf2 = np.array([float(mpmath.erf(mpmath.mpf(x))**2) for x in t])
    np.testing.assert_allclose(zeta(t, 0.0), erf2, rtol=ZETA_RTOL, atol=0)


def test_evenness_and_limit():
    t = np.concatenate([np.logspace(-8, 3, 45), [np.inf]])
    g = np.logspace(-4, 2, 13)[:, None]
    assert np.array_equal(zeta(-t, g), zeta(t, g))
    finite = t[:-1]
    assert np.array_equal(zeta_t(-finite, g), -zeta_t(finite, g))
    assert np.array_equal(zeta_tt(-finite, g), zeta_tt(finite, g))
    assert np.array_equal(zeta_ttt(-finite, g), -zeta_ttt(finite, g))
    assert np.all(zeta(np.inf, g) == 1.0) and np.all(zeta(-np.inf, g) == 1.0)
    # 1 - zeta = 8 T(h, c) <= (4/pi) c e^{-h^2/2} (bound of the proof in tests/test_zeta_symbolic.py),
    # exceeded nowhere
    tt = np.linspace(0.0, 60.0, 121)
    c2, c = np.sqrt(1 + 2 * g * g), 1 / np.sqrt(1 + 4 * g * g)
    bound = 4 / np.pi * c * np.exp(-(tt / c2)**2)
    assert np.all(1.0 - zeta(tt, g) <= bound + ZETA_RTOL)  # zeta <= 1 carries ZETA_RTOL
    assert np.all((zeta(tt, g) >= 0) & (zeta(tt, g) <= 1))


def test_derivatives_match_live_mpmath_off_grid():
    """zeta and its derivatives at negative t, g = 0 and g on the switch, vs mpmath."""
    for t, g in [(-2.5, 0.5), (-0.3, 0.0), (1.7, 3.0)]:
        refs = [float(r) for r in zeta_derivatives_mpmath(t, g, (0, 1, 2, 3, 4), dps=35)]
        assert abs(zeta(t, g) - refs[0]) <= ZETA_RTOL * refs[0]
        for k, fn in enumerate((zeta_t, zeta_tt, zeta_ttt), start=1):
            # float(ref) is rounded to nearest: add half an ulp to the mixed bound
            assert mixed_error(fn(t, g), refs[k], refs[k + 1], t) <= DERIVATIVE_TOL + EPS / 2


def test_continuity_across_branch_switch():
    """theory.zeta switches from the Gauss-Legendre form to 1 - 8 T(h, c) at g = 1/2 and at
    |t| / sqrt(1 + 2g^2) = 1/2; the two forms agree to roundoff on both sides of the switch."""
    t = np.concatenate([np.linspace(-8.0, 8.0, 161), np.logspace(-8, 2, 41)])
    below = np.nextafter(0.5, 0.0)
    for g in (0.49, 0.499, below):
        # zeta >= zeta(0, 0.49) = 0.21 here, so 1 - 8T is within ZETA_RTOL as well
        c2, c = math.sqrt(1 + 2 * g * g), 1 / math.sqrt(1 + 4 * g * g)
        owen = 1.0 - 8.0 * owens_t(math.sqrt(2) * t / c2, c)
        np.testing.assert_allclose(zeta(t, g), owen, rtol=2 * ZETA_RTOL, atol=0)
    # one ulp in g moves zeta by <= |dzeta/dg| (0.5 - below), with
    # |dzeta/dg| = |E[2 Z erf(t + gZ) erf'(t + gZ)]| <= 2 (2/sqrt(pi)) E|Z| = 1.8
    np.testing.assert_allclose(zeta(t, below), zeta(t, 0.5), rtol=2 * ZETA_RTOL,
                               atol=1.8 * (0.5 - below))
    for g in (1e-6, 0.1, 0.3, 0.49):
        c2 = math.sqrt(1 + 2 * g * g)
        edge = 0.5 * c2  # |t| / c2 = 1/2
        inner, outer = edge * (1 - 4 * EPS), edge * (1 + 4 * EPS)
        assert inner / c2 < 0.5 <= outer / c2  # really on the two sides of the switch
        # the points differ by 8 eps relative, moving zeta by <= |t zeta_t| 8 eps (1 + 1e-10)
        slope = abs(edge * zeta_t(edge, g)) * 8 * EPS * (1 + 1e-10)
        assert abs(zeta(inner, g) - zeta(outer, g)) <= 2 * ZETA_RTOL * zeta(edge, g) + slope


def test_vectorisation_and_scalars():
    t = np.array([-0.3, 0.0, 3.0])[:, None]
    g = np.array([0.0, 0.1, 0.5, 4.0])  # both branches of zeta in one call
    for fn in (zeta, zeta_t, zeta_tt, zeta_ttt):
        out = fn(t, g)
        assert out.shape == (3, 4) and out.dtype == np.float64
        scalar = fn(1.25, 0.7)
        assert np.ndim(scalar) == 0 and isinstance(scalar, float)
        # elementwise, bit for bit: each point's Gauss-Legendre sum is taken alone, in one order
        single = np.array([[fn(ti, gi) for gi in g] for ti in t[:, 0]])
        assert np.array_equal(out, single)
        assert fn([[1.0, 2.0]], 0.3).shape == (1, 2)


def test_a_point_does_not_depend_on_the_points_evaluated_with_it(rng):
    # The Gauss-Legendre branch (g < 1/2, |w| < 1/2) on batches of every size from 1 to 40 and at every offset:
    # BLAS's matrix-vector product summed a row in an order that depended on the batch (it failed this test).
    w, g = rng.uniform(-0.5, 0.5, 400), rng.uniform(0.0, 0.5, 400)
    whole = zeta_of_ratio(w, g)
    for size in range(1, 41):
        for lo in range(0, 400, size):
            assert np.array_equal(zeta_of_ratio(w[lo:lo + size], g[lo:lo + size]), whole[lo:lo + size]), (size, lo)


def test_zeta_at_zero_and_its_second_derivative_match_mpmath():
    # zeta(0, g) = E[erf(g Z)^2] and zeta''(0, g) = 2 E[erf'(gZ)^2 + erf(gZ) erf''(gZ)], by 30-digit
    # quadrature of the expectations, over g from 1e-3 to 1e2: the dedicated closed forms of the
    # oracle risk and of the noise term.
    from theory.zeta import zeta_at_zero, zeta_tt_at_zero

    mpmath.mp.dps = 30
    for g in (1e-3, 0.1, 0.5, 1 / math.sqrt(2), 1.0, 3.0, 100.0):
        gm = mpmath.mpf(g)
        z0 = mpmath.quad(lambda z: mpmath.erf(gm * z) ** 2 * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])
        d1 = lambda x: 2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-x * x)
        z2 = mpmath.quad(lambda z: 2 * (d1(gm * z) ** 2 - 2 * gm * z * d1(gm * z) * mpmath.erf(gm * z))
                         * mpmath.npdf(z), [-mpmath.inf, 0, mpmath.inf])
        # a few ulps of the arctan / rational closed forms, relative
        assert abs(float(zeta_at_zero(g)) - float(z0)) <= 8 * np.finfo(float).eps * float(z0), g
        assert abs(float(zeta_tt_at_zero(g)) - float(z2)) <= 8 * np.finfo(float).eps * float(z2), g


def test_zeta_t_derivatives_are_the_three_functions_bit_for_bit():
    """zeta_t_derivatives evaluates erf(t/c1) and each exp once: the same floats as zeta_t, zeta_tt, zeta_ttt
    (t from 0 to 1e3 and far out, both signs, g from 0 to 1e6, broadcast against each other, scalars)."""
    t = np.concatenate([-np.logspace(-8, 3, 23), [0.0, -0.0], np.logspace(-8, 3, 23), [50.0, -1e200, np.inf]])
    g = np.concatenate([[0.0], np.logspace(-8, 6, 17)])
    for args in ((t[:, None], g[None, :]), (t, 0.7), (1.3, g), (0.4, 0.25)):
        got = zeta_t_derivatives(*args)
        for value, f in zip(got, (zeta_t, zeta_tt, zeta_ttt)):
            want = f(*args)
            assert np.array_equal(value, want, equal_nan=True) and np.shape(value) == np.shape(want)
