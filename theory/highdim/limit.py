"""The d -> infinity limit of the drift of one run on M at lambda = lambda_bar / s
(docs/math/highdim.md#the-limit-in-closed-form).

At lambda = lambda_bar / s, step alpha = c/d, batch B, on M = {theta = eta = rho = 0}, with
g = erf(lambda_bar kappa) (the informative token's gate, whose spread lambda_bar gamma z / s vanishes),
g' = (2 lambda_bar / sqrt(pi)) exp(-lambda_bar^2 kappa^2), and the fast overlap's scaled spread
V = s^2 Var(theta):

    R0   = gamma^2 (g^2 - 2 g nu + 1) + eps^2                      (the risk's limit on M)
    V    = c R0 / (B (2 - c g^2))                                  (alpha |mu_f| = c g^2 < 2)
    G_kappa = -2 (1 - kappa^2) g' [g (gamma^2 + V) - gamma^2 nu]
    G_nu    = 2 gamma^2 g (1 - nu^2) + 2 g^2 V nu
              - (nu / 2) [2 c (1 - 1/B) g^4 V + (4 c / B) (1/2 + gamma^2) g^2 (R0 + g^2 V)]

and mu_f / d -> -g^2. The noise tokens' gates are O(1/s), so their contributions are O(1/d): L drops
out. c = 0 gives the limit of the population flow on M. The finite-d sibling:
``numerics.highdim.per_run_drift`` at lambda = lambda_bar / sqrt(d / 2), which converges to this like 1/d.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..checks import as_real_array, check_integer, check_nonnegative_real, check_positive_real, short_repr
from ..parameters import PAPER_GAMMA, PAPER_L

__all__ = ["LimitDrift", "LimitFastModeUnstable", "limit_drift"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class LimitFastModeUnstable(RuntimeError):
    """alpha |mu_f| = c g^2 >= 2: one step overshoots the fast mode and its spread V is unbounded."""


@dataclasses.dataclass(frozen=True)
class LimitDrift:
    """The limit drift of one run at (``kappa``, ``nu``) on M (module docstring): ``drift`` = (G_kappa, G_nu);
    ``population`` = the limit of the population flow (kappa, nu) components (G at c = 0); ``gate`` = g;
    ``risk`` = R0; ``theta_variance`` = V = s^2 Var(theta); ``fast_rate`` = lim mu_f / d = -g^2;
    ``fast_contraction`` = lim alpha |mu_f| = c g^2."""

    kappa: float
    nu: float
    drift: np.ndarray
    population: np.ndarray
    gate: float
    risk: float
    theta_variance: float
    fast_rate: float
    fast_contraction: float


def _check_unit(name, value):
    arr = as_real_array(name, value)
    if arr.ndim != 0 or not abs(float(arr)) <= 1.0:
        raise ValueError(f"{name}={short_repr(value)} is not allowed: {name} must be a real number in [-1, 1]")
    return float(arr)


def limit_drift(kappa, nu, *, lam_bar, c, batch_size=1, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0) -> LimitDrift:
    """G_infinity of the module docstring at (kappa, nu) in [-1, 1]^2 on M, for lambda = ``lam_bar`` / s
    (lam_bar > 0), step c/d with c >= 0 (c = 0: the population flow's limit), batch size B >= 1, L >= 1
    tokens (it drops out), gamma > 0, eps >= 0. ValueError naming a bad argument; LimitFastModeUnstable
    where c g^2 >= 2 (docs/math/highdim.md#the-drift-of-one-run: the step overshoots the fast mode)."""
    kappa, nu = _check_unit("kappa", kappa), _check_unit("nu", nu)
    lam_bar, gamma = check_positive_real("lam_bar", lam_bar), check_positive_real("gamma", gamma)
    c, eps = check_nonnegative_real("c", c), check_nonnegative_real("eps", eps)
    B = check_integer("batch_size", batch_size, minimum=1)
    check_integer("L", L, minimum=1)
    g2s = gamma * gamma
    g = math.erf(lam_bar * kappa)
    dg = lam_bar * _TWO_OVER_SQRT_PI * math.exp(-(lam_bar * kappa) ** 2)
    risk = g2s * (g * g - 2.0 * g * nu + 1.0) + eps * eps
    contraction = c * g * g
    if contraction >= 2.0:
        raise LimitFastModeUnstable(f"alpha |mu_f| -> c g^2 = {contraction:.4g} >= 2 at (kappa, nu) = "
                                    f"({kappa}, {nu}), c = {c}: the step overshoots the fast mode")
    V = c * risk / (B * (2.0 - contraction))
    g_kappa = -2.0 * (1.0 - kappa * kappa) * dg * (g * (g2s + V) - g2s * nu)
    normalisation = (2.0 * c * (1.0 - 1.0 / B) * g**4 * V
                     + 4.0 * c / B * (0.5 + g2s) * g * g * (risk + g * g * V))
    g_nu = 2.0 * g2s * g * (1.0 - nu * nu) + 2.0 * g * g * V * nu - 0.5 * nu * normalisation
    population = np.array([-2.0 * (1.0 - kappa * kappa) * dg * g2s * (g - nu), 2.0 * g2s * g * (1.0 - nu * nu)])
    return LimitDrift(kappa, nu, np.array([g_kappa, g_nu]), population, g, risk, V, -g * g, contraction)
