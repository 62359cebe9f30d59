"""The paper's online-SGD experiment (docs/math/dynamics.md#the-papers-experiments, last row), sweeps of it, and SGD versus the flow.

``SGDExperiment`` holds one configuration (defaults: the paper's, from the authors' config
``config_sgd_sphere_schedule``: d = 80, L = 10, gamma = sqrt(1/2), eps = 0.1, batch 5,
lambda_t = 2 / (1 + 1e-4 t), alpha = 1e-3, 200,000 steps, 30 runs with fresh k*, v*, init uniform
on the sphere, test set 1,000, logged every 500 steps). ``run_sgd_experiment`` / ``run_sgd_sweep``
run it on any executor of ``numerics.executors`` with results independent of the executor.
``sgd_flow_gap`` measures how the mean SGD trajectory approaches the population gradient flow
(``numerics.dynamics.flow.overlap_flow``) as alpha -> 0 at fixed time t = alpha n.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import time
from collections.abc import Sequence

import numpy as np

from theory.parameters import OVERLAP_NAMES, PAPER_GAMMA, PAPER_L, Overlaps

from ..executors import RunJob, map_jobs
from ..montecarlo.geometry import vectors_from_overlaps
from ..dynamics.initial import sample_initial_overlaps, sample_initial_vectors
from ..dynamics.schedules import PaperSchedule, ScheduledProblem
from .full import online_sgd_full
from .reduced import online_sgd_reduced
from .trajectory import SGDTrajectory

__all__ = ["SGDExperiment", "PAPER_SGD", "SGDExperimentResult", "run_sgd_experiment",
           "run_sgd_sweep", "sgd_runs"]

_Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclasses.dataclass(frozen=True, kw_only=True)
class SGDExperiment:
    """One online-SGD experiment. ``init``: "sphere" (uniform on the sphere, fresh k*, v* per run),
    "manifold" (uniform on M, docs/math/initial-law.md#uniform-on-m) or a scalar ``Overlaps`` (every run starts there).
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


def child_seed(seed, i: int) -> np.random.SeedSequence:
    """The i-th child SeedSequence of ``seed``, independent of how often seed was spawned before."""
    return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key + (i,))


class ChildSeeds(Sequence):
    """``child_seed(p, index)`` of every SeedSequence p of ``parents``, one per run, built only when an item is
    asked for: the kernel routes' ``numerics.sgd.trajectory.stream_states`` reads their entropy and spawn keys
    (``seed_fields``) without building them (a SeedSequence hashes its pool when built, ~10 us a run). The
    simulators use them as given, as a sequence of SeedSequences (``run_generators``)."""

    def __init__(self, parents, index: int):
        self.parents, self.index = list(parents), int(index)

    def __len__(self) -> int:
        return len(self.parents)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return child_seed(self.parents[i], self.index)

    def seed_fields(self) -> list:
        """What ``numerics.kernels.seed_sequence.sfc64_child_states`` reads of each child, without building it."""
        pool = np.random.SeedSequence(0).pool_size  # the default, that of child_seed's SeedSequences
        return [_SeedFields(p.entropy, p.spawn_key + (self.index,), pool, 0) for p in self.parents]


_SeedFields = collections.namedtuple("_SeedFields", "entropy spawn_key pool_size n_children_spawned")


def _child(seed: np.random.SeedSequence, i: int) -> np.random.Generator:
    """The generator of ``child_seed(seed, i)``."""
    return np.random.default_rng(child_seed(seed, i))


def sgd_runs(config: SGDExperiment, seeds, progress: bool = False) -> SGDTrajectory:
    """The runs of ``config`` with the given per-run SeedSequences (one executor task).

    Run i initialises from child 0 of seeds[i] and trains with child 1, so its numbers depend only
    on its own seed. ``progress``: a tqdm bar of the steps."""
    # the simulators spawn from its seed only (no generator needed; the kernel routes read its fields alone)
    train_rngs = ChildSeeds(seeds, 1)
    kw = dict(alpha=config.alpha, n_steps=config.n_steps, batch_size=config.batch_size,
              rng=train_rngs, log_every=config.log_every,
              test_size=config.test_size, progress=progress)
    n, d = len(seeds), config.d
    fixed = isinstance(config.init, Overlaps)
    on_m = config.init == "manifold" if not fixed else False
    # a fixed start of the reduced simulator draws nothing: no init generators (~16 us per run)
    init_rngs = [] if fixed and config.simulator == "reduced" else [_child(s, 0) for s in seeds]
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
