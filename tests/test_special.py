"""Tests of theory.special (docs/math/risk.md#gaussian-erf-identities): derivatives of erf and the gate correlation C_lambda.

References are computed live with mpmath: mpmath.diff(mpmath.erf) for the derivatives and a
quadrature of the defining expectation E[erf(lam Z) Z] for C_lambda.
"""

import math

import mpmath
import numpy as np
import pytest

from theory.special import erf_derivatives, erf_prime, erf_second, erf_third, gate_correlation

EPS = np.finfo(float).eps
DPS = 30

# |x| <= 26 keeps erf'(x) >= 1e-294, in the normal float64 range (no gradual underflow).
_X_LOG = np.logspace(-8, np.log10(26.0), 25)
X = np.concatenate([-_X_LOG, [0.0], _X_LOG, np.linspace(-3.0, 3.0, 13),
                    [1 / math.sqrt(2), -1 / math.sqrt(2), math.sqrt(1.5), -math.sqrt(1.5)]])


def _erf_derivative_mpmath(x, n):
    # mpmath.diff's error is absolute (~10^-dps against erf ~ 1), while erf^(n)(x) ~ e^{-x^2}:
    # add x^2 / ln(10) digits so that DPS digits survive relative to the result.
    with mpmath.workdps(DPS + math.ceil(x * x / math.log(10))):
        return mpmath.diff(mpmath.erf, mpmath.mpf(float(x)), n)


def _abs_errors(approx, refs):
    with mpmath.workdps(DPS):
        return np.array([float(abs(mpmath.mpf(float(a)) - r)) for a, r in zip(approx, refs)])


@pytest.mark.parametrize("n, fn", [(1, erf_prime), (2, erf_second), (3, erf_third)])
def test_erf_derivatives_match_mpmath_diff(n, fn):
    refs = [_erf_derivative_mpmath(x, n) for x in X]
    err = _abs_errors(fn(X), refs)
    size = np.array([float(abs(r)) for r in refs])
    # erf'(x) = (2/sqrt(pi)) exp(-x*x) with x exact: x*x is rounded by u = eps/2, an absolute
    # error of x^2 eps/2 in the exponent, hence a relative x^2 eps/2 in the result; exp, the
    # rounded constant and the product add at most 2 eps. erf'' = -2x erf' adds one product
    # (eps/2). In erf''' = (4x^2 - 2) erf' the factor has absolute error <= 2x^2 eps +
    # |4x^2 - 2| eps/2 (it vanishes at x^2 = 1/2, so the error is not relative to erf''').
    if n < 3:
        bound = EPS * (X * X / 2 + 2 + (n - 1) / 2) * size
    else:
        bound = EPS * ((X * X / 2 + 3) * size + 2 * X * X * erf_prime(X))
    worst = np.argmax(err - bound)
    assert np.all(err <= bound), (
        f"erf^({n}) at x={X[worst]!r}: error {err[worst]:.3g} > bound {bound[worst]:.3g}")


def test_erf_derivatives_parity_and_underflow():
    x = np.linspace(0.0, 30.0, 61)
    assert np.array_equal(erf_prime(-x), erf_prime(x))
    assert np.array_equal(erf_second(-x), -erf_second(x))
    assert np.array_equal(erf_third(-x), erf_third(x))
    assert erf_prime(40.0) == 0.0 and erf_second(40.0) == 0.0 and erf_third(-40.0) == 0.0
    assert erf_prime(0.0) == 2 / math.sqrt(math.pi)


def _gate_correlation_mpmath(lam):
    """E[erf(lam Z) Z] = int erf(lam z) z phi(z) dz = 2 int_0^inf (the integrand is even in z), split
    at the scales 1 and 1/|lam|."""
    with mpmath.workdps(DPS):
        lam = mpmath.mpf(float(lam))
        norm = 1 / mpmath.sqrt(2 * mpmath.pi)
        steps = sorted({k * s for k in (1, 2, 4, 8, 16) for s in (1, 1 / abs(lam))})
        value, err = mpmath.quad(lambda z: mpmath.erf(lam * z) * z * norm * mpmath.exp(-z * z / 2),
                                 [mpmath.mpf(0), *steps, mpmath.inf], error=True)
        value, err = 2 * value, 2 * err
        # the integrand is O(|lam|) for small lam, O(1) otherwise: require DPS - 5 digits
        assert err <= mpmath.mpf(10) ** (5 - DPS) * abs(value)
        return value


def test_gate_correlation_matches_mpmath_quadrature():
    lam = np.concatenate([np.logspace(-8, 8, 9), [-1e-3, -1.0, -1e3]])
    refs = [_gate_correlation_mpmath(x) for x in lam]
    err = _abs_errors(gate_correlation(lam), refs)
    rel = err / np.array([float(abs(r)) for r in refs])
    # 2 lam / sqrt(pi (1 + 2 lam^2)): lam*lam, +1, *pi (and pi's own rounding), sqrt, 2*lam
    # (exact) and the division: at most 6 roundings of eps/2 propagate (sqrt halves two).
    assert rel.max() <= 3 * EPS, (
        f"max relative error {rel.max():.3g} at lam={lam[np.argmax(rel)]!r}")


def test_gate_correlation_odd_and_limits():
    lam = np.logspace(-6, 6, 25)
    assert np.array_equal(gate_correlation(-lam), -gate_correlation(lam))
    assert gate_correlation(0.0) == 0.0
    # C_lambda -> E[sign(Z) Z] = sqrt(2/pi) as lam -> inf; C_lambda ~ 2 lam / sqrt(pi) at 0.
    assert gate_correlation(1e150) == pytest.approx(math.sqrt(2 / math.pi), rel=2 * EPS)
    assert gate_correlation(1e-300) == pytest.approx(2e-300 / math.sqrt(math.pi), rel=2 * EPS)


def test_vectorisation():
    x = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    for fn in (erf_prime, erf_second, erf_third, gate_correlation):
        assert fn(x).shape == (3, 4)
        assert np.ndim(fn(0.5)) == 0
        assert fn(x)[1, 2] == fn(x[1, 2])


def test_erf_derivatives_are_the_three_functions_bit_for_bit():
    """erf_derivatives(x) shares one exp: the same floats as erf_prime, erf_second, erf_third, on the grid, far
    out (clipped), at +-inf and nan, and broadcast over a 2-D array."""
    x = np.concatenate([X, [-1e300, -50.0, -27.5, 27.5, 50.0, 1e300, -np.inf, np.inf, np.nan, -0.0]])
    for arg in (x, x.reshape(2, -1), 0.7, -3):
        got = erf_derivatives(arg)
        for value, f in zip(got, (erf_prime, erf_second, erf_third)):
            assert np.array_equal(value, f(arg), equal_nan=True) and np.shape(value) == np.shape(f(arg))
