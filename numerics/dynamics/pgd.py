"""Exact population PGD in overlap coordinates (paper Definition 1; SPEC §7).

The iterates (k_t, v_t) of projected gradient descent on the population risk are tracked through
their five overlaps with (k*, v*): the update ``numerics.dynamics.overlap_steps.pgd_step`` is exact for
every d, so the cost per step does not depend on d. Independent runs are advanced together as
arrays of shape (n_runs,); each run may have its own d, L, gamma, eps, alpha and lambda schedule
lambda_t (step t -> t+1 uses lambda_t). Sibling: ``numerics.dynamics.pgd_vectors.vector_pgd`` (the same
iteration on explicit vectors in R^d).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import OVERLAP_NAMES, Overlaps
from theory.risk import risk_from_arrays

from .risk_partials import lambda_constants, partials
from .overlap_steps import pgd_step
from .schedules import as_schedule, lambda_spec

__all__ = ["PGDTrajectory", "overlap_pgd", "lambda_table", "pgd_route_gap_bound"]

_EPS = np.finfo(float).eps

# Steps whose lambda-dependent constants are precomputed together, per distinct
# (schedule, d, L, gamma) (memory ~ 70 * 8 * block * n_distinct bytes).
_BLOCK = 256


@dataclasses.dataclass(frozen=True)
class PGDTrajectory:
    """Logged PGD trajectories. ``steps`` has shape (n_log,); every other array (n_log, n_runs).

    excess_risk is R - eps^2 at the logged point with the lambda of that step (the quantity the
    paper's figures show, SPEC §5). ``lam`` holds that lambda. ``alpha`` has shape (n_runs,).
    """

    steps: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    excess_risk: np.ndarray
    lam: np.ndarray
    alpha: np.ndarray

    @property
    def roundoff(self) -> np.ndarray:
        """Bound on the float64 drift of each logged overlap from exact arithmetic, shape (n_log,):
        the unit-size iterate is rounded about once per step (u = eps/2, in the normalisation)
        and the errors add up linearly over the steps (the map is non-expanding where PGD is
        stable: alpha below 2 / the largest Hessian eigenvalue), u * step."""
        return 0.5 * _EPS * self.steps.astype(float)

    @property
    def abs_kappa(self):
        return np.abs(self.kappa)

    @property
    def abs_nu(self):
        return np.abs(self.nu)

    @property
    def distance_to_manifold(self):
        """sqrt(theta^2 + eta^2 + rho^2) per logged step and run."""
        return np.sqrt(self.theta ** 2 + self.eta ** 2 + self.rho ** 2)

    def state_at(self, index: int) -> tuple:
        """(kappa, nu, theta, eta, rho) of all runs at logged position ``index``, unvalidated
        (accepted by ``overlap_pgd`` to resume a run)."""
        return tuple(getattr(self, name)[index] for name in OVERLAP_NAMES)

    def overlaps_at(self, index: int) -> Overlaps:
        """Overlaps of all runs at logged position ``index`` (e.g. -1 for the final step).
        Validated: raises if roundoff drift of the recursion made the Gram matrix infeasible
        beyond ``theory.parameters``' tolerance (possible after ~1e5 steps at rank-deficient
        points); use ``state_at`` then."""
        return Overlaps(**{name: getattr(self, name)[index] for name in OVERLAP_NAMES})

    @property
    def final(self) -> Overlaps:
        return self.overlaps_at(-1)

    def select_runs(self, runs) -> "PGDTrajectory":
        """The same logs restricted to the runs ``runs`` (index array or slice)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out = {k: (v if k == "steps" else v[..., runs]) for k, v in fields.items()}
        return PGDTrajectory(**out)

    def truncate(self, last_step: int) -> "PGDTrajectory":
        """The logs of steps <= last_step."""
        keep = self.steps <= last_step
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return PGDTrajectory(**{k: (v if k == "alpha" else v[keep]) for k, v in fields.items()})

    def followed_by(self, later: "PGDTrajectory") -> "PGDTrajectory":
        """These logs then those of ``later`` (a resumed run, same runs) after the last step here."""
        keep = later.steps > self.steps[-1]
        fields = [f.name for f in dataclasses.fields(self)]
        return PGDTrajectory(**{k: (getattr(self, k) if k == "alpha" else
                                np.concatenate([getattr(self, k), getattr(later, k)[keep]]))
                            for k in fields})


def _check_int(name, value, minimum):
    if not (isinstance(value, (int, np.integer)) and value >= minimum):
        raise ValueError(f"{name}={value!r} is not allowed: {name} must be an integer >= {minimum}")


def _per_run(lam, n_runs):
    per_run = list(lam) if isinstance(lam, (list, tuple)) else [lam] * n_runs
    if len(per_run) != n_runs:
        raise ValueError(f"lam has {len(per_run)} entries; one per run (n_runs={n_runs}) is required")
    return per_run


def _schedule_values(entry, t):
    values = np.asarray(as_schedule(entry)(t), dtype=float)
    if values.shape != t.shape:
        values = np.broadcast_to(values, t.shape)
    bad = ~(np.isfinite(values) & (values > 0))
    if np.any(bad):
        first = np.argmax(bad)
        raise ValueError(f"lam={entry!r} gives lambda_{t[first]} = {values[first]!r}: "
                         "lambda must be finite and > 0")
    return values


def pgd_route_gap_bound(n_steps) -> float:
    """Bound n_steps * eps on |overlap_pgd - vector_pgd| (each overlap) after n_steps steps from
    the same start: each route drifts from exact arithmetic by at most
    ``PGDTrajectory.roundoff`` = u per step, so the two by 2u = eps per step. Used by the tests
    and by the claim definition1-overlap-vs-vector."""
    return float(n_steps) * _EPS


def lambda_table(lam, t0: int, t1: int, n_runs: int) -> np.ndarray:
    """lambda_t for steps t0 <= t < t1 and every run, shape (t1 - t0, n_runs).

    ``lam``: a number, a schedule (callable of the step index, evaluated on an int array), or a
    sequence of n_runs of these (one per run). Raises ValueError if a value is not finite and > 0.
    """
    t = np.arange(t0, t1)
    return np.stack([_schedule_values(entry, t) for entry in _per_run(lam, n_runs)], axis=-1)


def _groups(lam, n_runs, d, L, gamma):
    """Runs sharing (schedule, d, L, gamma) share their constants: (unique entries, column map)."""
    keys, cols, entries = {}, np.empty(n_runs, dtype=int), []
    for j, entry in enumerate(_per_run(lam, n_runs)):
        key = (float(entry) if not callable(entry) else id(entry), d[j], L[j], gamma[j])
        if key not in keys:
            keys[key] = len(entries)
            entries.append(j)
        cols[j] = keys[key]
    return entries, cols


def _excess_risk(d, L, gamma, lam, state):
    return risk_from_arrays(d, L, gamma, 0.0, lam, *state)


class _LazyExpansion:
    """Per-step constants of the runs, expanded from the unique columns on access."""

    def __init__(self, consts, cols):
        self.consts, self.cols = consts, cols

    def __getitem__(self, i):
        c, cols = self.consts, self.cols
        return type(c)(c.scalars[:, i][:, cols], c.gl_x2[i][cols], c.gl_w[i][cols])


def _iterate(state, logs, log_at, lam, first, cols, d, L, gamma, alpha, start_step, end):
    """The inner loop of ``overlap_pgd``: fills ``logs`` in place."""
    per_run = _per_run(lam, len(cols))
    for t0 in range(start_step, end + 1, _BLOCK):
        t1 = min(t0 + _BLOCK, end + 1)
        t = np.arange(t0, t1)
        lam_unique = np.stack([_schedule_values(per_run[j], t) for j in first], axis=-1)
        constant = bool(np.all(lam_unique == lam_unique[0]))
        if constant:
            lam_unique = lam_unique[:1]
        c = lambda_constants(d[first], L[first], gamma[first], lam_unique)
        if constant:  # expand the unique columns to the runs once for the whole block
            c = type(c)(c.scalars[..., cols], c.gl_x2[:, cols], c.gl_w[:, cols])
            step_consts = [c.at(0)] * (t1 - t0)
        else:  # expand step by step (cheaper than copying the whole block)
            step_consts = _LazyExpansion(c, cols)
        for i, step in enumerate(range(t0, t1)):
            j = log_at.get(step)
            if j is not None:
                lam_now = lam_unique[0 if constant else i][cols]
                logs[j, :5] = state
                logs[j, 5] = _excess_risk(d, L, gamma, lam_now, state)
                logs[j, 6] = lam_now
            if step < end:
                state = pgd_step(alpha, *state, *partials(step_consts[i], *state))


def overlap_pgd(problem, initial, *, alpha, n_steps: int, log_every: int = 1,
                start_step: int = 0) -> PGDTrajectory:
    """Run population PGD from ``initial`` for ``n_steps`` steps.

    ``problem``: a ``theory.Problem`` or a ``ScheduledProblem`` (lambda a number, a schedule, or
    one per run); d, L, gamma and alpha are scalars or arrays of shape (n_runs,).
    ``initial``: ``Overlaps`` (array fields of shape (n_runs,), or scalars) or a tuple of the five
    overlap arrays in the order of OVERLAP_NAMES (e.g. ``PGDTrajectory.state_at(-1)``).

    ``start_step`` resumes a run: the iterate ``initial`` is taken as that of step start_step
    (the schedule is evaluated from there). Logs start_step, the multiples of log_every after it
    and the last step. eps does not enter (the gradient does not depend on it; the logged excess
    risk is R - eps^2). Exact for every d (see ``numerics.dynamics.overlap_steps``); raises
    FloatingPointError if an iterate becomes non-finite. Sibling: ``vector_pgd`` (explicit R^d).
    """
    lam = lambda_spec(problem)
    _check_int("n_steps", n_steps, 0)
    _check_int("log_every", log_every, 1)
    _check_int("start_step", start_step, 0)
    raw = initial.as_tuple() if isinstance(initial, Overlaps) else tuple(initial)
    if len(raw) != 5:
        raise ValueError(f"initial={initial!r} is not allowed: need Overlaps or 5 overlap arrays")
    fields = [np.atleast_1d(np.asarray(x, dtype=float)) for x in raw]
    state = [x.copy() for x in np.broadcast_arrays(*fields)]
    n_runs = state[0].shape[0]
    d, L, gamma, alpha = (np.broadcast_to(np.asarray(x, dtype=float), (n_runs,)).copy()
                          for x in (problem.d, problem.L, problem.gamma, alpha))
    if not np.all(np.isfinite(alpha) & (alpha > 0)):
        raise ValueError(f"alpha={alpha!r} is not allowed: the step size must be finite and > 0")
    end = start_step + n_steps
    log_steps = np.unique(np.r_[start_step, np.arange(0, end + 1, log_every), end])
    log_steps = log_steps[log_steps >= start_step]
    logs = np.empty((len(log_steps), 7, n_runs))  # 5 overlaps, excess risk, lambda
    log_at = {int(t): j for j, t in enumerate(log_steps)}
    first, cols = _groups(lam, n_runs, d, L, gamma)
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            _iterate(state, logs, log_at, lam, first, cols, d, L, gamma, alpha, start_step, end)
    except FloatingPointError as err:
        raise FloatingPointError(f"PGD iterate became non-finite ({err}): step size alpha too "
                                 "large for this lambda and d?") from None
    return PGDTrajectory(log_steps, *(logs[:, j] for j in range(7)), alpha=alpha)
