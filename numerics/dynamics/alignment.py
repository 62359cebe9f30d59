"""The first aligned step of population PGD runs (min(|kappa|, |nu|) >= 1 - delta at a logged step,
``numerics.dynamics.experiments.summarize_alignment``'s ``first_aligned_step``), each run simulated only until it
aligns (docs/math/dynamics.md#pgd-step-in-overlaps)."""

from __future__ import annotations

import numpy as np

from theory.checks import check_integer
from theory.feasible import nearest_feasible

from .pgd import advance_runs, checked_runs

__all__ = ["first_aligned_steps", "SEGMENT"]

# Steps per segment: a run is simulated at most this far past its alignment, and each segment costs a call of
# the kernel per run still simulated (cost only: the result does not depend on it; 250, 500, 1000 and 2000 steps
# took 2.4, 2.3, 2.0 and 2.1 s CPU for the 1,000 runs of the claims highdim-escape-time and highdim-escape-sphere)
SEGMENT = 1000


def _aligned(logs, delta):
    """min(|kappa|, |nu|) >= 1 - delta at the logged overlaps ``logs`` (n_log, 5, n_runs) once mapped by
    ``nearest_feasible``, as ``overlap_pgd`` logs them. The map multiplies all five overlaps by one t in (0, 1] (or
    leaves them), so it can only end an alignment: it is applied to the entries aligned before it alone (those of
    runs that aligned in the segment, against every logged entry: one 4 x 4 eigenvalue problem each, which was a
    third of the claims' PGD cost), and the test is the same, bit for bit."""
    raw = np.minimum(np.abs(logs[:, 0]), np.abs(logs[:, 1])) >= 1.0 - delta
    rows, cols = np.nonzero(raw)
    if rows.size:
        kappa, nu, *_ = nearest_feasible(*np.moveaxis(logs[rows, :, cols], 1, 0))
        raw[rows, cols] = np.minimum(np.abs(kappa), np.abs(nu)) >= 1.0 - delta
    return raw


def first_aligned_steps(problem, initial, *, alpha, n_steps: int, delta: float, log_every: int = 1,
                        segment: int = SEGMENT) -> np.ndarray:
    """Per run: the first logged step of ``overlap_pgd(problem, initial, alpha=alpha, n_steps=n_steps,
    log_every=log_every)`` (steps 0, log_every, 2 log_every, ... and n_steps) at which
    min(|kappa|, |nu|) >= 1 - delta, -1 if none (``summarize_alignment``'s ``first_aligned_step``).

    The same numbers at a fraction of the cost: the compiled route in segments of ``segment`` steps (rounded up to a
    multiple of log_every), a run continued from its iterate (not the logged state: the recursion of one
    ``overlap_pgd`` call, bit for bit) only while it has not aligned, and only the overlaps logged (no risk).
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta={delta!r} is not allowed: need 0 < delta < 1")
    check_integer("segment", segment, 1)
    lam, state, d, L, gamma, alpha = checked_runs(problem, initial, alpha, n_steps, log_every)
    state = np.stack(state)
    log_steps = np.unique(np.r_[np.arange(0, n_steps + 1, log_every), n_steps])
    found = np.full(len(d), -1)
    active, t0, segment = np.arange(len(d)), 0, -(-segment // log_every) * log_every
    while active.size and t0 < n_steps:
        t1 = min(t0 + segment, n_steps)
        steps = log_steps[(log_steps >= t0 if t0 == 0 else log_steps > t0) & (log_steps <= t1)]
        logs = np.empty((len(steps), 5, active.size))
        state = advance_runs(state, logs, steps, [lam[j] for j in active], d[active], L[active], gamma[active],
                             alpha[active], t0, t1, project=False)
        ok = _aligned(logs, delta)
        done = ok.any(axis=0)
        found[active[done]] = steps[np.argmax(ok, axis=0)[done]]
        active, state, t0 = active[~done], state[:, ~done], t1
    return found
