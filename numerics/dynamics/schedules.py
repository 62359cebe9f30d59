"""Schedules lambda_t of the erf inverse temperature during training
(docs/math/dynamics.md#projected-gradient-descent), and ``ScheduledProblem``, the sibling of
``theory.Problem`` whose lambda may follow a schedule.

A schedule is any callable mapping the step index t (int or int array) to lambda_t > 0 (for the
gradient flow: the flow time t, a float).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import Problem, Task

__all__ = ["ConstantLambda", "PaperSchedule", "as_schedule", "ScheduledProblem", "lambda_setting"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConstantLambda:
    """lambda_t = lam for every step."""

    lam: float

    def __post_init__(self):
        if not (np.isfinite(self.lam) and self.lam > 0):
            raise ValueError(f"lam={self.lam!r} is not allowed: lam must be finite and > 0")

    def __call__(self, t):
        return np.full(np.shape(t), float(self.lam))[()]


@dataclasses.dataclass(frozen=True, kw_only=True)
class PaperSchedule:
    """lambda_t = lam0 / (1 + rate t), the decreasing schedule of the authors' code (rate = 1e-4)."""

    lam0: float
    rate: float = 1e-4

    def __post_init__(self):
        if not (np.isfinite(self.lam0) and self.lam0 > 0):
            raise ValueError(f"lam0={self.lam0!r} is not allowed: lam0 must be finite and > 0")
        if not (np.isfinite(self.rate) and self.rate >= 0):
            raise ValueError(f"rate={self.rate!r} is not allowed: rate must be finite and >= 0")

    def __call__(self, t):
        return self.lam0 / (1.0 + self.rate * np.asarray(t, dtype=float))


def as_schedule(schedule):
    """A number becomes ``ConstantLambda``; a callable is returned unchanged."""
    if callable(schedule):
        return schedule
    return ConstantLambda(lam=float(schedule))


def _check_lambda_entry(entry, where: str):
    value = entry(0) if callable(entry) else entry
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}={entry!r} is not allowed: lambda must be a number > 0 or a "
                         "schedule (a callable of the step)") from None
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{where}={entry!r} is not allowed: lambda must be finite and > 0 "
                         f"(got {value!r}{' at t = 0' if callable(entry) else ''})")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScheduledProblem(Task):
    """A ``theory.Problem`` whose lambda may change during training (the paper's Section 5): the fields of
    ``theory.Task`` and ``lam``, a number, a schedule (callable of the step index, e.g.
    ``PaperSchedule``), or a sequence of these with one entry per run. Taken by the dynamics
    routes (``overlap_pgd``, ``vector_pgd``, ``overlap_flow``, ...) wherever a ``Problem`` is;
    a schedule's value at t = 0 is checked on construction, later values when they are used."""

    lam: object

    def __post_init__(self):
        super().__post_init__()
        entries = self.lam if isinstance(self.lam, (list, tuple)) else [self.lam]
        if not entries:
            raise ValueError("lam=[] is not allowed: give a number, a schedule, or one per run")
        for i, entry in enumerate(entries):
            if not callable(entry) and np.ndim(entry) > 0:
                raise ValueError(f"lam={self.lam!r} is not allowed: entries must be numbers or "
                                 "schedules (a list of them for one per run)")
            _check_lambda_entry(entry, "lam" if entries is not self.lam else f"lam[{i}]")


def lambda_setting(problem):
    """The lambda of a ``Problem`` or ``ScheduledProblem`` as the dynamics read it: a number, a
    schedule, or a list with one of these per run (from a list or from an array-valued
    ``Problem.lam``)."""
    if not isinstance(problem, (Problem, ScheduledProblem)):
        raise ValueError(f"problem={problem!r} is not allowed: need a theory.Problem or a "
                         "numerics.dynamics.ScheduledProblem (a Task has no lambda)")
    lam = problem.lam
    if isinstance(lam, (list, tuple)) or (not callable(lam) and np.ndim(lam) > 0):
        return list(np.asarray(lam, dtype=float)) if not isinstance(lam, (list, tuple)) else list(lam)
    return lam
