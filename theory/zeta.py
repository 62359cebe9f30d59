"""The function zeta(t, g) = E[erf(t + g Z)^2], Z ~ N(0, 1), and its t-derivatives (docs/math/risk.md#derivatives-of-zeta).

Closed form (derived here; proved symbolically in ``tests/test_zeta_symbolic.py``, against mpmath in ``tests/test_zeta.py``):
write erf(x) = 2 Phi(sqrt(2) x) - 1 and h = sqrt(2) t / sqrt(1 + 2g^2). Then
E[Phi(sqrt2 (t + gZ))^2] is the bivariate normal probability Phi_2(h, h; r) with correlation
r = 2g^2 / (1 + 2g^2), and Owen's identity Phi_2(h, h; r) = Phi(h) - 2 T(h, sqrt((1-r)/(1+r)))
gives

    zeta(t, g) = 1 - 8 T(h, c),    c = 1 / sqrt(1 + 4 g^2),

with T Owen's T function. Since 1 - 8 T(h, 1) = erf(t / sqrt(1 + 2g^2))^2 exactly, the same
quantity is also

    zeta(t, g) = erf(t / sqrt(1 + 2g^2))^2 + (4/pi) int_c^1 exp(-h^2 (1 + x^2)/2) / (1 + x^2) dx,

a sum of two non-negative terms. The first form loses relative accuracy when zeta is small
(t and g both small: 8T is close to 1); the second does not, and for g < 1/2 its integral runs
over [c, 1] with c >= 1/sqrt(2), where a fixed Gauss-Legendre rule is exact to roundoff.
``zeta`` uses the second form for g < 1/2 and |t| / sqrt(1 + 2g^2) < 1/2, the first otherwise
(there zeta >= min(zeta(0, 1/2), erf(1/2)^2) > 0.2, so 1 - 8T loses at most a few bits).

Accuracy, against mpmath at 40 digits (``scripts/zeta_accuracy.py``; |t| in {0} and [1e-8, 1e3],
g in [1e-4, 1e2], log-spaced): maximum relative error 3.2 eps on that grid and 6.1 eps over 12,000
random points near the branch switches; the rounding-error bound is 13 eps (ZETA_MAX_RELATIVE_ERROR).
The t-derivatives are within 3 eps of mpmath in the measure |err| / (|f| + |t f'|) (the |t f'|
term is the unavoidable sensitivity of exp(-t^2/c2^2) to the rounding of t).

Derivatives in t (docs/math/risk.md#derivatives-of-zeta), with c1 = sqrt((1 + 4g^2)(1 + 2g^2)), c2 = sqrt(1 + 2g^2):
    zeta'(t)   = (2/c2) erf(t/c1) erf'(t/c2)
    zeta''(t)  = (2/c2) [erf'(t/c1) erf'(t/c2)/c1 + erf(t/c1) erf''(t/c2)/c2]
    zeta'''(t) = (2/c2) [erf''(t/c1) erf'(t/c2)/c1^2 + 2 erf'(t/c1) erf''(t/c2)/(c1 c2)
                         + erf(t/c1) erf'''(t/c2)/c2^2]
Siblings: ``theory.zeta_reference.zeta_mpmath`` (arbitrary precision) and
``theory.zeta_reference.zeta_quad`` (scipy quadrature of the defining expectation).
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf, owens_t

from .special import erf_derivatives, erf_prime, erf_second, erf_third

__all__ = ["zeta", "zeta_of_ratio", "zeta_t", "zeta_tt", "zeta_ttt", "zeta_t_derivatives", "zeta_at_zero",
           "zeta_tt_at_zero",
           "ZETA_MAX_RELATIVE_ERROR"]

# A rounding-error bound (13 eps, worst near |t|/c2 = 1/2, g -> 0: rounding of h and c, owens_t's
# absolute error <= 0.4 ulp, the final subtraction); measured by scripts/zeta_accuracy.py:
# <= 3.2 eps on the 40-digit grid, <= 6.1 eps over 12,000 random points. Tests check both.
ZETA_MAX_RELATIVE_ERROR = 13 * np.finfo(float).eps

_G_SWITCH = 0.5
_W_SWITCH = 0.5
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)


def _c1_c2(g):
    g2 = g * g
    c2 = np.sqrt(1.0 + 2.0 * g2)
    return np.sqrt(1.0 + 4.0 * g2) * c2, c2


def zeta(t, g):
    """zeta(t, g) = E[erf(t + g Z)^2], Z ~ N(0, 1), for real t and g >= 0 (docs/math/risk.md#the-function-zeta).

    Even in t; zeta(+-inf, g) = 1; zeta(0, g) = (2/pi) arcsin(2g^2 / (1 + 2g^2)); zeta(t, 0) = erf(t)^2.
    Closed form through Owen's T, see the module docstring for the formula and its accuracy.
    """
    t, g = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(g, dtype=float))
    return zeta_of_ratio(t / np.hypot(1.0, np.sqrt(2.0) * g), g)


def zeta_of_ratio(w, g):
    """zeta(t, g) as a function of w = t / sqrt(1 + 2g^2) and g (same formula and accuracy).

    Takes w rather than t so that callers with t = lambda s kappa beyond the float64 range
    (lambda near 1e308) pass the finite ratio; g = +inf gives the limit zeta = 1. No
    intermediate overflows: sqrt(1 + 4g^2) is formed by ``hypot``.
    """
    w, g = np.broadcast_arrays(np.asarray(w, dtype=float), np.asarray(g, dtype=float))
    root = np.hypot(1.0, 2.0 * g)
    # 1 - 8T loses relative accuracy only where zeta is small; zeta >= erf(w)^2 and
    # zeta >= zeta(0, g), so outside this set zeta > 0.2 and the direct form is accurate.
    small = (g < _G_SWITCH) & (np.abs(w) < _W_SWITCH)
    if w.ndim == 0:  # one point: its branch without the masks (the same operations)
        one = w.reshape(1), g.reshape(1), root.reshape(1)
        return _near_zero(*one)[0] if small else _owen(*one)[0]
    out = np.empty(w.shape)
    large = ~small
    out[large] = _owen(w[large], g[large], root[large])
    if np.any(small):
        out[small] = _near_zero(w[small], g[small], root[small])
    return out


def _owen(w, g, root):
    """zeta = 1 - 8 T(sqrt(2) w, 1 / sqrt(1 + 4g^2)) (module docstring), on 1-d arrays; root = sqrt(1 + 4g^2)."""
    return 1.0 - 8.0 * owens_t(np.sqrt(2.0) * w, 1.0 / root)


def _near_zero(w, g, root):
    """zeta = erf(w)^2 + (4/pi) int_c^1 exp(-h^2 (1 + x^2)/2) / (1 + x^2) dx by 20-point Gauss-Legendre
    (module docstring), on 1-d arrays of points with g < 1/2 and |w| < 1/2; root = sqrt(1 + 4g^2)."""
    hs = np.sqrt(2.0) * w
    # 1 - c without cancellation: the interval is only ~2 g^2 long for small g.
    half = 2.0 * g * g / (root * (root + 1.0))
    x2 = np.square(1.0 - half[:, None] * (1.0 - _GL_NODES))  # nodes on [c, 1], squared
    integrand = np.exp(-0.5 * (hs * hs)[:, None] * (1.0 + x2)) / (1.0 + x2)
    # einsum, not matmul: BLAS's gemv sums a row in an order that depends on the number of rows, so a point's
    # value would depend on the points evaluated with it; einsum sums each row alone, in one fixed order
    integral = half * np.einsum("ij,j->i", integrand, _GL_WEIGHTS)
    return erf(w) ** 2 + (4.0 / np.pi) * integral


def zeta_at_zero(g):
    """zeta(0, g) = (2/pi) arcsin(2g^2 / (1 + 2g^2)) = (2/pi) arctan(2g^2 / sqrt(1 + 4g^2)) (docs/math/risk.md#the-function-zeta).

    The arctan form is well conditioned for every g >= 0 (the arcsin form is not near g -> inf).
    This is the noise-token leakage E[erf(g Z)^2] of the risk.
    """
    g = np.asarray(g, dtype=float)
    # 2g^2 / sqrt(1 + 4g^2) = g / hypot(1/(2g), 1): no overflow for any finite g; g = 0 gives
    # 1/(2g) = inf and the exact value 0.
    with np.errstate(divide="ignore", over="ignore"):
        x = g / np.hypot(0.5 / g, 1.0)
    return (2.0 / np.pi) * np.arctan(x)


def zeta_tt_at_zero(g):
    """zeta''(0, g) = (2/c2) erf'(0)^2 / c1 = 8 / (pi (1 + 2g^2) sqrt(1 + 4g^2))."""
    g = np.asarray(g, dtype=float)
    c2 = np.hypot(1.0, np.sqrt(2.0) * g)   # successive divisions: underflow, never overflow
    return 8.0 / np.pi / c2 / c2 / np.hypot(1.0, 2.0 * g)


def _arguments(t, g):
    """(c1, c2, u, w) with u = t/c1, w = t/c2 (module docstring), as float arrays."""
    t, g = np.asarray(t, dtype=float), np.asarray(g, dtype=float)
    c1, c2 = _c1_c2(g)
    return c1, c2, t / c1, t / c2


def _t(c2, eu, pw):
    """zeta_t from erf(u) and erf'(w)."""
    return (2.0 / c2) * eu * pw


def zeta_t(t, g):
    """d/dt zeta(t, g) = (2/c2) erf(t/c1) erf'(t/c2) (docs/math/risk.md#derivatives-of-zeta)."""
    c1, c2, u, w = _arguments(t, g)
    return _t(c2, erf(u), erf_prime(w))


def _tt(c1, c2, eu, pu, pw, sw):
    """zeta_tt from erf(u), erf'(u), erf'(w), erf''(w), u = t/c1, w = t/c2 (module docstring)."""
    return (2.0 / c2) * (pu * pw / c1 + eu * sw / c2)


def _ttt(c1, c2, eu, pu, su, pw, sw, tw):
    """zeta_ttt from erf(u) and the first two derivatives of erf at u, the first three at w."""
    return (2.0 / c2) * (su * pw / c1**2 + 2.0 * pu * sw / (c1 * c2) + eu * tw / c2**2)


def zeta_tt(t, g):
    """d^2/dt^2 zeta(t, g), the derivative of ``zeta_t`` (formula in the module docstring)."""
    c1, c2, u, w = _arguments(t, g)
    return _tt(c1, c2, erf(u), erf_prime(u), erf_prime(w), erf_second(w))


def zeta_ttt(t, g):
    """d^3/dt^3 zeta(t, g), the derivative of ``zeta_tt`` (formula in the module docstring)."""
    c1, c2, u, w = _arguments(t, g)
    return _ttt(c1, c2, erf(u), erf_prime(u), erf_second(u), erf_prime(w), erf_second(w), erf_third(w))


def zeta_t_derivatives(t, g):
    """(zeta_t, zeta_tt, zeta_ttt)(t, g) with erf(t/c1) and each exp evaluated once: the values of the three
    functions, operation for operation (the gradient of the closed form needs all three at one point)."""
    c1, c2, u, w = _arguments(t, g)
    eu = erf(u)
    pu, su, _ = erf_derivatives(u)
    pw, sw, tw = erf_derivatives(w)
    return _t(c2, eu, pw), _tt(c1, c2, eu, pu, pw, sw), _ttt(c1, c2, eu, pu, su, pw, sw, tw)
