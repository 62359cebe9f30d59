"""Online SGD in high dimension, step alpha = c/d (docs/math/highdim.md): the effective ODE and
the Monte Carlo of the per-sample gradient moments."""

from .comparison import SGDComparison, compare_with_sgd
from .effective_flow import check_highdim_settings, effective_flow
from .escape import EscapePrediction, escape_prediction
from .fluctuations import MomentClosureTrajectory, increment_covariance, moment_closure_flow
from .moments_mc import MomentsEstimate, gradient_moments_mc
from .one_step import one_step_increment_mc

__all__ = ["EscapePrediction", "escape_prediction", "SGDComparison", "compare_with_sgd", "check_highdim_settings", "effective_flow", "MomentClosureTrajectory",
           "increment_covariance", "moment_closure_flow", "MomentsEstimate", "gradient_moments_mc",
           "one_step_increment_mc"]
