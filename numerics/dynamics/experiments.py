"""The paper's population experiments as data (docs/math/dynamics.md#the-papers-experiments, rows 1-4), run with exact overlap PGD.

Each experiment is a ``PopulationExperiment`` (L = 10, gamma = sqrt(1/2), 30 runs, fresh k*, v*
per run, so in overlap coordinates only the law of the initial overlaps matters). Run r draws
its initialisation from ``numpy.random.SeedSequence(seed).spawn(n_runs)[r]`` with
``numerics.dynamics.initial.sample_initial_overlaps`` (exact law in dimension d). The seeds are ours (the
paper does not state its own). ``run_population_experiments`` advances all runs of all given
experiments together (one vectorised loop; runs drop out when their experiment ends), which is
what makes the four experiments cheap (``benchmarks/bench_dynamics.py``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.checks import check_integer, check_positive_real
from theory.parameters import PAPER_D, PAPER_GAMMA, PAPER_L, Overlaps, Problem
from theory.risk import oracle_risk

from .initial import sample_initial_overlaps
from .alignment import first_aligned_steps
from .pgd import PGDTrajectory, overlap_pgd
from .schedules import PaperSchedule, ScheduledProblem

__all__ = ["PopulationExperiment", "PAPER_EXPERIMENTS", "ExperimentResult", "AlignmentSummary",
           "initial_overlaps", "run_population_experiment", "run_population_experiments",
           "experiments_first_aligned", "summarize_alignment"]

_INITS = ("manifold", "sphere")


@dataclasses.dataclass(frozen=True, kw_only=True)
class PopulationExperiment:
    """One row of docs/math/dynamics.md#the-papers-experiments. ``lam``: a number (constant lambda) or a schedule (callable of the step);
    ``init``: "manifold" (uniform on M) or "sphere" (uniform on the sphere)."""

    name: str
    d: int = PAPER_D
    L: int = PAPER_L
    gamma: float = PAPER_GAMMA
    eps: float = 0.0
    lam: object
    alpha: float
    n_steps: int
    init: str
    n_runs: int = 30
    seed: int

    def __post_init__(self):
        if isinstance(self.lam, (list, tuple)):
            raise ValueError(f"lam={self.lam!r} is not allowed: one lambda or schedule per experiment")
        self.problem  # validates d, L, gamma, eps and lambda
        check_positive_real("alpha", self.alpha)
        for name in ("n_steps", "n_runs"):
            check_integer(name, getattr(self, name), 1)
        if self.init not in _INITS:
            raise ValueError(f"init={self.init!r} is not allowed: init must be one of {_INITS}")
        check_integer("seed", self.seed, 0)

    @property
    def problem(self) -> ScheduledProblem:
        """d, L, gamma, eps and lambda (or its schedule) of the experiment."""
        return ScheduledProblem(d=self.d, L=self.L, gamma=self.gamma, eps=self.eps, lam=self.lam)


PAPER_EXPERIMENTS = (
    PopulationExperiment(name="init on M", lam=0.1, alpha=4e-3, n_steps=20_000, init="manifold", seed=1),
    PopulationExperiment(name="sphere, small lambda", lam=0.1, alpha=4e-3, n_steps=20_000,
                         init="sphere", seed=2),
    PopulationExperiment(name="sphere, large lambda", lam=0.9, alpha=1e-3, n_steps=120_000,
                         init="sphere", seed=3),
    PopulationExperiment(name="sphere, schedule", lam=PaperSchedule(lam0=1.0), alpha=4e-3,
                         n_steps=120_000, init="sphere", seed=4),
)


@dataclasses.dataclass(frozen=True)
class ExperimentResult:
    config: PopulationExperiment
    initial: Overlaps
    log: PGDTrajectory


def initial_overlaps(config: PopulationExperiment) -> Overlaps:
    """The n_runs initial overlaps, run r from SeedSequence(seed).spawn(n_runs)[r]."""
    draws = [sample_initial_overlaps(config.d, 1, np.random.default_rng(child),
                                     on_manifold=config.init == "manifold")
             for child in np.random.SeedSequence(config.seed).spawn(config.n_runs)]
    return Overlaps(**{name: np.concatenate([getattr(o, name) for o in draws])
                       for name in ("kappa", "nu", "theta", "eta", "rho")})


def run_population_experiments(configs, log_every: int = 100) -> list:
    """Run several experiments in one vectorised loop; returns one ``ExperimentResult`` each.

    The runs are advanced in segments between the distinct step counts; the runs of an
    experiment stop at its own ``n_steps``. Each run's trajectory is the same as if run alone.
    """
    configs = list(configs)
    inits, owner, per_run, lam, state = _pooled(configs)
    active = np.arange(len(owner))
    logs = [None] * len(configs)
    t = 0
    for end in sorted({c.n_steps for c in configs}):
        problem = ScheduledProblem(d=per_run("d")[active], L=per_run("L")[active],
                                   gamma=per_run("gamma")[active], lam=[lam[j] for j in active])
        seg = overlap_pgd(problem, state, alpha=per_run("alpha")[active], n_steps=end - t,
                          log_every=log_every, start_step=t)
        for i in np.unique(owner[active]):
            part = seg.select_runs(np.flatnonzero(owner[active] == i))
            logs[i] = part if logs[i] is None else logs[i].followed_by(part)
        keep = np.array([configs[owner[j]].n_steps > end for j in active])
        state = tuple(x[keep] for x in seg.state_at(-1))
        active, t = active[keep], end
    return [ExperimentResult(c, init, log) for c, init, log in zip(configs, inits, logs)]


def _pooled(configs):
    """The runs of ``configs`` side by side: (initial overlaps per config, owner config of each run, map from a
    config attribute to its per-run float array, per-run lambda, the five initial overlap arrays)."""
    inits = [initial_overlaps(c) for c in configs]
    counts = [c.n_runs for c in configs]
    owner = np.repeat(np.arange(len(configs)), counts)
    per_run = lambda attr: np.repeat([getattr(c, attr) for c in configs], counts).astype(float)
    state = tuple(np.concatenate([getattr(o, n) for o in inits]) for n in ("kappa", "nu", "theta", "eta", "rho"))
    return inits, owner, per_run, [configs[i].lam for i in owner], state


def experiments_first_aligned(configs, delta: float = 0.05, log_every: int = 100) -> list:
    """Per experiment: the first logged step at which each run is aligned (min(|kappa|, |nu|) >= 1 - delta), -1
    if none by its n_steps, as ``summarize_alignment(run_population_experiment(config, log_every), delta)
    .first_aligned_step``, by ``numerics.dynamics.alignment.first_aligned_steps`` (a run stops once aligned, nothing
    else is logged); the experiments of one n_steps are run together."""
    configs = list(configs)
    out = [None] * len(configs)
    for n_steps in sorted({c.n_steps for c in configs}):
        group = [i for i, c in enumerate(configs) if c.n_steps == n_steps]
        _, owner, per_run, lam, state = _pooled([configs[i] for i in group])
        problem = ScheduledProblem(d=per_run("d"), L=per_run("L"), gamma=per_run("gamma"), lam=lam)
        first = first_aligned_steps(problem, state, alpha=per_run("alpha"), n_steps=n_steps, delta=delta,
                                    log_every=log_every)
        for k, i in enumerate(group):
            out[i] = first[owner == k]
    return out


def run_population_experiment(config: PopulationExperiment, log_every: int = 100) -> ExperimentResult:
    """Run one experiment (``run_population_experiments`` with a single config)."""
    return run_population_experiments([config], log_every=log_every)[0]


@dataclasses.dataclass(frozen=True)
class AlignmentSummary:
    """Alignment with the oracle up to sign: run r is aligned at a logged step when
    min(|kappa|, |nu|) >= 1 - delta there. ``first_aligned_step``: first such logged step (-1 if
    none; resolution = log_every). Final excess risk R - eps^2 per run, its mean and standard
    error over runs, and the oracle's excess risk R(k*, v*) - eps^2 at the final lambda."""

    name: str
    delta: float
    n_runs: int
    n_aligned: int
    aligned: np.ndarray
    first_aligned_step: np.ndarray
    final_excess_risk: np.ndarray
    final_excess_risk_mean: float
    final_excess_risk_stderr: float
    oracle_excess_risk: float
    final_abs_kappa: np.ndarray
    final_abs_nu: np.ndarray


def summarize_alignment(result: ExperimentResult, delta: float = 0.05) -> AlignmentSummary:
    """How many runs align with the oracle (up to sign), when, and at what final risk."""
    if not 0 < delta < 1:
        raise ValueError(f"delta={delta!r} is not allowed: need 0 < delta < 1")
    log, c = result.log, result.config
    ok = np.minimum(log.abs_kappa, log.abs_nu) >= 1.0 - delta
    first = np.where(ok.any(axis=0), log.steps[np.argmax(ok, axis=0)], -1)
    risk = log.excess_risk[-1]
    lam_final = float(log.lam[-1, 0])
    oracle = float(oracle_risk(Problem(d=c.d, L=c.L, gamma=c.gamma, eps=0.0, lam=lam_final)))
    return AlignmentSummary(c.name, delta, c.n_runs, int(ok[-1].sum()), ok[-1], first, risk,
                            float(risk.mean()), float(risk.std(ddof=1) / np.sqrt(len(risk))),
                            oracle, log.abs_kappa[-1], log.abs_nu[-1])
