"""Training dynamics and Monte Carlo for single-location regression."""

from .bayes_mc import bayes_predictor, bayes_risk_mc
from .geometry import overlaps_from_vectors, random_orthonormal, vectors_from_overlaps
from .montecarlo import Estimate, population_risk_mc, risk_mc_from_vectors
from .ols import OLSResult, ols_risk_mc
from .risk_vs_d import RiskVsD, risk_vs_d
from .schedules import ConstantLambda, PaperSchedule, as_schedule
from .task import attention_predictor, sample_sequences, sample_task

__all__ = [
    "bayes_predictor", "bayes_risk_mc",
    "overlaps_from_vectors", "random_orthonormal", "vectors_from_overlaps",
    "Estimate", "population_risk_mc", "risk_mc_from_vectors",
    "OLSResult", "ols_risk_mc",
    "RiskVsD", "risk_vs_d",
    "ConstantLambda", "PaperSchedule", "as_schedule",
    "attention_predictor", "sample_sequences", "sample_task",
]
