"""Corollary 2 of the paper (asymptotic Bayes optimality of the oracle) as checkable statements.

Oracle excess risk (paper Theorem 1, ``theory.risk.oracle_risk`` with eps = 0):
    E(d) = R(k*, v*) - eps^2 = gamma^2 G + (L - 1) zeta(0, lambda),
    G = E[(1 - erf(lambda (s + gamma Z)))^2],  zeta(0, lambda) = (2/pi) arcsin(2 lambda^2 / (1 + 2 lambda^2)).
Corollary 2: d -> inf, L = o(d), lambda sqrt(d) -> inf, lambda sqrt(L) -> 0 give E -> 0.

Rate (derived here). With x = 2 lambda^2 / (1 + 2 lambda^2), x <= arcsin x <= x / sqrt(1 - x^2) gives
    1 - 2 lambda^2 <= zeta(0, lambda) / ((4/pi) lambda^2) <= (1 - 4 lambda^4)^(-1/2),
and splitting on {s + gamma Z >= (1 - t) s} for any t in (0, 1),
    0 <= G <= 4 Phi(-t s / gamma) + erfc((1 - t) lambda s)^2   (minimised over t on a grid).
So E = (4/pi) r(d) e^{eps(d)} with r = (L - 1) lambda^2 and |eps(d)| <= delta(d) (``log_deviation_bound``).
For lambda = (L d)^(-1/4): r = (L - 1) / sqrt(L d): slope -1/2 in d for fixed L, -1/4 + 1/(2(L-1))
for L = sqrt(d), and -1/2 + O(1/log d) for L = log d. If y_i = a + x_i + eps_i with |eps_i| <= delta,
the least-squares slope of y on x is 1 + sum (x_i - xbar) eps_i / sum (x_i - xbar)^2, within
delta * leverage of 1, leverage = sum |x_i - xbar| / sum (x_i - xbar)^2 (``SlopeFit``).

Counter-sequences (E does not tend to 0), with lower bounds valid at every d (derived here):
- lambda fixed: E >= (L - 1) zeta(0, lambda) (G >= 0); E -> that constant.
- lambda = c / sqrt(d): by Jensen G >= erfc(lambda s / sqrt(1 + 2 lambda^2 gamma^2))^2 >= erfc(c / sqrt 2)^2,
  so E >= gamma^2 erfc(c / sqrt 2)^2.
- L = c d, any lambda: E >= min_lambda [gamma^2 erfc(lambda s)^2 + (L - 1)(4/pi) lambda^2 / (1 + 2 lambda^2)]
  (``oracle_excess_lower_bound``), which tends to min_mu [gamma^2 erfc(mu)^2 + (8 c / pi) mu^2] > 0.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np
import scipy  # scipy.optimize loads on first use (scipy's lazy submodules)
from scipy.special import erfc, ndtr

from .baselines import prescribed_lambda
from .risk import risk_from_arrays

_SPLITS = np.linspace(0.02, 0.5, 25)

__all__ = ["oracle_excess", "leading_rate", "log_deviation_bound", "SlopeFit", "fit_slope",
           "RateSequence", "SEQUENCES", "RateFit", "corollary2_rate", "oracle_excess_lower_bound", "proportional_limit"]


def oracle_excess(d, L, gamma, lam):
    """E = R(k*, v*) - eps^2 from the closed form (real d, L allowed; broadcasts)."""
    return risk_from_arrays(d, L, gamma, 0.0, lam, 1.0, 1.0, 0.0, 0.0, 0.0)


def leading_rate(d, L, lam):
    """r = (L - 1) lambda^2; E ~ (4/pi) r when lambda sqrt(d) -> inf and lambda -> 0."""
    return (np.asarray(L, dtype=float) - 1.0) * np.square(np.asarray(lam, dtype=float))


def log_deviation_bound(d, L, gamma, lam):
    """delta(d) >= |log(E / ((4/pi) r))| from the bounds in the module docstring (needs 2 lambda^2 < 1)."""
    d, L, lam = (np.asarray(x, dtype=float) for x in (d, L, lam))
    if np.any(2.0 * lam * lam >= 1.0) or np.any(L < 2):
        raise ValueError(f"lam={lam!r}, L={L!r} are not allowed: the bound needs 2 lambda^2 < 1 and L >= 2")
    s = np.sqrt(d / 2.0)
    lam2 = lam * lam
    t = _SPLITS.reshape((-1,) + (1,) * np.ndim(s * lam))
    gate = gamma**2 * np.min(4.0 * ndtr(-t * s / gamma) + erfc((1.0 - t) * lam * s) ** 2, axis=0)
    upper = np.log(1.0 / np.sqrt(1.0 - 4.0 * lam2 * lam2) + gate / ((4.0 / np.pi) * (L - 1.0) * lam2))
    return np.maximum(-np.log1p(-2.0 * lam2), upper)


@dataclasses.dataclass(frozen=True)
class SlopeFit:
    """Least-squares line y = intercept + slope x, with leverage = sum|x - xbar| / sum (x - xbar)^2:
    perturbing each y_i by at most delta moves the slope by at most delta * leverage."""

    slope: float
    intercept: float
    leverage: float


def fit_slope(x, y) -> SlopeFit:
    """Ordinary least-squares fit of y on x (1-D arrays of equal length >= 2)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"x, y have shapes {x.shape}, {y.shape}: need equal 1-D shapes of length >= 2")
    dx = x - x.mean()
    ss = float(dx @ dx)
    if ss == 0.0:
        raise ValueError("x is constant: the slope is undefined")
    slope = float(dx @ (y - y.mean())) / ss
    return SlopeFit(slope=slope, intercept=float(y.mean() - slope * x.mean()),
                    leverage=float(np.sum(np.abs(dx))) / ss)


@dataclasses.dataclass(frozen=True)
class RateSequence:
    """A Corollary 2 sequence: L(d), its derivative dL/dlog d, lambda = (L d)^(-1/4), exponent in d."""

    name: str
    L_of_d: Callable
    dL_dlogd: Callable
    exponent: float

    def local_slope(self, d):
        """d log r / d log d for r = (L - 1) lambda^2 = (L - 1) / sqrt(L d)."""
        L = self.L_of_d(d)
        return self.dL_dlogd(d) * (1.0 / (L - 1.0) - 0.5 / L) - 0.5


SEQUENCES = {seq.name: seq for seq in (
    RateSequence("L fixed", lambda d: np.full_like(np.asarray(d, dtype=float), 10.0),
                 lambda d: np.zeros_like(np.asarray(d, dtype=float)), -0.5),
    RateSequence("L = log d", lambda d: np.log(np.asarray(d, dtype=float)),
                 lambda d: np.ones_like(np.asarray(d, dtype=float)), -0.5),
    RateSequence("L = sqrt d", lambda d: np.sqrt(np.asarray(d, dtype=float)),
                 lambda d: 0.5 * np.sqrt(np.asarray(d, dtype=float)), -0.25),
)}


@dataclasses.dataclass(frozen=True)
class RateFit:
    """Excess risk along a sequence and its fits (module docstring).

    fit_d: log E on log d; fit_rate: log E on log r (slope 1 within delta_max * fit_rate.leverage);
    fit_d_rate: log r on log d (exactly within [min, max] of local_slopes, the known offset from
    the exponent); delta_max = max of ``log_deviation_bound`` over the points.
    """

    sequence: RateSequence
    d: np.ndarray
    L: np.ndarray
    lam: np.ndarray
    excess: np.ndarray
    rate: np.ndarray
    fit_d: SlopeFit
    fit_rate: SlopeFit
    fit_d_rate: SlopeFit
    local_slopes: np.ndarray
    delta_max: float


def corollary2_rate(name: str, d, gamma: float) -> RateFit:
    """Oracle excess E(d) at lambda = (L d)^(-1/4) along ``SEQUENCES[name]`` and its log-log fits."""
    if name not in SEQUENCES:
        raise ValueError(f"name={name!r} is not allowed: choose one of {sorted(SEQUENCES)}")
    seq = SEQUENCES[name]
    d = np.asarray(d, dtype=float)
    L = seq.L_of_d(d)
    lam = prescribed_lambda(d, L)
    excess, rate = oracle_excess(d, L, gamma, lam), leading_rate(d, L, lam)
    return RateFit(sequence=seq, d=d, L=L, lam=lam, excess=excess, rate=rate,
                   fit_d=fit_slope(np.log(d), np.log(excess)),
                   fit_rate=fit_slope(np.log(rate), np.log(excess)),
                   fit_d_rate=fit_slope(np.log(d), np.log(rate)),
                   local_slopes=seq.local_slope(d),
                   delta_max=float(np.max(log_deviation_bound(d, L, gamma, lam))))


def _lower_bound_objective(log_lam, s, L, gamma):
    lam = math.exp(log_lam)
    return gamma**2 * erfc(lam * s) ** 2 + (L - 1.0) * (4.0 / math.pi) * lam * lam / (1.0 + 2.0 * lam * lam)


def _minimise(fun, lo=math.log(1e-10), hi=math.log(1e3)):
    grid = np.linspace(lo, hi, 521)
    values = np.array([fun(x) for x in grid])
    i = int(np.clip(np.argmin(values), 1, grid.size - 2))
    res = scipy.optimize.minimize_scalar(fun, method="bounded", bounds=(grid[i - 1], grid[i + 1]),
                          options={"xatol": 1e-10})
    if not res.success:
        raise ValueError(f"minimize_scalar failed: {res.message}")
    return min(float(res.fun), float(values.min()))


def oracle_excess_lower_bound(d, L, gamma) -> float:
    """min over lambda of gamma^2 erfc(lambda s)^2 + (L-1)(4/pi) lambda^2/(1 + 2 lambda^2) <= min_lambda E.

    Valid at every finite d (Jensen on G, arcsin x >= x); scalar arguments.
    """
    s = math.sqrt(float(d) / 2.0)
    return _minimise(lambda x: _lower_bound_objective(x, s, float(L), float(gamma)))


def proportional_limit(c, gamma) -> float:
    """lim of the lower bound along L = c d: min_mu gamma^2 erfc(mu)^2 + (8 c / pi) mu^2 (> 0)."""
    return _minimise(lambda x: gamma**2 * erfc(math.exp(x)) ** 2 + (8.0 * c / math.pi) * math.exp(2 * x))
