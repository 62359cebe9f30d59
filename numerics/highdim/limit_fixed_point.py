"""The aligned fixed point of the d -> infinity slow ODE on M at lambda = lambda_bar / s
(docs/math/highdim.md#the-fixed-point-of-the-limit).

The limit drift G_infinity = (G_kappa, G_nu) (``theory.highdim.limit_drift``) has G_kappa =
-2 (1 - kappa^2) g' h with h = g (gamma^2 + V) - gamma^2 nu, and G_nu is a quadratic in nu at fixed kappa
(V is linear in nu). So the aligned fixed point is either on the boundary kappa = 1 (where h < 0: kappa
is pulled to 1), or interior with h = 0. Both are found by one-dimensional brackets: nu*(kappa) the root
of G_nu(kappa, .) in (0, 1) (G_nu(kappa, 0) = 2 gamma^2 g > 0 for kappa > 0), then kappa* the root of
h(kappa, nu*(kappa)) in (0, kappa_max), kappa_max the largest kappa with c g(kappa)^2 < 2 (the fast mode's
step limit). Stability on M: the eigenvalues of the 2 x 2 Jacobian (central differences of the closed
form); c g^2 < 2 holds by construction.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.optimize import brentq
from scipy.special import erfinv

from theory.checks import check_integer, check_positive_real
from theory.highdim import limit_drift
from theory.parameters import PAPER_GAMMA, PAPER_L

from .differences import central_jacobian

__all__ = ["LimitFixedPoint", "limit_fixed_point"]

# the brackets' tolerance: far below the 1/d remainder of any finite-d comparison (>= 1e-9 at d <= 1e7)
_XTOL = 1e-14
# central differences of the closed form: truncation h^2 |G'''| ~ 1e-12, rounding 1e-16 / h ~ 1e-10
_JAC_STEP = 1e-6


@dataclasses.dataclass(frozen=True)
class LimitFixedPoint:
    """The aligned fixed point (``kappa``, ``nu``) of G_infinity on M at step c/d, batch ``batch_size``;
    ``boundary``: kappa = 1 (k = k*); ``eigenvalues`` (2,) of dG_infinity/d(kappa, nu) (one-sided at the
    boundary, where the kappa-direction's rate is 4 g' h); ``theta_variance`` = s^2 Var(theta);
    ``fast_contraction`` = c g^2 (< 2)."""

    c: float
    batch_size: int
    kappa: float
    nu: float
    boundary: bool
    eigenvalues: np.ndarray
    theta_variance: float
    fast_contraction: float

    @property
    def stable(self) -> bool:
        return bool(np.all(self.eigenvalues.real < 0))


def limit_fixed_point(c, *, lam_bar, batch_size=1, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0) -> LimitFixedPoint:
    """The aligned fixed point of the module docstring (c > 0, lam_bar > 0, batch_size >= 1, gamma > 0,
    eps >= 0: ValueError naming a bad one). RuntimeError if G_nu(kappa, 1) > 0 (no root in nu: the limit
    drift pushes nu past 1) or h does not change sign (no aligned fixed point)."""
    c, lam_bar = check_positive_real("c", c), check_positive_real("lam_bar", lam_bar)
    B = check_integer("batch_size", batch_size, minimum=1)
    kw = dict(lam_bar=lam_bar, c=c, batch_size=B, L=L, gamma=gamma, eps=eps)
    limit_drift(0.0, 0.0, **kw)   # validates the remaining arguments
    k_max = min(1.0, float(erfinv(min(1.0, np.sqrt(2.0 / c)) * (1.0 - 1e-12))) / lam_bar)

    def nu_star(kappa):
        g_nu = lambda nu: limit_drift(kappa, nu, **kw).drift[1]   # noqa: E731
        if g_nu(1.0) > 0:
            raise RuntimeError(f"G_nu(kappa={kappa}, nu=1) > 0 at c={c}: no fixed point with nu <= 1")
        return brentq(g_nu, 0.0, 1.0, xtol=_XTOL)

    def h(kappa):
        r = limit_drift(kappa, nu_star(kappa), **kw)
        return r.gate * (gamma**2 + r.theta_variance) - gamma**2 * r.nu

    boundary = k_max == 1.0 and h(1.0) < 0
    if boundary:
        kappa = 1.0
    else:
        if not h(_XTOL) < 0 < h(k_max):
            raise RuntimeError(f"no aligned fixed point at c={c}: h does not change sign on (0, {k_max:.6g}]")
        kappa = brentq(h, _XTOL, k_max, xtol=_XTOL)
    nu = nu_star(kappa)
    r = limit_drift(kappa, nu, **kw)
    if boundary:   # one-sided: d G_kappa / d kappa = 4 g' h at kappa = 1, G_kappa = 0 along kappa = 1
        dg = 2.0 * lam_bar / np.sqrt(np.pi) * np.exp(-lam_bar**2)
        d_nu = (limit_drift(1.0, nu + _JAC_STEP, **kw).drift[1] - limit_drift(1.0, nu - _JAC_STEP, **kw).drift[1])
        eig = np.array([4.0 * dg * h(1.0), d_nu / (2 * _JAC_STEP)])
    else:
        J = central_jacobian(lambda y: limit_drift(y[0], y[1], **kw).drift, (kappa, nu), _JAC_STEP)
        eig = np.linalg.eigvals(J)
    return LimitFixedPoint(c, B, float(kappa), float(nu), bool(boundary), eig[np.argsort(eig.real)],
                           r.theta_variance, r.fast_contraction)
