"""Online SGD (paper Section 5 experiments): the full d-dimensional simulator, the exact reduced one on
the Gram coordinates, their common trajectory object, and the experiment and sweep drivers."""

from .trajectory import (
    SGDTrajectory,
)
from .full import (
    online_sgd_full, minibatch_loss_grad, sample_batch, sphere_step,
)
from .frame import (
    cholesky_coordinates, frame_overlaps,
)
from .reduced import (
    online_sgd_reduced,
)
from .experiment import (
    SGDExperiment, PAPER_SGD, SGDExperimentResult, run_sgd_experiment, run_sgd_sweep, sgd_runs,
)
from .flow_gap import (
    SGD_FLOW_ODE, FlowGap, sgd_flow_gap,
)

__all__ = [
    "SGDTrajectory", "online_sgd_full", "minibatch_loss_grad", "sample_batch", "sphere_step",
    "online_sgd_reduced", "cholesky_coordinates", "frame_overlaps", "SGDExperiment", "PAPER_SGD",
    "SGDExperimentResult", "run_sgd_experiment", "run_sgd_sweep", "sgd_runs", "SGD_FLOW_ODE",
    "FlowGap", "sgd_flow_gap",
]
