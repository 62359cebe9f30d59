"""The paper's online-SGD experiment (SPEC §8, last row), sweeps of it, and SGD versus the flow.

``SGDExperiment`` holds one configuration (defaults: the paper's, from the authors' config
``config_sgd_sphere_schedule``: d = 80, L = 10, gamma = sqrt(1/2), eps = 0.1, batch 5,
lambda_t = 2 / (1 + 1e-4 t), alpha = 1e-3, 200,000 steps, 30 runs with fresh k*, v*, init uniform
on the sphere, test set 1,000, logged every 500 steps). ``run_sgd_experiment`` / ``run_sgd_sweep``
run it on any executor of ``numerics.executors`` with results independent of the executor.
``sgd_flow_gap`` measures how the mean SGD trajectory approaches the population gradient flow
(``numerics.dynamics.flow.overlap_flow``) as alpha -> 0 at fixed time t = alpha n.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time

import numpy as np

from theory.parameters import OVERLAP_NAMES, PAPER_GAMMA, PAPER_L, Overlaps, Problem

from ..executors import RunJob, map_jobs
from ..dynamics.flow import overlap_flow
from ..montecarlo.geometry import vectors_from_overlaps
from ..dynamics.initial import sample_initial_overlaps, sample_initial_vectors
from ..dynamics.ode import OdeOptions
from ..dynamics.schedules import PaperSchedule, ScheduledProblem
from .full import online_sgd_full
from .reduced import online_sgd_reduced
from .trajectory import SGDTrajectory

__all__ = ["SGD_FLOW_ODE", "SGDExperiment", "PAPER_SGD", "SGDExperimentResult", "run_sgd_experiment",
           "run_sgd_sweep", "sgd_runs", "FlowGap", "sgd_flow_gap"]

_Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclasses.dataclass(frozen=True, kw_only=True)
class SGDExperiment:
    """One online-SGD experiment. ``init``: "sphere" (uniform on the sphere, fresh k*, v* per run),
    "manifold" (uniform on M, SPEC §8) or a scalar ``Overlaps`` (every run starts there).
    ``schedule_rate``: lambda_t = lam0 / (1 + rate t); 0 gives a constant lambda = lam0.
    ``simulator``: "reduced" (exact in law, cost independent of d) or "full" (d-dim vectors).
    ``seed``: an int or a tuple of ints (entropy of ``numpy.random.SeedSequence``)."""

    d: int = 80
    L: int = PAPER_L
    gamma: float = PAPER_GAMMA
    eps: float = 0.1
    lam0: float = 2.0
    schedule_rate: float = 1e-4
    alpha: float = 1e-3
    n_steps: int = 200_000
    batch_size: int = 5
    n_runs: int = 30
    test_size: int = 1000
    log_every: int = 500
    init: str | Overlaps = "sphere"
    simulator: str = "reduced"
    seed: int | tuple = 0

    def __post_init__(self):
        self.problem  # validates d, L, gamma, eps and the schedule
        if not (isinstance(self.init, Overlaps) or self.init in ("sphere", "manifold")):
            raise ValueError(f"init={self.init!r} is not allowed: use 'sphere', 'manifold' or a "
                             "scalar Overlaps")
        if isinstance(self.init, Overlaps) and np.ndim(self.init.kappa) != 0:
            raise ValueError(f"init={self.init!r} is not allowed: a fixed start must be scalar")
        if self.simulator not in ("reduced", "full"):
            raise ValueError(f"simulator={self.simulator!r} is not allowed: use 'reduced' or 'full'")
        if not (isinstance(self.n_runs, (int, np.integer)) and self.n_runs >= 1):
            raise ValueError(f"n_runs={self.n_runs!r} is not allowed: must be an integer >= 1")

    @property
    def schedule(self) -> PaperSchedule:
        return PaperSchedule(lam0=self.lam0, rate=self.schedule_rate)

    @property
    def problem(self) -> ScheduledProblem:
        """d, L, gamma, eps and the schedule lambda_t = lam0 / (1 + rate t) of the runs."""
        return ScheduledProblem(d=self.d, L=self.L, gamma=self.gamma, eps=self.eps, lam=self.schedule)


PAPER_SGD = SGDExperiment()

# The flow that SGD is compared with (``sgd_flow_gap``, the sgd_vs_flow figure): an explicit
# high-order method, its error (rtol 1e-11) far below the O(alpha) gaps measured.
SGD_FLOW_ODE = OdeOptions(method="DOP853", rtol=1e-11, atol=1e-13)


def _child(seed: np.random.SeedSequence, i: int) -> np.random.Generator:
    """The i-th child generator of ``seed``, independent of how often seed was spawned before."""
    return np.random.default_rng(np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key + (i,)))


def sgd_runs(config: SGDExperiment, seeds, progress: bool = False) -> SGDTrajectory:
    """The runs of ``config`` with the given per-run SeedSequences (one executor task).

    Run i initialises from child 0 of seeds[i] and trains with child 1, so its numbers depend only
    on its own seed. ``progress``: a tqdm bar of the steps."""
    init_rngs = [_child(s, 0) for s in seeds]
    train_rngs = [_child(s, 1) for s in seeds]
    kw = dict(alpha=config.alpha, n_steps=config.n_steps, batch_size=config.batch_size,
              rng=train_rngs, log_every=config.log_every,
              test_size=config.test_size, progress=progress)
    n, d = len(seeds), config.d
    fixed = isinstance(config.init, Overlaps)
    on_m = config.init == "manifold" if not fixed else False
    if config.simulator == "reduced":
        if fixed:
            start = Overlaps(**{k: np.full(n, float(x)) for k, x in config.init.as_dict().items()})
        else:
            parts = [sample_initial_overlaps(d, 1, g, on_manifold=on_m) for g in init_rngs]
            start = Overlaps(**{k: np.concatenate([getattr(p, k) for p in parts]) for k in OVERLAP_NAMES})
        return online_sgd_reduced(config.problem, start, **kw)
    if fixed:
        vecs = [vectors_from_overlaps(config.init, d, g) for g in init_rngs]
        k, v, k_star, v_star = (np.stack([x[j] for x in vecs]) for j in range(4))
    else:
        vecs = [sample_initial_vectors(d, 1, g, on_manifold=on_m) for g in init_rngs]
        k, v, k_star, v_star = (np.concatenate([x[j] for x in vecs]) for j in range(4))
    return online_sgd_full(config.problem, k, v, k_star, v_star, **kw)


@dataclasses.dataclass(frozen=True)
class SGDExperimentResult:
    """The trajectory of all runs of ``config`` plus wall-clock seconds of the whole sweep."""

    config: SGDExperiment
    trajectory: SGDTrajectory
    seconds: float

    def band(self, quantity: str):
        """Per logged step: (mean, lower, upper) over runs, a 95% normal band for the mean
        (mean +- 1.96 sd / sqrt(n_runs)). quantity: "excess_risk", "test_excess_risk",
        "abs_kappa", "abs_nu", "distance_to_manifold" or an overlap name."""
        tr = self.trajectory
        if quantity in ("abs_kappa", "abs_nu"):
            x = np.abs(getattr(tr, quantity[4:]))
        else:
            x = getattr(tr, quantity)
            if x is None:
                raise ValueError(f"quantity={quantity!r} was not logged (test_size=0)")
        mean = x.mean(axis=1)
        half = _Z95 * x.std(axis=1, ddof=1) / np.sqrt(x.shape[1]) if x.shape[1] > 1 else 0 * mean
        return mean, mean - half, mean + half


def run_sgd_sweep(configs, *, executor=None, runs_per_task=None, progress=False) -> list:
    """Run every configuration (runs chunked as ``numerics.executors.chunk_sizes``); one
    ``SGDExperimentResult`` per config, in order. Numbers do not depend on the executor.
    ``progress``: a tqdm bar of finished tasks, and when running in this process (executor None,
    "serial" or 1) also a bar of the steps of each task."""
    in_process = executor is None or executor == 1 or (isinstance(executor, str) and executor == "serial")
    step_bars = bool(progress and in_process)
    jobs = [RunJob(fn=functools.partial(sgd_runs, c, progress=step_bars), n_runs=c.n_runs,
                   seed=np.random.SeedSequence(c.seed), runs_per_task=runs_per_task) for c in configs]
    t0 = time.perf_counter()
    parts = map_jobs(jobs, executor=executor, progress=progress, desc="SGD tasks")
    seconds = time.perf_counter() - t0
    return [SGDExperimentResult(c, SGDTrajectory.concat_runs(p), seconds) for c, p in zip(configs, parts)]


def run_sgd_experiment(config: SGDExperiment = PAPER_SGD, *, executor=None, runs_per_task=None,
                       progress=False) -> SGDExperimentResult:
    """Run one configuration (default: the paper's) and return its result."""
    return run_sgd_sweep([config], executor=executor, runs_per_task=runs_per_task,
                         progress=progress)[0]


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
