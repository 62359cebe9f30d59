"""Baseline risks of single-location regression (docs/math/baselines.md#best-linear-predictor; paper Proposition 3, Theorem 1).

- Null predictor T = 0: risk E[Y^2] = eps^2 + gamma^2.
- Best linear predictor of Y from the flattened sequence, J uniform (paper Prop 3): the tokens
  are uncorrelated across positions (E[X_l X_m^T] = 0, l != m: whichever token is informative,
  the other is centred and independent of it), E[X_l X_l^T] = (s^2 k* k*^T + (gamma^2 + L - 1) I)/L
  and E[Y X_l] = gamma^2 v* / L, so the optimum is beta_l = gamma^2 v* / (gamma^2 + L - 1) and

      R_lin = eps^2 + gamma^2 - gamma^4 / (gamma^2 + L - 1),

  for every d (an intercept does not help: E[Y] = 0 and the means lie along k* ⟂ v*).
  With J fixed, beta_J = v* reaches eps^2.
- Oracle attention (k, v) = (k*, v*) (Theorem 1, ``theory.risk.oracle_risk``) at the lambda that
  minimises it, found on a log-lambda grid and refined by ``scipy.optimize.minimize_scalar``, and
  at Corollary 2's prescribed lambda(d, L) = (L d)^(-1/4).
All exact at finite d. Monte-Carlo siblings: ``numerics.montecarlo.ols.ols_risk_mc`` (linear),
``numerics.montecarlo.population_risk.population_risk_mc`` (attention), ``numerics.montecarlo.bayes_risk.bayes_risk_mc`` (Bayes).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy  # scipy.optimize loads on first use (scipy's lazy submodules)

from .parameters import Task
from .risk import oracle_risk, risk_from_arrays

__all__ = ["null_risk", "linear_risk", "linear_risk_fixed_location", "prescribed_lambda",
           "oracle_risk_prescribed", "OracleOptimum", "oracle_best_lambda",
           "attention_linear_crossover", "linear_predictor_risk"]

# log-lambda search interval: lambda in [1e-8, 1e3] covers the optimum for d up to ~1e14.
_LOG_LAM_RANGE = (math.log(1e-8), math.log(1e3))
_GRID = 441          # grid step ~0.058 in log lambda
_XATOL = 1e-10       # minimize_scalar tolerance in log lambda


def null_risk(problem: Task):
    """Risk of T = 0: E[Y^2] = eps^2 + gamma^2 (docs/math/task.md#facts-about-the-task). Broadcasts over array fields."""
    return np.asarray(problem.eps, dtype=float) ** 2 + np.asarray(problem.gamma, dtype=float) ** 2


def linear_risk(problem: Task):
    """Best linear predictor, J uniform (paper Prop 3): eps^2 + gamma^2 - gamma^4/(gamma^2 + L - 1).

    Independent of d and lambda; tends to the null risk as L grows. Broadcasts over array fields.
    """
    g2 = np.asarray(problem.gamma, dtype=float) ** 2
    L = np.asarray(problem.L, dtype=float)
    return np.asarray(problem.eps, dtype=float) ** 2 + g2 - g2 * g2 / (g2 + L - 1.0)


def linear_risk_fixed_location(problem: Task):
    """Best linear predictor when J is fixed (docs/math/baselines.md#best-linear-predictor): beta_J = v* gives eps^2 exactly."""
    return np.asarray(problem.eps, dtype=float) ** 2 + 0.0 * np.asarray(problem.gamma, dtype=float)


def prescribed_lambda(d, L):
    """Corollary 2's example schedule lambda(d, L) = (L d)^(-1/4): lambda sqrt(d) -> inf and
    lambda sqrt(L) -> 0 whenever L = o(d)."""
    return (np.asarray(L, dtype=float) * np.asarray(d, dtype=float)) ** -0.25


def oracle_risk_prescribed(problem: Task):
    """Oracle risk R(k*, v*) at lambda = (L d)^(-1/4) (a ``Problem``'s own lam is not used)."""
    return oracle_risk(problem.task.with_lam(prescribed_lambda(problem.d, problem.L)))


@dataclasses.dataclass(frozen=True)
class OracleOptimum:
    """Minimum over lambda of the oracle risk: lambda*, R(k*, v*) at lambda*, and diagnostics.

    ``interior`` is True when the grid minimum is not at an end of the search interval and the
    refined risk is below the risk at both ends; ``nfev`` counts the refinement's evaluations.
    """

    lam: float
    risk: float
    interior: bool
    nfev: int


def _oracle_excess(d, L, gamma, log_lam):
    # eps does not move the minimiser; eps = 0 keeps the whole float64 range for the excess.
    return risk_from_arrays(d, L, gamma, 0.0, np.exp(log_lam), 1.0, 1.0, 0.0, 0.0, 0.0)


def _best(d, L, gamma):
    """(log lambda*, excess R - eps^2 at lambda*, interior, nfev) for real d, L, gamma."""
    grid = np.linspace(*_LOG_LAM_RANGE, _GRID)
    values = _oracle_excess(d, L, gamma, grid)
    i = int(np.argmin(values))
    if i in (0, _GRID - 1):
        raise ValueError(f"the oracle risk at d={d:g}, L={L:g}, gamma={gamma:g} has no interior "
                         f"minimum for lambda in [1e-8, 1e3] (grid minimum at lambda={np.exp(grid[i]):.3g})")
    res = scipy.optimize.minimize_scalar(lambda x: float(_oracle_excess(d, L, gamma, x)), method="bounded",
                          bounds=(grid[i - 1], grid[i + 1]), options={"xatol": _XATOL})
    if not res.success:
        raise ValueError(f"minimize_scalar failed for the oracle risk at d={d:g}, L={L:g}: {res.message}")
    if float(res.fun) <= values[i]:
        log_lam, best = float(res.x), float(res.fun)
    else:
        log_lam, best = float(grid[i]), float(values[i])
    return log_lam, best, bool(best < values[0] and best < values[-1]), int(res.nfev)


def oracle_best_lambda(problem: Task) -> OracleOptimum:
    """lambda* = argmin_lambda R(k*, v*; lambda) and the minimum (Theorem 1 risk, finite d).

    Scalar ``problem``: a ``Task`` (a ``Problem``'s lam is not used). A grid of 441 points in log lambda over
    [1e-8, 1e3] locates the global minimum; ``minimize_scalar`` (bounded, on log lambda) refines
    it inside the neighbouring grid cells. Raises ValueError if the grid minimum is at an end.
    """
    for name in ("d", "L", "gamma", "eps"):
        if np.ndim(getattr(problem, name)) != 0:
            raise ValueError(f"problem.{name}={getattr(problem, name)!r} is not allowed: "
                             "oracle_best_lambda takes scalar problem fields only")
    eps = float(problem.eps)
    log_lam, best, interior, nfev = _best(float(problem.d), float(problem.L), float(problem.gamma))
    return OracleOptimum(lam=math.exp(log_lam), risk=eps * eps + best, interior=interior, nfev=nfev)


def attention_linear_crossover(L: int, gamma: float, d_range=(2.0, 1e12)) -> float:
    """Smallest d (real) beyond which the oracle at its best lambda beats the best linear predictor.

    Solves min_lambda R(k*, v*) = R_lin (eps^2 cancels) by brentq on log d, with d treated as a
    real number in the closed forms. Assumes a single crossing (checked by the tests on a grid).
    Raises ValueError when there is no sign change over ``d_range``.
    """
    if L < 2:
        raise ValueError(f"L={L!r} is not allowed: with one token the linear predictor already has "
                         "the Bayes risk eps^2, so there is no crossover (need L >= 2)")
    lin = float(linear_risk(Task(d=1, L=L, gamma=gamma)))  # d does not enter (Proposition 3)

    def gap(log_d):
        return _best(math.exp(log_d), float(L), float(gamma))[1] - lin

    lo, hi = (math.log(x) for x in d_range)
    g_lo, g_hi = gap(lo), gap(hi)
    if not (g_lo > 0 > g_hi):
        raise ValueError(f"no crossover for L={L}, gamma={gamma} over d in {d_range}: the gap "
                         f"oracle - linear is {g_lo:.3g} at the lower and {g_hi:.3g} at the upper end")
    return math.exp(scipy.optimize.brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12))


def linear_predictor_risk(problem: Task, coef, k_star, v_star, J=None) -> float:
    """Risk E[(Y - sum_l <beta_l, X_l>)^2] of any linear predictor, coef = (beta_l) of shape (L, d).

    From the second moments (module docstring): with J uniform,
    R = eps^2 + gamma^2 - (2 gamma^2 / L) sum_l <beta_l, v*> + sum_l beta_l^T M beta_l,
    M = (s^2 k* k*^T + (gamma^2 + L - 1) I) / L; with J = j fixed (0-based), the informative term
    is 2 gamma^2 <beta_j, v*> and M is s^2 k* k*^T + gamma^2 I at l = j, I elsewhere.
    Exact at finite d; minimised by Prop 3's coefficients (``linear_risk``).
    """
    L, gamma, eps = int(problem.L), float(problem.gamma), float(problem.eps)
    coef, k_star, v_star = (np.asarray(x, dtype=float) for x in (coef, k_star, v_star))
    d = k_star.size
    if coef.shape != (L, d):
        raise ValueError(f"coef has shape {coef.shape}: it must have shape (L, d) = ({L}, {d})")
    s2, g2 = d / 2.0, gamma * gamma
    along_k, along_v, sq = coef @ k_star, coef @ v_star, np.sum(coef * coef, axis=1)
    if J is None:
        quad = np.sum(s2 * along_k**2 + (g2 + L - 1.0) * sq) / L
        cross = g2 * np.sum(along_v) / L
    else:
        if not (isinstance(J, (int, np.integer)) and 0 <= J < L):
            raise ValueError(f"J={J!r} is not allowed: J must be None or an int in {{0, ..., {L - 1}}}")
        quad = np.sum(sq) + s2 * along_k[J] ** 2 + (g2 - 1.0) * sq[J]
        cross = g2 * along_v[J]
    return float(eps * eps + g2 - 2.0 * cross + quad)
