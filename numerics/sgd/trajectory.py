"""The logged result of online SGD (docs/math/dynamics.md#the-papers-experiments, last row) and the checks shared by its two simulators.

``numerics.sgd.full.online_sgd_full`` (explicit d-dimensional vectors) and
``numerics.sgd.reduced.online_sgd_reduced`` (exact reduced simulator, cost independent of d) both
return an ``SGDTrajectory``: per logged step n (after n updates) the five overlaps of every run,
the exact population risk R(k_n, v_n) at lambda_n = schedule(n) (closed form, docs/math/risk.md#closed-form-population-risk), and an
empirical test risk. Logged steps are 0, log_every, 2 log_every, ... and always n_steps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from theory.checks import check_integer, check_positive_real
from theory.parameters import OVERLAP_NAMES, Overlaps, Problem
from theory.risk import risk_from_arrays

from ..dynamics.schedules import as_schedule, lambda_setting
from ..kernels import check_engine

__all__ = ["SGDTrajectory", "TEST_RISK_KINDS"]

# "fixed": one test set per run, sampled once (the paper's protocol; full simulator only).
# "fresh": a new test set at every logged step; the marginal law at each step is exact, the
#          correlation across steps of a fixed test set is not reproduced (reduced simulator).
TEST_RISK_KINDS = ("none", "fixed", "fresh")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SGDTrajectory:
    """Logged online-SGD runs. Arrays of overlaps and risks have shape (n_log, n_runs).

    population_risk is the closed-form R at the logged overlaps and lambda_n (exact at finite d), or None where the
    simulator was asked for the overlaps only (``online_sgd_reduced(population_risk=False)``);
    test_risk is (1/n_test) sum (Y - T(X))^2 on test samples (``test_risk_kind`` says which) or None.
    ``excess_risk`` follows the paper's logging convention: risk minus eps^2 (docs/math/risk.md#closed-form-population-risk).
    """

    steps: np.ndarray
    lam: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    population_risk: np.ndarray | None
    test_risk: np.ndarray | None
    test_risk_kind: str
    d: int
    eps: float
    alpha: float
    batch_size: int

    def __post_init__(self):
        if self.test_risk_kind not in TEST_RISK_KINDS:
            raise ValueError(f"test_risk_kind={self.test_risk_kind!r} is not allowed: "
                             f"must be one of {TEST_RISK_KINDS}")

    @property
    def n_runs(self) -> int:
        return self.kappa.shape[1]

    @property
    def time(self) -> np.ndarray:
        """t = alpha n, the gradient-flow time of logged step n."""
        return self.alpha * self.steps

    @property
    def excess_risk(self) -> np.ndarray:
        if self.population_risk is None:
            raise ValueError("population_risk=None: the run was simulated with population_risk=False")
        return self.population_risk - self.eps**2

    @property
    def test_excess_risk(self):
        return None if self.test_risk is None else self.test_risk - self.eps**2

    @property
    def distance_to_manifold(self) -> np.ndarray:
        return np.sqrt(self.theta**2 + self.eta**2 + self.rho**2)

    def overlaps(self) -> Overlaps:
        """All logged overlaps as one ``Overlaps`` with (n_log, n_runs) fields."""
        return Overlaps(**{name: getattr(self, name) for name in OVERLAP_NAMES})

    @staticmethod
    def concat_runs(parts: Sequence["SGDTrajectory"]) -> "SGDTrajectory":
        """Join trajectories of disjoint groups of runs (same settings) along the run axis, in order."""
        first = parts[0]
        for p in parts[1:]:
            if not (np.array_equal(p.steps, first.steps) and np.array_equal(p.lam, first.lam)
                    and [p.test_risk is None, p.population_risk is None]
                    == [first.test_risk is None, first.population_risk is None]
                    and (p.test_risk_kind, p.d, p.eps, p.alpha, p.batch_size)
                    == (first.test_risk_kind, first.d, first.eps, first.alpha, first.batch_size)):
                raise ValueError("parts=... cannot be joined: their settings or logged steps differ")
        cat = lambda name: None if getattr(first, name) is None else np.concatenate([getattr(p, name) for p in parts], 1)
        return dataclasses.replace(first, **{name: cat(name) for name in OVERLAP_NAMES + ("population_risk", "test_risk")})


def check_settings(problem: Problem, alpha, n_steps, batch_size, log_every, test_size):
    """Validate the common SGD arguments; return the problem's scalars (d, L, gamma, eps)."""
    fields = {name: np.asarray(getattr(problem, name)) for name in ("d", "L", "gamma", "eps")}
    for name, value in fields.items():
        if value.ndim != 0:
            raise ValueError(f"problem.{name}={value!r} is not allowed: SGD needs scalar problem fields")
    check_positive_real("alpha", alpha)
    for name, value, low in (("n_steps", n_steps, 0), ("batch_size", batch_size, 1),
                             ("log_every", log_every, 1), ("test_size", test_size, 0)):
        check_integer(name, value, low)
    return int(problem.d), int(problem.L), float(problem.gamma), float(problem.eps)


def check_reduced(problem, alpha, n_steps, batch_size, log_every, test_size, engine, coefficients):
    """(d, L, gamma, eps) of ``numerics.sgd.reduced.online_sgd_reduced``: ``check_settings`` and its own checks
    (d >= 4, no test set with coefficients, a known engine)."""
    check_engine(engine)
    d, L, gamma, eps = check_settings(problem, alpha, n_steps, batch_size, log_every, test_size)
    if coefficients is not None and test_size > 0:
        raise ValueError(f"test_size={test_size!r} is not allowed with coefficients: the fresh test risk is the erf "
                         "predictor's; use 0")
    if d < 4:
        raise ValueError(f"problem.d={d!r} is not allowed: the reduced simulator needs d >= 4 (use "
                         "numerics.sgd.full.online_sgd_full)")
    return d, L, gamma, eps


def lambda_path(problem, n_steps: int) -> np.ndarray:
    """lambda_n for n = 0..n_steps of a ``Problem`` (constant lambda) or a ``ScheduledProblem``
    (one number or schedule shared by the runs)."""
    spec = lambda_setting(problem)
    if isinstance(spec, list) or (not callable(spec) and np.ndim(spec) > 0):
        raise ValueError(f"problem.lam={problem.lam!r} is not allowed: SGD runs share one lambda "
                         "or one schedule")
    sched = as_schedule(spec)
    lam = np.broadcast_to(np.asarray(sched(np.arange(n_steps + 1)), dtype=float), (n_steps + 1,))
    if not np.all(np.isfinite(lam) & (lam > 0)):
        raise ValueError(f"problem.lam={problem.lam!r} is not allowed: lambda_t must be finite and > 0")
    return lam.copy()


def logged_steps(n_steps: int, log_every: int) -> np.ndarray:
    return np.unique(np.append(np.arange(0, n_steps + 1, log_every), n_steps))


def run_generators(rng, n_runs: int) -> list:
    """One seed per run, for ``child_streams``: ``rng`` is a Generator (the SeedSequences of its spawned children,
    those of ``rng.spawn(n_runs)``, without building their generators: ~6 us per run) or a sequence of n_runs
    Generators or SeedSequences (used as given, so that a run's numbers do not depend on its neighbours)."""
    if isinstance(rng, np.random.Generator):
        seq = rng.bit_generator.seed_seq
        return seq.spawn(n_runs) if isinstance(seq, np.random.SeedSequence) else list(rng.spawn(n_runs))
    if hasattr(rng, "seed_fields") and len(rng) == n_runs:  # numerics.sgd.experiment.ChildSeeds: used as given
        return rng
    if isinstance(rng, Sequence) and len(rng) == n_runs and all(
            isinstance(g, (np.random.Generator, np.random.SeedSequence)) for g in rng):
        return list(rng)
    raise ValueError(f"rng={rng!r} is not allowed: pass a numpy Generator or a sequence of "
                     f"{n_runs} Generators or SeedSequences (one per run)")


def child_streams(gen, n: int, used: int | None = None) -> list:
    """n independent child generators of ``gen`` (a Generator: children of its SeedSequence, as
    ``Generator.spawn``; or a SeedSequence: its children), on the SFC64 bit generator, which draws normals
    about twice as fast as PCG64 here; the simulators spend much of their time drawing normals. ``used``:
    only the first ``used`` children are built (the others are None; each costs ~20 us, a cost per run)."""
    seqs = (gen if isinstance(gen, np.random.SeedSequence) else gen.bit_generator.seed_seq).spawn(n)
    return [np.random.Generator(np.random.SFC64(s)) if i < (n if used is None else used) else None
            for i, s in enumerate(seqs)]


def stream_states(seeds, n: int) -> np.ndarray:
    """(R, n, 4) uint64: the SFC64 states of ``child_streams(seeds[r], n)`` without building generators
    (``numerics.kernels.seed_sequence``, ~2 us per run instead of ~60). A Generator's seed sequence is advanced
    as ``child_streams`` does; a SeedSequence is used as given (its children from n_children_spawned on)."""
    from ..kernels.seed_sequence import sfc64_child_states

    if hasattr(seeds, "seed_fields"):  # ChildSeeds (numerics.sgd.experiment): used as given, read without the objects
        return sfc64_child_states(seeds.seed_fields(), n)
    seqs = [g if isinstance(g, np.random.SeedSequence) else g.bit_generator.seed_seq for g in seeds]
    states = sfc64_child_states(seqs, n)
    for g, seq in zip(seeds, seqs):
        if g is not seq:
            seq.spawn(n)
    return states


def run_streams(rng, n_runs: int, test_size: int, as_states: bool):
    """(train, test): each run's four training streams and its test stream (``online_sgd_reduced``): generators
    (``child_streams``), or with ``as_states`` (the kernel route) their SFC64 states (``stream_states``), train
    (R, 4, 4) and test (R, 4), which the kernels advance in place. A Generator's seed sequence is advanced as
    ``Generator.spawn`` would; with states, a SeedSequence given per run is used as given (not advanced)."""
    seeds = run_generators(rng, n_runs)
    if as_states:
        states = stream_states(seeds, 5)
        return np.ascontiguousarray(states[:, :4]), np.ascontiguousarray(states[:, 4])
    streams = [child_streams(g, 5, used=5 if test_size else 4) for g in seeds]
    return [s[:4] for s in streams], [s[4] for s in streams]


def progress_bar(enabled: bool, total: int, desc: str):
    """A bar over the steps (``numerics.progress.bar``: drawn on a terminal, or forwarded to the
    parent's display from a pool worker); silent unless ``enabled``."""
    from ..progress import bar

    return bar(total=total, desc=desc, unit="step", disable=None if enabled else True)


class TrajectoryLog:
    """Buffers of the overlaps (and test risks) of the logged steps, filled row by row (``record``); the
    population risk of every logged step is evaluated at the end, in one vectorised call (``logged_trajectory``)."""

    def __init__(self, steps, n_runs, with_test):
        self.steps = steps
        shape = (len(steps), n_runs)
        self.arrays = {name: np.empty(shape) for name in OVERLAP_NAMES}
        self.test = np.empty(shape) if with_test else None
        self.row, self.filled = 0, np.zeros(shape, dtype=bool)

    def record(self, overlaps: dict, test_risk=None, row=None, runs=slice(None)):
        """Fill the next row (``row`` None) or row ``row``, for all runs or the runs ``runs``."""
        i = self.row if row is None else row
        for name in OVERLAP_NAMES:
            self.arrays[name][i, runs] = overlaps[name]
        if self.test is not None:
            self.test[i, runs] = test_risk
        self.filled[i, runs] = True
        self.row += row is None

    def result(self, lam_path, kind, shape, alpha, batch_size, population_risk=True) -> SGDTrajectory:
        if not self.filled.all():
            raise RuntimeError(f"logged {self.filled.all(axis=1).sum()} of {len(self.steps)} steps")
        return logged_trajectory(self.steps, lam_path, self.arrays, self.test, kind, shape, alpha, batch_size,
                                 population_risk)


def logged_trajectory(steps, lam_path, overlaps: dict, test_risk, kind, shape, alpha, batch_size,
                      population_risk=True) -> SGDTrajectory:
    """The ``SGDTrajectory`` of the overlaps (n_log, n_runs) logged at ``steps``: the population risk R(k_n, v_n) at
    lambda_n of every logged step and run by one call of the closed form (``theory.risk.risk_from_arrays``, elementwise,
    so the same values as one call per logged step), None if not ``population_risk``; shape = (d, L, gamma, eps)."""
    d, L, gamma, eps = shape
    lam = lam_path[steps]
    risk = risk_from_arrays(d, L, gamma, eps, lam[:, None], *map(overlaps.get, OVERLAP_NAMES)) if population_risk else None
    return SGDTrajectory(steps=steps, lam=lam, **overlaps, population_risk=risk, test_risk=test_risk,
                         test_risk_kind=kind, d=d, eps=eps, alpha=alpha, batch_size=batch_size)
