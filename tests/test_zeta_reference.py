"""The reference routes of zeta(t, g) = E[erf(t + g Z)^2] (``theory.zeta_reference``): mpmath
quadrature of the defining expectation (the 40-digit grid tests/data/zeta_reference.csv and live
points) and scipy quadrature ``zeta_quad`` with its error estimate (docs/math/risk.md#derivatives-of-zeta).
"""

import mpmath
import pytest
import sympy as sp

from theory.zeta import zeta
from theory.zeta_reference import QuadResult, zeta_derivatives_mpmath, zeta_mpmath, zeta_quad
from zeta_grid import COLUMNS, REFERENCE, ZETA_RTOL, nearest_rows


def test_reference_file_reproduced_by_independent_rule():
    """A CSV row recomputed live by tanh-sinh (the file uses Gauss-Legendre) at 42 digits.

    The row with the strongest cancellation (odd orders at t = 1e-8, g = 100). Agreement to
    1e-24 relative: the file keeps 25 significant digits (rounding <= 5e-25).
    """
    t, g, ref = REFERENCE
    (i,) = nearest_rows([(1e-8, 100.0)])
    live = zeta_derivatives_mpmath(t[i], g[i], (0, 1, 2, 3, 4), dps=42, method="tanh-sinh")
    for name, value in zip(COLUMNS, live):
        with mpmath.workdps(42):
            stored = mpmath.mpf(ref[name][0][i]) + mpmath.mpf(ref[name][1][i])
            assert abs(stored - value) <= mpmath.mpf("1e-24") * abs(value), name


def test_mpmath_reference_special_values():
    """zeta(0, g) = (2/pi) arcsin(2g^2/(1+2g^2)) and zeta(t, 0) = erf(t)^2, at 35 digits."""
    with mpmath.workdps(40):
        for g in (1e-3, 0.5, 7.0):
            exact = 2 / mpmath.pi * mpmath.asin(2 * mpmath.mpf(g)**2 / (1 + 2 * mpmath.mpf(g)**2))
            assert abs(zeta_mpmath(0.0, g, dps=40) - exact) <= mpmath.mpf("1e-35") * exact
        assert zeta_mpmath(0.3, 0.0) == mpmath.erf(mpmath.mpf(0.3))**2


def test_zeta_quad_agrees_within_its_error_estimate():
    """On the whole grid: |quad - reference| <= abserr and |quad - zeta| <= abserr + ZETA_RTOL zeta
    (QUADPACK's abserr includes its own roundoff estimate, 50 eps times the integral of |f|)."""
    t, g, ref = REFERENCE
    exact = ref["zeta"][0] + ref["zeta"][1]
    closed = zeta(t, g)
    for i in range(t.size):
        result = zeta_quad(t[i], g[i])
        assert isinstance(result, QuadResult) and result.abserr < 1e-13
        assert abs(result.value - exact[i]) <= result.abserr, (t[i], g[i], result)
        assert abs(result.value - closed[i]) <= result.abserr + ZETA_RTOL * closed[i]


def test_reference_integrands_are_derivatives_of_erf_squared():
    """The integrands of zeta_reference are d^n/dx^n erf(x)^2 (n = 0..4), checked by sympy."""
    from theory.zeta_reference import d_erf_squared
    x = sp.Symbol("x", real=True)
    e1 = 2 / sp.sqrt(sp.pi) * sp.exp(-x**2)
    for n in range(5):
        # the difference expands to 0 (sympy.simplify proves it too, ~10x slower)
        assert sp.expand(sp.diff(sp.erf(x)**2, x, n) - d_erf_squared(n, x, sp.erf(x), e1)) == 0


def test_reference_routes_reject_bad_input():
    with pytest.raises(ValueError, match="g=-0.1"):
        zeta_mpmath(1.0, -0.1)
    with pytest.raises(ValueError, match="t=nan"):
        zeta_quad(float("nan"), 1.0)
    with pytest.raises(ValueError, match="order=5"):
        zeta_derivatives_mpmath(1.0, 1.0, (0, 5))
    with pytest.raises(ArithmeticError, match="roundoff error"):
        zeta_quad(1.0, 1.0, epsrel=1.2e-14)  # just above QUADPACK's floor 50 eps: ier = 2
