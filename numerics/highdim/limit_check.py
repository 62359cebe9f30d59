"""The finite-d drift of one run extrapolated to d = infinity at lambda = lambda_bar / s, the independent
route to the closed-form limit ``theory.highdim.limit_drift`` (docs/math/highdim.md#the-limit-in-closed-form).

At fixed lambda_bar, c, B the drift of one run on M converges like 1/d (its O(1/s) terms enter squared:
docs/math/highdim.md#the-limit-d-to-infinity-at-lambda-bar-over-s), so G(d) = G_inf + a/d + b/d^2 + O(1/d^3).
Through three decades d_1 < d_2 < d_3 the fit of (G_inf, a, b) is exact; its error, O(1/d^3), is estimated
by its distance from the two-point Richardson extrapolation (10 G(d_3) - G(d_2)) / 9 through the last two
(error O(b/d^2)), which bounds it with a factor ~d / (b's scale) to spare. The finite-d drift carries a
numerical floor: the fast mode's Jacobian by central differences (step 1e-6) of entries ~ d has a relative
rounding ~ 1e-16 / 1e-6 = 1e-10, which reaches G through s^2 Var(theta); the fit's weights (sum of their
moduli 1.3 for d = 1e5, 1e6, 1e7) and the quadrature (1e-13) add less than a factor 2: ``FLOOR`` = 2e-10
relative to max(1, |G|).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory import Problem
from theory.parameters import PAPER_GAMMA, PAPER_L

from .per_run import per_run_drift_on_m

__all__ = ["FLOOR", "LimitExtrapolation", "extrapolate_in_d", "extrapolated_per_run_drift"]

FLOOR = 2e-10
DECADES = (10**5, 10**6, 10**7)


@dataclasses.dataclass(frozen=True)
class LimitExtrapolation:
    """``limit`` (the fitted d -> infinity value), ``error`` (its estimate, elementwise, including the
    numerical floor), ``values`` (len(ds), ...) at ``ds``."""

    limit: np.ndarray
    error: np.ndarray
    values: np.ndarray
    ds: tuple


def extrapolate_in_d(values, ds=DECADES) -> LimitExtrapolation:
    """The three-point fit of the module docstring on ``values`` (3, ...) at ``ds`` (three decades)."""
    values, ds = np.asarray(values, dtype=float), tuple(int(d) for d in ds)
    if len(ds) != 3 or values.shape[0] != 3 or ds[2] != 10 * ds[1] or ds[1] != 10 * ds[0]:
        raise ValueError(f"ds={ds!r} is not allowed: three successive decades, one row of values each")
    inv = 1.0 / np.array(ds, dtype=float)
    fit = np.linalg.solve(np.vander(inv, 3, increasing=True), values.reshape(3, -1))[0].reshape(values.shape[1:])
    richardson = (10.0 * values[2] - values[1]) / 9.0
    error = np.abs(richardson - fit) + FLOOR * np.maximum(1.0, np.abs(fit))
    return LimitExtrapolation(fit, error, values, ds)


def extrapolated_per_run_drift(kappa, nu, *, lam_bar, c, batch_size=1, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0,
                               ds=DECADES) -> LimitExtrapolation:
    """The (kappa, nu) components of ``per_run_drift`` at (kappa, nu) on M, lambda = lam_bar / sqrt(d / 2), step
    c/d, at the three decades ``ds``, extrapolated (module docstring). Arguments checked by the routes."""
    rows = [per_run_drift_on_m(Problem(d=d, L=L, gamma=gamma, eps=eps, lam=lam_bar / np.sqrt(d / 2.0)), (kappa, nu),
                               c=c, batch_size=batch_size) for d in ds]
    return extrapolate_in_d(rows, ds)
