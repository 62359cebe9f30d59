"""Population training dynamics on the five overlaps: exact projected GD (paper Definition 1), its
R^d sibling, the gradient flow and its phase portrait on M, initial laws, lambda schedules, the paper's
experiments, and finite-difference Hessians at the oracle."""

from .ode import (
    OdeOptions, ODE_METHODS,
)
from .schedules import (
    ConstantLambda, PaperSchedule, as_schedule, ScheduledProblem, lambda_setting,
)
from .initial import (
    sample_initial_vectors, sample_initial_overlaps,
)
from .risk_partials import (
    LambdaConstants, lambda_constants, partials, zeta_lean,
)
from .overlap_steps import (
    pgd_step, flow_velocity,
)
from .pgd_trajectory import (
    PGDTrajectory, pgd_route_gap_bound,
)
from .pgd import (
    overlap_pgd, lambda_table,
)
from .pgd_vectors import (
    VectorPGDTrajectory, vector_pgd,
)
from .flow import (
    FlowTrajectory, overlap_flow, manifold_flow, manifold_flow_velocity, schedule_in_flow_time,
)
from .phase_portrait import (
    FixedPoint, manifold_fixed_points, manifold_jacobian, Separatrix, separatrix,
    predicted_limit_sign,
)
from .experiments import (
    PopulationExperiment, PAPER_EXPERIMENTS, ExperimentResult, AlignmentSummary, initial_overlaps,
    run_population_experiment, run_population_experiments, summarize_alignment,
)
from .stalls import (
    PerturbationResult, perturbed_pgd, StallSummary, stall_summary, BeyondTheoremSummary,
    beyond_theorem_summary,
)
from .hessian_fd import (
    FDSpectrum, tangent_frame, riemannian_hessian_fd, oracle_spectrum_fd, LocalOracleHessian,
    local_oracle_hessian_fd, overlaps_near_oracle,
)

__all__ = [
    "OdeOptions", "ODE_METHODS", "ConstantLambda", "PaperSchedule", "as_schedule",
    "ScheduledProblem", "lambda_setting", "sample_initial_vectors", "sample_initial_overlaps",
    "LambdaConstants", "lambda_constants", "partials", "zeta_lean", "pgd_step", "flow_velocity",
    "PGDTrajectory", "overlap_pgd", "lambda_table", "pgd_route_gap_bound", "VectorPGDTrajectory",
    "vector_pgd", "FlowTrajectory", "overlap_flow", "manifold_flow", "manifold_flow_velocity",
    "schedule_in_flow_time", "FixedPoint", "manifold_fixed_points", "manifold_jacobian",
    "Separatrix", "separatrix", "predicted_limit_sign", "PopulationExperiment", "PAPER_EXPERIMENTS",
    "ExperimentResult", "AlignmentSummary", "initial_overlaps", "run_population_experiment",
    "run_population_experiments", "summarize_alignment", "PerturbationResult", "perturbed_pgd",
    "StallSummary", "stall_summary", "BeyondTheoremSummary", "beyond_theorem_summary", "FDSpectrum",
    "tangent_frame", "riemannian_hessian_fd", "oracle_spectrum_fd", "LocalOracleHessian",
    "local_oracle_hessian_fd", "overlaps_near_oracle",
]
