"""The result of a float64 quadrature route: a value and its absolute error estimate."""

from __future__ import annotations

import dataclasses

__all__ = ["QuadResult"]


@dataclasses.dataclass(frozen=True)
class QuadResult:
    """A quadrature value with its absolute error estimate (propagated from QUADPACK's)."""

    value: float
    abserr: float
