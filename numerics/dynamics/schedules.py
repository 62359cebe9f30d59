"""Schedules lambda_t of the erf inverse temperature during training (docs/math/dynamics.md#projected-gradient-descent).

A schedule is any callable mapping the step index t (int or int array) to lambda_t > 0.
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["ConstantLambda", "PaperSchedule", "as_schedule"]


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
