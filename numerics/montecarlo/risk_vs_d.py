"""Risk against d for every predictor of docs/math/baselines.md#ordering-of-the-risks: the data behind the statistics figure.

Theory curves on a log-spaced grid of d: Bayes risk (quadrature, ``theory.bayes.bayes_risk_quad``,
up to ``d_quad_max``), oracle attention at its best lambda and at lambda = (L d)^(-1/4)
(``theory.baselines``), best linear predictor (paper Prop 3) and null predictor. Monte-Carlo points
(mean, stderr) on a coarser grid: Bayes risk (``numerics.montecarlo.bayes_risk.bayes_risk_mc``, only for
d <= ``bayes_mc_d_max``, NaN beyond) and oracle attention at the best lambda
(``numerics.montecarlo.population_risk.risk_mc_from_vectors``). At the oracle (k, v) = (k*, v*) the span of
k, v, k*, v* is the plane of k* and v*, so two coordinates per token give the exact law of the loss (the span
reduction of ``numerics.montecarlo.population_risk``): half the draws of the generic four. Each Monte-Carlo
point draws from its own child of ``rng`` (``numerics.sgd.trajectory.child_streams``: SFC64 children of its
seed sequence, whose normals the compiled loss draws itself), so the result is reproducible from the seed.
Note: beyond d ~ 20 (gamma^2 = 1/2) the Bayes Monte Carlo misses the rare sequences that carry
the tiny Bayes excess (``numerics.montecarlo.bayes_risk``), so there the quadrature curve is the reference
and the Bayes Monte Carlo is not drawn.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.baselines import linear_risk, null_risk, oracle_best_lambda, prescribed_lambda
from theory.bayes import bayes_risk_quad
from theory.parameters import Task
from theory.risk import oracle_risk

from .bayes_risk import bayes_risk_mc
from .population_risk import risk_mc_from_vectors
from ..sgd.trajectory import child_streams

__all__ = ["RiskVsDSize", "SIZES", "RiskVsD", "risk_vs_d"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RiskVsDSize:
    """Grid sizes and Monte-Carlo sample sizes of ``risk_vs_d``; the Bayes Monte Carlo runs at the
    points d <= ``bayes_mc_d_max`` only (module docstring)."""

    n_curve: int
    n_points: int
    n_bayes_mc: int
    n_oracle_mc: int
    d_quad_max: int
    bayes_mc_d_max: int = 20

    def __post_init__(self):
        if isinstance(self.bayes_mc_d_max, bool) or not isinstance(self.bayes_mc_d_max, (int, np.integer)) \
                or self.bayes_mc_d_max < 2:
            raise ValueError(f"bayes_mc_d_max={self.bayes_mc_d_max!r} is not allowed: need an integer >= 2")


SIZES = {
    "quick": RiskVsDSize(n_curve=10, n_points=4, n_bayes_mc=4_000, n_oracle_mc=4_000, d_quad_max=100),
    "full": RiskVsDSize(n_curve=60, n_points=12, n_bayes_mc=400_000, n_oracle_mc=400_000, d_quad_max=1000),
}


@dataclasses.dataclass(frozen=True)
class RiskVsD:
    """Risks against d (arrays over ``d_curve`` or ``d_points``; NaN where not computed)."""

    L: int
    gamma: float
    eps: float
    d_curve: np.ndarray
    bayes_quad: np.ndarray
    bayes_quad_abserr: np.ndarray
    oracle_best: np.ndarray
    lam_best: np.ndarray
    oracle_prescribed: np.ndarray
    lam_prescribed: np.ndarray
    linear: np.ndarray
    null: np.ndarray
    d_points: np.ndarray
    bayes_mc_mean: np.ndarray
    bayes_mc_stderr: np.ndarray
    oracle_mc_mean: np.ndarray
    oracle_mc_stderr: np.ndarray


# k* = k and v* = v as the first two vectors of an orthonormal frame of their plane (module docstring).
_K_STAR, _V_STAR = np.eye(2)


def _log_grid(d_min, d_max, n):
    return np.unique(np.round(np.logspace(math.log10(d_min), math.log10(d_max), n)).astype(int))


def risk_vs_d(task: Task, rng: np.random.Generator, *, d_max: int = 10**6, size="quick") -> RiskVsD:
    """Compute the curves and points of the module docstring for d from ``task.d`` (scalar, >= 2)
    to ``d_max`` at the task's L, gamma, eps; ``size`` is "quick", "full" or a ``RiskVsDSize``."""
    if not isinstance(task, Task):
        raise ValueError(f"task={task!r} is not allowed: need a theory.Task")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r} is not allowed: rng must be a numpy.random.Generator")
    if isinstance(size, str):
        if size not in SIZES:
            raise ValueError(f"size={size!r} is not allowed: use one of {sorted(SIZES)} or a RiskVsDSize")
        size = SIZES[size]
    d_min = task.d
    if np.ndim(d_min) != 0 or not 2 <= d_min < d_max:
        raise ValueError(f"task.d={d_min!r}, d_max={d_max!r} are not allowed: need 2 <= task.d < d_max")
    base = task.task
    L, gamma, eps = base.L, base.gamma, base.eps
    d_curve = _log_grid(d_min, d_max, size.n_curve)
    n = d_curve.size
    quad, quad_err = np.full(n, np.nan), np.full(n, np.nan)
    best, lam_best = np.empty(n), np.empty(n)
    for i, d in enumerate(d_curve):
        problem = dataclasses.replace(base, d=int(d))
        opt = oracle_best_lambda(problem)
        best[i], lam_best[i] = opt.risk, opt.lam
        if d <= size.d_quad_max:
            q = bayes_risk_quad(problem)
            quad[i], quad_err[i] = q.value, q.abserr
    lam_pre = prescribed_lambda(d_curve, L)
    prescribed = oracle_risk(dataclasses.replace(base, d=d_curve).with_lam(lam_pre))
    d_points = _log_grid(d_min, d_max, size.n_points)
    mc = np.empty((d_points.size, 4))
    children = child_streams(rng, 2 * d_points.size)
    for i, d in enumerate(d_points):
        problem = dataclasses.replace(base, d=int(d))
        if d <= size.bayes_mc_d_max:
            b = bayes_risk_mc(problem, size.n_bayes_mc, children[2 * i])
            mc[i, :2] = b.mean, b.stderr
        else:
            mc[i, :2] = np.nan
        at_best = problem.with_lam(oracle_best_lambda(problem).lam)
        o = risk_mc_from_vectors(at_best, _K_STAR, _V_STAR, _K_STAR, _V_STAR, size.n_oracle_mc,
                                 children[2 * i + 1])
        mc[i, 2:] = o.mean, o.stderr
    return RiskVsD(L=int(L), gamma=float(gamma), eps=float(eps), d_curve=d_curve, bayes_quad=quad,
                   bayes_quad_abserr=quad_err, oracle_best=best, lam_best=lam_best,
                   oracle_prescribed=np.asarray(prescribed, dtype=float), lam_prescribed=lam_pre,
                   linear=np.full(n, float(linear_risk(base))), null=np.full(n, float(null_risk(base))),
                   d_points=d_points, bayes_mc_mean=mc[:, 0], bayes_mc_stderr=mc[:, 1],
                   oracle_mc_mean=mc[:, 2], oracle_mc_stderr=mc[:, 3])
