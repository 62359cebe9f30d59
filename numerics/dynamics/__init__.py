"""Population training dynamics on the five overlaps: exact projected GD (paper Definition 1), its
R^d sibling, the gradient flow and its phase portrait on M, initial laws, lambda schedules, the paper's
experiments, and finite-difference Hessians at the oracle."""

from theory.namespace import lazy_namespace

# module -> the names it exports; each module is imported when one of its names is first used.
lazy_namespace(__name__, {
    ".ode": ("OdeOptions", "ODE_METHODS"),
    ".schedules": ("ConstantLambda", "PaperSchedule", "as_schedule", "ScheduledProblem", "lambda_setting"),
    ".initial": ("sample_initial_vectors", "sample_initial_overlaps"),
    ".risk_partials": ("LambdaConstants", "lambda_constants", "partials", "zeta_lean"),
    ".overlap_steps": ("pgd_step", "flow_velocity"),
    ".pgd_trajectory": ("PGDTrajectory", "pgd_route_gap_bound"),
    ".pgd": ("overlap_pgd", "lambda_table"),
    ".alignment": ("first_aligned_steps",),
    ".pgd_vectors": ("VectorPGDTrajectory", "vector_pgd"),
    ".flow": ("FlowTrajectory", "overlap_flow", "manifold_flow", "manifold_flow_velocity",
        "schedule_in_flow_time",),
    ".phase_portrait": ("FixedPoint", "manifold_fixed_points", "manifold_jacobian", "Separatrix",
        "separatrix", "predicted_limit_sign"),
    ".experiments": ("PopulationExperiment", "PAPER_EXPERIMENTS", "ExperimentResult", "AlignmentSummary",
        "initial_overlaps", "run_population_experiment", "run_population_experiments", "experiments_first_aligned",
        "summarize_alignment"),
    ".stalls": ("PerturbationResult", "perturbed_pgd", "StallSummary", "stall_summary",
        "BeyondTheoremSummary", "beyond_theorem_summary"),
    ".hessian_fd": ("FDSpectrum", "tangent_frame", "riemannian_hessian_fd", "oracle_spectrum_fd",
        "LocalOracleHessian", "local_oracle_hessian_fd", "overlaps_near_oracle"),
})
