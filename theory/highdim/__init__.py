"""Online SGD in high dimension (step alpha = c/d): the per-sample gradient moments and the
effective drift of the five overlaps (docs/math/highdim.md)."""

from .branch_end import BranchEnd, branch_end_constant
from .limit import LimitDrift, LimitFastModeUnstable, limit_drift
from .drift import drift_from_scalars, effective_drift, noise_scalars, population_drift, second_order_drift
from .moments import GradientMoments, gradient_moments, problem_scalars, task_scalars
from .token_moments import frame_coordinates, token_moments

__all__ = ["BranchEnd", "branch_end_constant", "LimitDrift", "LimitFastModeUnstable", "limit_drift", "drift_from_scalars", "noise_scalars", "effective_drift", "population_drift", "second_order_drift", "GradientMoments", "gradient_moments", "problem_scalars", "task_scalars",
           "frame_coordinates", "token_moments"]
