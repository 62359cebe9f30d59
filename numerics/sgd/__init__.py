"""Online SGD (paper Section 5 experiments): the full d-dimensional simulator, the exact reduced one on
the Gram coordinates, their common trajectory object, and the experiment and sweep drivers."""

from theory.namespace import lazy_namespace

# module -> the names it exports; each module is imported when one of its names is first used.
lazy_namespace(__name__, {
    ".trajectory": ("SGDTrajectory",),
    ".full": ("online_sgd_full", "minibatch_loss_grad", "sample_batch", "sphere_step"),
    ".reduced": ("online_sgd_reduced",),
    ".frame": ("cholesky_coordinates", "frame_overlaps"),
    ".experiment": ("SGDExperiment", "PAPER_SGD", "SGDExperimentResult", "run_sgd_experiment",
        "run_sgd_sweep", "sgd_runs"),
    ".flow_gap": ("SGD_FLOW_ODE", "FlowGap", "sgd_flow_gap"),
})
