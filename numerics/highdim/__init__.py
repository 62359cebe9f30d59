"""Online SGD in high dimension, step alpha = c/d (docs/math/highdim.md): the effective ODE and
the Monte Carlo of the per-sample gradient moments."""

from .comparison import SGDComparison, compare_with_sgd
from .effective_flow import check_highdim_settings, effective_flow
from .escape import EscapePrediction, escape_prediction
from .escape_sphere import SphereEscapeLaw, saddle_jacobian, sphere_escape_law
from .exit_slope import linear_exit_time, log_d_slope, median_standard_error, sgd_exit_times
from .escape_sgd import EscapeWindow, SGDEscapeLaw, escape_window, sgd_escape_law
from .fixed_point import AlignedFixedPoint, CriticalStep, aligned_fixed_point, critical_step, fixed_point_branch, stability_jacobian
from .limit_check import LimitExtrapolation, extrapolate_in_d, extrapolated_per_run_drift
from .limit_fixed_point import LimitFixedPoint, limit_fixed_point
from .fluctuations import MomentClosureTrajectory, increment_covariance, moment_closure_flow
from .moments_mc import MomentsEstimate, gradient_moments_mc
from .one_step import one_step_increment_mc
from .per_run import FastMode, fast_mode, per_run_drift, per_run_drift_on_m
from .saddle_step import BranchEndExtrapolation, SaddlePitchfork, extrapolated_branch_end, saddle_jacobian_on_m, saddle_pitchfork_step
from .window_expansion import SaddleExpansion, saddle_expansion

__all__ = ["LimitExtrapolation", "extrapolate_in_d", "extrapolated_per_run_drift", "LimitFixedPoint", "limit_fixed_point", "AlignedFixedPoint", "CriticalStep", "aligned_fixed_point", "critical_step", "fixed_point_branch", "stability_jacobian",
           "FastMode", "fast_mode", "per_run_drift", "per_run_drift_on_m", "EscapePrediction", "escape_prediction", "SphereEscapeLaw", "saddle_jacobian", "sphere_escape_law", "EscapeWindow", "SGDEscapeLaw",
           "escape_window", "sgd_escape_law", "linear_exit_time", "log_d_slope", "median_standard_error", "sgd_exit_times", "SGDComparison", "compare_with_sgd", "check_highdim_settings", "effective_flow", "MomentClosureTrajectory",
           "increment_covariance", "moment_closure_flow", "MomentsEstimate", "gradient_moments_mc",
           "one_step_increment_mc", "BranchEndExtrapolation", "extrapolated_branch_end", "SaddlePitchfork", "saddle_jacobian_on_m", "saddle_pitchfork_step", "SaddleExpansion", "saddle_expansion"]
