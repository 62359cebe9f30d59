"""Runs of the reduced simulator that end at a condition (``online_sgd_reduced(until=...)``): a run for which
``until`` holds at a logged step is simulated no further, and its later logged rows are NaN. Each run's streams
are consumed in order whatever runs are simulated with it, so the other runs, and this one up to its end, have
the numbers of the simulation without ``until``."""

from __future__ import annotations

import numpy as np

from .frame import frame_overlaps

__all__ = ["RunEnding"]


class RunEnding:
    """The runs still simulated under ``until`` (None: every run to the end)."""

    def __init__(self, until, n_runs: int, test_size: int):
        if until is not None and (not callable(until) or test_size > 0):
            raise ValueError(f"until={until!r} is not allowed with test_size={test_size!r}: None, or a callable "
                             "with test_size 0")
        self.until, self.alive = until, np.ones(n_runs, dtype=bool)

    def runs(self) -> np.ndarray:
        return np.flatnonzero(self.alive)

    def block(self, chunk: int, n_steps: int, log_every: int) -> int:
        """Steps per block: ``chunk``; with ``until`` at most max(log_every, n_steps / 100), so that a run
        ends at most that many steps after its condition holds."""
        return chunk if self.until is None else min(chunk, max(1, log_every, -(-n_steps // 100)))

    def logged(self, snap, runs, shape) -> np.ndarray:
        """The state of every run at a logged step: ``snap`` on the rows ``runs``, NaN on the ended runs."""
        if self.until is None:
            return snap
        full = np.full(shape, np.nan)
        full[runs] = snap
        full[~self.alive] = np.nan
        return full

    def update(self, KV) -> None:
        """End the runs for which ``until`` holds at the logged state KV (frame coordinates)."""
        if self.until is not None:
            self.alive &= ~np.asarray(self.until(frame_overlaps(KV)), dtype=bool)


def _streams_of(train, runs):
    """The streams of the runs ``runs``: a list of the per-run streams, or for an array of the runs' stream states
    (the kernel route) the array itself when every run is simulated, else a copy of its rows."""
    if not isinstance(train, np.ndarray):
        return [train[i] for i in runs]
    return train if runs.size == len(train) else train[runs]


def advance_blocks(KV, train, advance, lam, steps, chunk, fixed, work, ending, frames, bar):
    """Steps 1..n_steps (lam: lambda_0..lambda_n_steps) by ``advance`` (a route of ``online_sgd_reduced``, called
    with the runs' KV, streams (``_streams_of``), lambdas of the block, ``fixed`` = (alpha, shape, scale2), the logged indices in the
    block and ``work``) in blocks of ``chunk`` steps, on the runs ``ending`` still simulates; the KV of every run at
    the logged steps after step 0 into frames[1:]. Returns the final KV (an ended run's at its end)."""
    n_steps, row = len(lam) - 1, 1
    for start in range(0, n_steps, chunk):
        n_chunk = min(chunk, n_steps - start)
        bar.update(start - bar.n)
        logged = steps[(steps > start) & (steps <= start + n_chunk)]
        runs = ending.runs()
        snaps = [KV[runs]] * len(logged)  # no run left: NaN rows only
        if runs.size:
            streams = _streams_of(train, runs)
            KV[runs], snaps = advance(KV[runs], streams, lam[start:start + n_chunk], *fixed,
                                      logged - start - 1, work[:runs.size])
            if streams is not train and isinstance(train, np.ndarray):
                train[runs] = streams  # the states the runs advanced
        for snap in snaps:
            frames[row] = ending.logged(snap, runs, KV.shape)
            ending.update(frames[row])
            row += 1
    return KV
