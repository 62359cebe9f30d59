"""Exact population PGD in overlap coordinates (paper Definition 1; docs/math/dynamics.md#pgd-step-in-overlaps).

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

from theory.checks import as_real_array, check_integer, short_repr
from theory.feasible import nearest_feasible
from theory.parameters import OVERLAP_NAMES, Overlaps, check_realisable
from theory.risk import risk_from_arrays

from .risk_partials import lambda_constants, partials
from .overlap_steps import pgd_step
from .pgd_trajectory import PGDTrajectory, pgd_route_gap_bound
from .schedules import as_schedule, lambda_setting
from ..kernels import check_engine

__all__ = ["PGDTrajectory", "overlap_pgd", "checked_runs", "advance_runs", "lambda_table", "pgd_route_gap_bound"]

# Steps whose lambda-dependent constants are precomputed together, per distinct
# (schedule, d, L, gamma) (memory ~ 70 * 8 * block * n_distinct bytes).
_BLOCK = 256
# Exact PGD keeps the Gram matrix of (k, v, k*, v*) PSD; the float64 recursion drifts by a few ulps
# per step (each new overlap is ~10 rounded terms of size <= 1 + alpha |grad R|), enough to make it
# infeasible near rank-deficient points (k -> +-v*) after ~1e4 steps (smallest eigenvalue ~ -5e-14
# at step 2e4). The logged states are mapped by ``nearest_feasible`` (a change of the drift's size);
# the iterate itself is not, so both engines follow the same recursion to round-off.
# Steps per call of the compiled kernel (its lambda table: 8 * block * n_distinct bytes).
_KERNEL_BLOCK = 16384


def initial_state(initial) -> Overlaps:
    """The starting point as validated ``Overlaps`` with fields of shape (n_runs,).

    ``initial``: ``Overlaps`` or a sequence of the five overlaps (numbers or arrays) in the order of
    OVERLAP_NAMES. NaN, out-of-range and infeasible starts raise ValueError (Overlaps' checks)."""
    if isinstance(initial, Overlaps):
        raw = initial.as_tuple()
    elif isinstance(initial, (tuple, list)) and len(initial) == 5:
        raw = tuple(initial)
    else:
        raise ValueError(f"initial={short_repr(initial)} is not allowed: pass Overlaps or a tuple of "
                         "the 5 overlaps (kappa, nu, theta, eta, rho)")
    fields = [np.atleast_1d(as_real_array(name, x)) for name, x in zip(OVERLAP_NAMES, raw)]
    shapes = {x.shape for x in fields} - {(1,)}
    if len(shapes) > 1 or any(len(shape) != 1 for shape in shapes):
        raise ValueError(f"initial overlaps of shapes {[x.shape for x in fields]} are not allowed: "
                         "each must be a number or a 1-D array of one common length n_runs")
    n_runs = shapes.pop()[0] if shapes else 1
    return Overlaps(**{name: np.broadcast_to(x, (n_runs,)) for name, x in zip(OVERLAP_NAMES, fields)})


def per_run(name, value, n_runs):
    """``value`` (a number or an array of n_runs) as a float array of shape (n_runs,)."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] not in (1, n_runs)):
        raise ValueError(f"{name} of shape {arr.shape} is not allowed: give a number or one "
                         f"value per run (n_runs={n_runs})")
    return np.broadcast_to(arr, (n_runs,)).copy()


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


def _iterate(state, logs, log_steps, lam, first, cols, d, L, gamma, alpha, start_step, end):
    """The inner loop of ``overlap_pgd`` (the NumPy reference route): fills ``logs`` in place."""
    log_at = {int(t): j for j, t in enumerate(log_steps)}
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


def _iterate_kernel(state, logs, log_steps, lam, first, cols, d, L, gamma, alpha, start_step, end):
    """``_iterate`` by the compiled kernel ``numerics.kernels.pgd_kernel`` (same logs to
    round-off): the schedules are evaluated here in blocks, the steps run in the kernel. Returns the
    final iterate (5, n_runs), not mapped by ``nearest_feasible``."""
    from ..kernels.pgd_step import GL_NODES, GL_WEIGHTS, pgd_kernel

    per_run = _per_run(lam, len(cols))
    state = np.ascontiguousarray(np.stack(state))
    for t0 in range(start_step, end + 1, _KERNEL_BLOCK):
        t1 = min(t0 + _KERNEL_BLOCK, end)  # steps t0 -> t1; row t1 is logged only if t1 = end
        t = np.arange(t0, t1 + 1)
        lam_unique = np.stack([_schedule_values(per_run[j], t) for j in first], axis=-1)
        rows = np.full(t.size, -1, dtype=np.int64)
        here = (log_steps >= t0) & ((log_steps < t1) | ((log_steps == t1) & (t1 == end)))
        rows[log_steps[here] - t0] = np.flatnonzero(here)
        failed = pgd_kernel(state, d, L, gamma, alpha, lam_unique, cols, rows, logs,
                            GL_NODES, GL_WEIGHTS)
        if failed >= 0:
            raise FloatingPointError(f"non-finite iterate of run {failed}")
        if t1 == end:
            break
    if logs.shape[1] > 5:  # the excess risk and lambda columns (first_aligned_steps logs the overlaps only)
        lam_log = np.stack([_schedule_values(per_run[j], log_steps) for j in first], axis=-1)[:, cols]
        logs[:, 5] = _excess_risk(d, L, gamma, lam_log, tuple(logs[:, i] for i in range(5)))
        logs[:, 6] = lam_log
    return state


# The inner loop of each engine (same signature; a table, so that tests can swap a route).
_ROUTES = {"kernel": _iterate_kernel, "numpy": _iterate}


def checked_runs(problem, initial, alpha, n_steps, log_every):
    """The checked arguments of ``overlap_pgd`` (ValueError naming a bad one): (lambda_t of each run as a list,
    the state as five float arrays, d, L, gamma, alpha as arrays of shape (n_runs,))."""
    lam = lambda_setting(problem)
    check_integer("n_steps", n_steps, 0)
    check_integer("log_every", log_every, 1)
    start = initial_state(initial)
    n_runs = start.kappa.shape[0]
    alpha = as_real_array("alpha", alpha)
    if not np.all(alpha > 0):
        raise ValueError(f"alpha={alpha!r} is not allowed: the step size must be finite and > 0")
    d, L, gamma, alpha = (per_run(name, x, n_runs) for name, x in (
        ("d", problem.d), ("L", problem.L), ("gamma", problem.gamma), ("alpha", alpha)))
    check_realisable(dataclasses.replace(problem.task, d=d), start)
    return _per_run(lam, n_runs), [np.array(x, dtype=float) for x in start.as_tuple()], d, L, gamma, alpha


def overlap_pgd(problem, initial, *, alpha, n_steps: int, log_every: int = 1,
                start_step: int = 0, engine: str = "kernel") -> PGDTrajectory:
    """Run population PGD from ``initial`` for ``n_steps`` steps.

    ``problem``: a ``theory.Problem`` or a ``ScheduledProblem`` (lambda a number, a schedule, or
    one per run); d, L, gamma and alpha are scalars or arrays of shape (n_runs,).
    ``initial``: ``Overlaps`` (array fields of shape (n_runs,), or scalars) or a tuple of the five
    overlap arrays in the order of OVERLAP_NAMES (e.g. ``PGDTrajectory.state_at(-1)``).

    ``start_step`` resumes a run: the iterate ``initial`` is taken as that of step start_step
    (the schedule is evaluated from there). Logs start_step, the multiples of log_every after it
    and the last step. eps does not enter (the gradient does not depend on it; the logged excess
    risk is R - eps^2). Exact for every d (see ``numerics.dynamics.overlap_steps``); raises
    FloatingPointError if an iterate becomes non-finite. ``engine``: "kernel" (compiled,
    ``numerics.kernels``) or "numpy" (the reference route); they agree to round-off.
    Sibling: ``vector_pgd`` (explicit R^d).
    """
    check_engine(engine)
    check_integer("start_step", start_step, 0)
    lam, state, d, L, gamma, alpha = checked_runs(problem, initial, alpha, n_steps, log_every)
    n_runs = state[0].shape[0]
    end = start_step + n_steps
    log_steps = np.unique(np.r_[start_step, np.arange(0, end + 1, log_every), end])
    log_steps = log_steps[log_steps >= start_step]
    logs = np.empty((len(log_steps), 7, n_runs))  # 5 overlaps, excess risk, lambda
    advance_runs(state, logs, log_steps, lam, d, L, gamma, alpha, start_step, end, engine)
    return PGDTrajectory(log_steps, *(logs[:, j] for j in range(7)), alpha=alpha)


def advance_runs(state, logs, log_steps, lam, d, L, gamma, alpha, start_step, end, engine="kernel", project=True):
    """Steps start_step -> end of the runs from the iterate ``state`` (five arrays or (5, n_runs)), arguments as
    ``checked_runs`` returns them: the overlaps at ``log_steps`` into logs (n_log, 7 or, kernel only, 5, n_runs;
    7: with the excess risk and lambda), mapped by ``nearest_feasible``, which removes the roundoff drift of the
    recursion (module comment), unless ``project`` is False (the caller maps the entries it reads); non-finite
    iterates raised. Returns the kernel's final iterate (5, n_runs)."""
    first, cols = _groups(lam, len(d), d, L, gamma)
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            final = _ROUTES[engine](state, logs, log_steps, lam, first, cols, d, L, gamma, alpha, start_step, end)
    except FloatingPointError as err:
        raise FloatingPointError(f"PGD iterate became non-finite ({err}): step size alpha too "
                                 "large for this lambda and d?") from None
    if project:
        logs[:, :5] = np.stack(nearest_feasible(*np.moveaxis(logs[:, :5], 1, 0)), axis=1)
    return final
