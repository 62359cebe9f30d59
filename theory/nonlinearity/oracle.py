"""The oracle (k, v) = (k*, v*) for every member, and its best lambda (docs/math/nonlinearities.md#the-oracle).

At the oracle, a = <X, k*> and b = <X, v*> are independent for every token (kappa = nu = 1,
theta = eta = rho = 0), b = y on the informative token, and the excess risk is a sum of
non-negative terms (no cancellation, relative accuracy even when it is 1e-100):

    element-wise:  R - eps^2 = gamma^2 E[(1 - sigma(lambda (s + gamma Z)))^2] + (L-1) E[sigma(lambda Z)^2],
    softmax:       R - eps^2 = E[((1 - w_1) y - sum_{l>=2} w_l b_l)^2]  (Laplace route, softmax_quad).

The element-wise form is paper Theorem 1's oracle risk for erf (``theory.risk.oracle_risk``).
``oracle_best_lambda_sigma`` minimises it over log lambda in a range (a grid, then bounded Brent).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy  # scipy.optimize loads on first use (scipy's lazy submodules)

from theory.parameters import Problem, Task
from theory.quad_result import QuadResult

from .elementwise_quad import QUAD_ORDERS
from .family import nonlinearity
from .gauss import TokenLaw, panel_rule, z_breaks
from .softmax_quad import oracle_excess_softmax

__all__ = ["oracle_excess_sigma", "OracleOptimumSigma", "oracle_best_lambda_sigma"]

_EPS = np.finfo(float).eps


def _mean_f(member, lam, law, f, n):
    extra = (np.asarray(member.breakpoints, dtype=float) / lam - law.mu_a) / law.sd_a
    breaks = np.unique(z_breaks(extra[None, :] if extra.size else np.empty((1, 0)))[0])
    z, w = panel_rule(breaks, n)
    return float(w @ f(lam * (law.mu_a + law.sd_a * z)))


def _token_laws(d, gamma):
    """(informative, noise) laws of (a, b) = (<X, k*>, <X, v*>) at the oracle."""
    return (TokenLaw([math.sqrt(d / 2.0), 0.0], np.diag([gamma * gamma, 1.0])),
            TokenLaw([0.0, 0.0], np.eye(2)))


def _elementwise_excess(member, L, gamma, lam, laws, with_error):
    """The element-wise excess of the module docstring at one lambda, laws from ``_token_laws``."""
    informative, noise = laws
    vals = [gamma * gamma * _mean_f(member, lam, informative, lambda u: member.one_minus_sigma(u) ** 2, n)
            + (L - 1) * _mean_f(member, lam, noise, lambda u: member.sigma(u) ** 2, n)
            for n in (QUAD_ORDERS if with_error else QUAD_ORDERS[-1:])]
    abserr = abs(vals[-1] - vals[0]) + 64 * _EPS * abs(vals[-1]) if with_error else math.nan
    return QuadResult(value=vals[-1], abserr=abserr)


def oracle_excess_sigma(problem: Problem, sigma="erf", with_error: bool = True) -> QuadResult:
    """R(k*, v*) - eps^2 for member ``sigma`` by quadrature (module docstring); scalar fields.
    Error estimate: |Q20 - Q10| (element-wise) or the Laplace route's, plus 64 ulps of the value
    (without ``with_error``: the finest rule alone, the same value, abserr nan, for searches)."""
    member = nonlinearity(sigma)
    d, L, gamma, lam = float(problem.d), float(problem.L), float(problem.gamma), float(problem.lam)
    if member.kind == "softmax":
        value, err = oracle_excess_softmax(problem, with_error)
        return QuadResult(value=float(value), abserr=float(err))
    return _elementwise_excess(member, L, gamma, lam, _token_laws(d, gamma), with_error)


@dataclasses.dataclass(frozen=True)
class OracleOptimumSigma:
    """lam: the minimiser; excess: R - eps^2 there (QuadResult); interior: whether lam is inside
    the bracket (else the minimum is at its edge: the excess decreases beyond it); nfev."""

    lam: float
    excess: QuadResult
    interior: bool
    nfev: int


def oracle_best_lambda_sigma(task: Task, sigma="erf", lam_range=(1e-3, 1e2),
                             n_grid: int = 9, xatol: float = 1e-2) -> OracleOptimumSigma:
    """argmin over lambda in ``lam_range`` of the oracle excess of ``sigma`` at ``task`` (a ``Problem``'s lam is not used):
    log-spaced grid of n_grid points, then bounded Brent on log(excess) between the grid minimum's
    neighbours (``xatol`` in log lambda; the excess is flat there). The search evaluates the
    softmax rule without its error estimate; the returned excess carries it."""
    lo, hi = (math.log(x) for x in lam_range)
    cache = {}
    member = nonlinearity(sigma)
    if member.kind == "softmax":
        excess = lambda lam: oracle_excess_sigma(task.with_lam(lam), member, with_error=False)
    else:  # the task's fields checked once, the token laws built once: the same numbers as oracle_excess_sigma
        L, gamma, laws = float(task.L), float(task.gamma), _token_laws(float(task.d), float(task.gamma))
        excess = lambda lam: _elementwise_excess(member, L, gamma, lam, laws, with_error=False)

    def f(log_lam):
        if log_lam not in cache:
            cache[log_lam] = excess(math.exp(log_lam))
        return math.log(max(cache[log_lam].value, 1e-300))

    grid = np.linspace(lo, hi, n_grid)
    vals = [f(x) for x in grid]
    i = int(np.argmin(vals))
    if 0 < i < n_grid - 1:
        scipy.optimize.minimize_scalar(f, bounds=(grid[i - 1], grid[i + 1]), method="bounded",
                        options={"xatol": xatol})
        best = min(cache, key=f)
    else:
        best = grid[i]
    excess = oracle_excess_sigma(task.with_lam(math.exp(best)), sigma)
    return OracleOptimumSigma(math.exp(best), excess, 0 < i < n_grid - 1, len(cache) + 1)
