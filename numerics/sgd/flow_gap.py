"""Online SGD against the population gradient flow (paper Section 5): the mean SGD overlaps at a
fixed time t = alpha n approach the flow's as alpha -> 0, at rate O(alpha) (``sgd_flow_gap``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.parameters import OVERLAP_NAMES, Overlaps, Problem

from ..dynamics.flow import overlap_flow
from ..dynamics.ode import OdeOptions
from .experiment import SGDExperiment, run_sgd_sweep

__all__ = ["SGD_FLOW_ODE", "FlowGap", "sgd_flow_gap"]

# The flow that SGD is compared with (``sgd_flow_gap``, the sgd_vs_flow figure): an explicit
# high-order method, its error (rtol 1e-11) far below the O(alpha) gaps measured.
SGD_FLOW_ODE = OdeOptions(method="DOP853", rtol=1e-11, atol=1e-13)


@dataclasses.dataclass(frozen=True)
class FlowGap:
    """Mean SGD overlaps at time t_end versus the gradient flow, for several alphas.

    gap[i] = |E[overlaps_SGD(t_end)] - overlaps_flow(t_end)| (Euclidean over the five overlaps),
    estimated without the noise bias (|mean - flow|^2 - trace(cov)/n), with delta-method stderr.
    rate, rate_stderr: exponent p of the weighted fit log gap = log a + p log alpha + c alpha
    (c alpha absorbs the next order, gap = a alpha (1 + c alpha + ...)); chi2 with dof = n_alpha - 3.
    """

    alphas: np.ndarray
    t_end: float
    flow: np.ndarray
    sgd_mean: np.ndarray
    sgd_stderr: np.ndarray
    gap: np.ndarray
    gap_stderr: np.ndarray
    rate: float
    rate_stderr: float
    curvature: float
    chi2: float
    dof: int
    n_runs: int


def _fit_rate(alphas, gap, gap_stderr):
    y = np.log(gap)
    w = (gap / gap_stderr) ** 2  # 1 / var(log gap)
    X = np.stack([np.ones_like(alphas), np.log(alphas), alphas], axis=1)
    cov = np.linalg.inv(X.T @ (w[:, None] * X))
    beta = cov @ (X.T @ (w * y))
    chi2 = float(np.sum(w * (y - X @ beta) ** 2))
    return beta, cov, chi2


def sgd_flow_gap(config: SGDExperiment, alphas, t_end: float, *, executor=None, runs_per_task=None,
                 progress=False) -> FlowGap:
    """SGD of ``config`` (fixed start ``config.init``, constant lambda = lam0) run to time t_end
    with each step size in ``alphas`` (n = round(t_end / alpha) steps, config.n_runs runs each),
    compared with the population gradient flow from the same start.

    Expected: gap = O(alpha). Online SGD is a Markov chain x_{n+1} = x_n + alpha b(x_n)
    + alpha xi_n + O(alpha^2) with fresh zero-mean noise xi_n; the normalisation and the Ito-type
    terms contribute O(alpha^2) per step, Var(x_n) = O(alpha) over n = t/alpha steps, so
    E b(x_n) = b(E x_n) + O(alpha) and the mean follows the flow up to O(alpha) (weak order 1).
    The noise of the mean, sqrt(alpha / n_runs), vanishes with alpha too.
    """
    if not isinstance(config.init, Overlaps):
        raise ValueError(f"config.init={config.init!r} is not allowed: sgd_flow_gap needs a fixed "
                         "scalar Overlaps start")
    if config.schedule_rate != 0:
        raise ValueError(f"config.schedule_rate={config.schedule_rate!r} is not allowed: the flow "
                         "comparison uses a constant lambda (schedule_rate=0)")
    alphas = np.asarray(alphas, dtype=float)
    if alphas.ndim != 1 or alphas.size < 4 or not np.all(alphas > 0):
        raise ValueError(f"alphas={alphas!r} is not allowed: need at least 4 positive step sizes")
    steps = [max(1, int(round(t_end / a))) for a in alphas]
    alphas = t_end / np.asarray(steps, dtype=float)  # exactly t_end = alpha n
    base = np.random.SeedSequence(config.seed).entropy
    configs = [dataclasses.replace(config, alpha=float(a), n_steps=n, log_every=n, test_size=0,
                                   seed=(base, i))
               for i, (a, n) in enumerate(zip(alphas, steps))]
    results = run_sgd_sweep(configs, executor=executor, runs_per_task=runs_per_task, progress=progress)
    problem = Problem(d=config.d, L=config.L, gamma=config.gamma, eps=config.eps, lam=config.lam0)
    flow = overlap_flow(problem, config.init, t_end=t_end, ode=SGD_FLOW_ODE).y[:, -1]
    means, stderrs, gaps, gap_se = [], [], [], []
    for r in results:
        x = np.stack([getattr(r.trajectory, k)[-1] for k in OVERLAP_NAMES])  # (5, n_runs)
        n = x.shape[1]
        diff = x.mean(axis=1) - flow
        cov = np.cov(x) / n
        g2 = float(diff @ diff - np.trace(cov))
        if g2 <= 0:
            raise ValueError(f"alpha={r.config.alpha:g}: the gap is not resolved by {n} runs "
                             "(more runs or larger alphas needed)")
        means.append(x.mean(axis=1))
        stderrs.append(np.sqrt(np.diag(cov)))
        gaps.append(math.sqrt(g2))
        gap_se.append(math.sqrt(float(diff @ cov @ diff)) / math.sqrt(g2))
    gaps, gap_se = np.array(gaps), np.array(gap_se)
    beta, cov, chi2 = _fit_rate(alphas, gaps, gap_se)
    return FlowGap(alphas=alphas, t_end=float(t_end), flow=flow, sgd_mean=np.array(means),
                   sgd_stderr=np.array(stderrs), gap=gaps, gap_stderr=gap_se, rate=float(beta[1]),
                   rate_stderr=float(math.sqrt(cov[1, 1])), curvature=float(beta[2]), chi2=chi2,
                   dof=len(alphas) - 3, n_runs=config.n_runs)
