"""Training dynamics and Monte Carlo for single-location regression."""

from .geometry import overlaps_from_vectors, random_orthonormal, vectors_from_overlaps
from .schedules import ConstantLambda, PaperSchedule, as_schedule

__all__ = [
    "overlaps_from_vectors", "random_orthonormal", "vectors_from_overlaps",
    "ConstantLambda", "PaperSchedule", "as_schedule",
]
