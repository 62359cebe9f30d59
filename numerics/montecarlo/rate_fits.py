"""Fitted rates of Monte-Carlo errors, with intervals from the estimates' standard errors
(docs/math/highdim.md#the-rate-as-a-test).

``power_law_fit``: the signed errors e_ij (point i, component j) of several estimates against a prediction,
with standard errors se_ij, fitted by weighted least squares to e_ij = a_j (x_i / x0)^(-p), one amplitude per
component and a shared exponent p. For fixed p the a_j are linear, so chi^2(p) = sum w (e - a_j x^-p)^2,
w = 1 / se^2, is profiled over p on a grid; the interval is {p : chi^2(p) <= chi^2_min + q}, q the upper
``rate`` quantile of chi^2 with one degree of freedom (the profile-likelihood interval of one parameter
with Gaussian errors: it misses the true p with probability ~ ``rate`` when the model holds). The same q
rejects "no decay" (p = 0) when chi^2(0) - chi^2_min > q.

``log_slope_fit``: positive estimates y_i with standard errors se_i fitted to b x_i^q by weighted least squares
of log y on log x (se(log y) = se / y, the delta method): (q, its standard error). ``weighted_slope``: the
weighted least-squares slope of y on x and its standard error, which both use.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from .statistics import chi2_isf

__all__ = ["PowerLawFit", "power_law_fit", "log_slope_fit", "weighted_slope"]

_GRID = np.linspace(-0.5, 3.0, 3501)


@dataclasses.dataclass(frozen=True)
class PowerLawFit:
    """``p`` the best exponent, [``low``, ``high``] its interval at false-coverage ``rate``, ``chi2_min``
    on ``dof`` degrees of freedom, ``chi2_zero`` = chi^2 at p = 0 (no decay), ``q`` the chi^2 threshold,
    ``amplitudes`` a_j at p."""

    p: float
    low: float
    high: float
    chi2_min: float
    dof: int
    chi2_zero: float
    q: float
    amplitudes: tuple
    rate: float

    @property
    def rejects_no_decay(self) -> bool:
        return self.chi2_zero - self.chi2_min > self.q


def _profile(x, e, w):
    """(chi^2 (n_grid,), amplitudes (n_grid, n_comp)) on the grid of exponents."""
    xp = x[None, :, None] ** -_GRID[:, None, None]                 # (n_grid, n, 1)
    amp = np.sum(w * xp * e, axis=1) / np.sum(w * xp ** 2, axis=1)  # (n_grid, m)
    chi = np.sum(w * (e - amp[:, None, :] * xp) ** 2, axis=(1, 2))
    return chi, amp


def power_law_fit(x, e, se, *, x0=1.0, rate=0.3173) -> PowerLawFit:
    """Fit e (n, m) with standard errors se (n, m) to a_j (x / x0)^(-p) (module docstring); the default
    ``rate`` gives the 68% interval (chi^2 <= min + 1). ValueError for fewer points than m + 2 (no
    degree of freedom left), non-positive x or se, or an interval that reaches the grid's end (-0.5, 3)."""
    x = np.asarray(x, dtype=float) / x0
    e, se = np.atleast_2d(np.asarray(e, dtype=float)), np.atleast_2d(np.asarray(se, dtype=float))
    if e.shape != se.shape or e.shape[0] != x.size:
        raise ValueError(f"e, se must have shape (len(x), m) = ({x.size}, m), got {e.shape} and {se.shape}")
    if x.size < 3 or not (np.all(x > 0) and np.all(se > 0)):
        raise ValueError(f"x={x!r}, se={se!r}: need >= 3 points with x > 0 and se > 0")
    if not 0 < rate < 1:
        raise ValueError(f"rate={rate!r} is not allowed: the false-coverage rate must be in (0, 1)")
    chi, amp = _profile(x, e, 1.0 / se ** 2)
    q = chi2_isf(rate, 1)
    k = int(np.argmin(chi))
    inside = _GRID[chi <= chi[k] + q]
    if inside.min() <= _GRID[0] or inside.max() >= _GRID[-1]:
        raise ValueError(f"the interval of p reaches the end of the searched range [{_GRID[0]}, {_GRID[-1]}]: the "
                         "errors do not determine p (too small against their standard errors, or no power law)")
    zero = float(chi[np.argmin(np.abs(_GRID))])
    return PowerLawFit(float(_GRID[k]), float(inside.min()), float(inside.max()), float(chi[k]),
                       e.size - e.shape[1] - 1, zero, q, tuple(float(a) for a in amp[k]), rate)


def weighted_slope(x, y, se):
    """(b, standard error of b): weighted least squares of y on a + b x, weights 1 / se^2, for independent
    y_i. b = w . y with w_i = (1 / se_i^2)(x_i - xbar_w) / sum_j (x_j - xbar_w)^2 / se_j^2 (xbar_w the weighted
    mean of x), so its standard error is |w se| = (sum (x_i - xbar_w)^2 / se_i^2)^(-1/2)."""
    x, y, se = (np.asarray(v, dtype=float) for v in (x, y, se))
    if not (x.shape == y.shape == se.shape and x.ndim == 1 and x.size >= 2):
        raise ValueError(f"x, y, se: need three 1-d arrays of one length >= 2, got shapes "
                         f"{x.shape}, {y.shape}, {se.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y)) and np.all(se > 0) and np.ptp(x) > 0):
        raise ValueError(f"x={x!r}, y={y!r}, se={se!r}: need finite x and y, se > 0 and >= 2 distinct x")
    wt = 1.0 / se ** 2
    xc = x - np.sum(wt * x) / np.sum(wt)
    w = wt * xc / np.sum(wt * xc ** 2)
    return float(w @ y), float(np.sqrt(np.sum((w * se) ** 2)))


def log_slope_fit(x, y, se):
    """(q, standard error of q): ``weighted_slope`` of log y on log x, se(log y) = se / y (delta method)."""
    x, y, se = (np.asarray(v, dtype=float) for v in (x, y, se))
    if x.size < 2 or not (np.all(x > 0) and np.all(y > 0) and np.all(se > 0)):
        raise ValueError(f"x={x!r}, y={y!r}, se={se!r}: need >= 2 points, all positive")
    return weighted_slope(np.log(x), np.log(y), se / y)
