"""A bound on the float64 error of the closed-form population risk (``theory.risk``; paper Theorem 1).

The closed form R = eps^2 + gamma^2 - 2 E1 + E2 + N (``theory.risk`` module docstring) is a sum
of 13 terms coefficient * f(argument), f one of erf, erf', erf'', zeta, zeta', zeta''. Bound
each term by |coefficient| * sup|f|, with |erf| <= 1, |erf'| <= D1 = 2/sqrt(pi),
|erf''| <= D2 = 2 sqrt(2/(pi e)) (at x = 1/sqrt 2), 0 <= zeta <= 1, |zeta'| <= 2 D1/c2,
|zeta''| <= (2/c2)(D1^2/c1 + D2/c2), and zeta''(0, lambda) = 8/(pi (1 + 2 lambda^2) sqrt(1 + 4 lambda^2))
exactly; call S the sum of these bounds (``risk_term_scale``). Each term goes through at most 32
roundings along its longest chain (a generous count: ~6 from the coefficient product, ~2 from
evaluating f, |x f'(x)| <= ~1.1 sup|f| times the ~7 of its argument, and the 13-term sum), and
zeta is evaluated with relative error at most ``theory.zeta.ZETA_MAX_RELATIVE_ERROR``, so

    |R_float64 - R| <= (32 eps + ZETA_MAX_RELATIVE_ERROR) S        (``population_risk_roundoff``).

Used by the tests and by the claims of ``slr verify`` alike, wherever a closed-form value is
compared with another route.
"""

from __future__ import annotations

import numpy as np

from .parameters import OVERLAP_NAMES, Overlaps
from .zeta import ZETA_MAX_RELATIVE_ERROR

__all__ = ["RISK_ROUNDINGS", "risk_term_scale", "population_risk_roundoff"]

RISK_ROUNDINGS = 32
_EPS = np.finfo(float).eps
_D1 = 2.0 / np.sqrt(np.pi)
_D2 = 2.0 * np.sqrt(2.0 / (np.pi * np.e))


def risk_term_scale(problem, overlaps):
    """S >= sum of |terms| of the closed form (module docstring). ``problem``: a ``Problem``;
    ``overlaps``: ``Overlaps`` or a mapping of the five names (array values broadcast; only
    their absolute values enter, so infeasible values such as all ones give an upper bound)."""
    values = overlaps.as_dict() if isinstance(overlaps, Overlaps) else overlaps
    d, L, gamma, eps, lam = (np.asarray(x, dtype=float) for x in
                             (problem.d, problem.L, problem.gamma, problem.eps, problem.lam))
    kappa, nu, theta, eta, rho = (np.abs(np.asarray(values[x], dtype=float)) for x in OVERLAP_NAMES)
    s, g2 = np.sqrt(d / 2), gamma * gamma
    c2 = np.sqrt(1 + 2 * lam * lam * g2)
    c1 = np.sqrt(1 + 4 * lam * lam * g2) * c2
    z1, z2 = 2 * _D1 / c2, (2 / c2) * (_D1 * _D1 / c1 + _D2 / c2)
    z2_zero = 8 / (np.pi * (1 + 2 * lam * lam) * np.sqrt(1 + 4 * lam * lam))
    C = 2 * lam / np.sqrt(np.pi * (1 + 2 * lam * lam))
    e1 = g2 * nu + lam * g2 * s * eta * theta * _D1 / c2 + lam**2 * g2**2 * eta * rho * _D2 / c2**2
    e2 = (s * s * theta * theta + g2) + 2 * lam * g2 * s * theta * rho * z1 + lam**2 * g2**2 * rho**2 * z2
    n = ((L - 1) * (1 + lam**2 * rho**2 * z2_zero) + (L - 1) * (L - 2) * C * C * rho**2
         + 2 * (L - 1) * C * rho * (s * theta + lam * g2 * rho * _D1 / c2))
    return eps * eps + g2 + 2 * e1 + e2 + n


def population_risk_roundoff(problem, overlaps):
    """Bound (32 eps + ZETA_MAX_RELATIVE_ERROR) S on |population_risk computed - exact| (module
    docstring); broadcasts like ``risk_term_scale``."""
    return (RISK_ROUNDINGS * _EPS + ZETA_MAX_RELATIVE_ERROR) * risk_term_scale(problem, overlaps)
