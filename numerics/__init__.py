"""Training dynamics and Monte Carlo for single-location regression."""

from .bayes_mc import bayes_predictor, bayes_risk_mc
from .beyond_theorem import beyond_theorem_summary
from .experiments import (
    PAPER_EXPERIMENTS, PopulationExperiment, run_population_experiment, run_population_experiments,
    summarize_alignment,
)
from .executors import RunJob, map_jobs, map_runs
from .flow import FlowTrajectory, manifold_flow, overlap_flow
from .geometry import overlaps_from_vectors, random_orthonormal, vectors_from_overlaps
from .initial import sample_initial_overlaps, sample_initial_vectors
from .montecarlo import Estimate, population_risk_mc, risk_mc_from_vectors
from .ols import OLSResult, ols_risk_mc
from .pgd import PGDResult, overlap_pgd
from .pgd_vectors import vector_pgd
from .risk_vs_d import RiskVsD, risk_vs_d
from .schedules import ConstantLambda, PaperSchedule, as_schedule
from .sgd_experiment import (
    PAPER_SGD, SGDExperiment, run_sgd_experiment, run_sgd_sweep, sgd_flow_gap,
)
from .sgd_full import online_sgd_full
from .sgd_reduced import online_sgd_reduced
from .sgd_trajectory import SGDTrajectory
from .task import attention_predictor, sample_sequences, sample_task

__all__ = [
    "bayes_predictor", "bayes_risk_mc", "beyond_theorem_summary",
    "PAPER_EXPERIMENTS", "PopulationExperiment", "run_population_experiment",
    "run_population_experiments", "summarize_alignment",
    "RunJob", "map_jobs", "map_runs",
    "PAPER_SGD", "SGDExperiment", "run_sgd_experiment", "run_sgd_sweep", "sgd_flow_gap",
    "online_sgd_full", "online_sgd_reduced", "SGDTrajectory",
    "FlowTrajectory", "manifold_flow", "overlap_flow",
    "sample_initial_overlaps", "sample_initial_vectors",
    "PGDResult", "overlap_pgd", "vector_pgd",
    "overlaps_from_vectors", "random_orthonormal", "vectors_from_overlaps",
    "Estimate", "population_risk_mc", "risk_mc_from_vectors",
    "OLSResult", "ols_risk_mc",
    "RiskVsD", "risk_vs_d",
    "ConstantLambda", "PaperSchedule", "as_schedule",
    "attention_predictor", "sample_sequences", "sample_task",
]
