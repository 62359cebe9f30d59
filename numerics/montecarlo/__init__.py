"""Monte Carlo on the task: the sampler and the attention predictor, vectors from overlaps, and
finite-sample estimates (with standard errors) of the population, Bayes and linear-baseline risks."""

from .task import (
    sample_task, sample_sequences, attention_predictor,
)
from .geometry import (
    vectors_from_overlaps, overlaps_from_vectors, random_orthonormal,
)
from .population_risk import (
    Estimate, population_risk_mc, risk_mc_from_vectors,
)
from .bayes_risk import (
    sample_token_statistics, posterior_weights, conditional_variance, bayes_predictor, bayes_risk_mc,
)
from .ols import (
    OLSResult, ols_fit, ols_risk_mc,
)
from .risk_vs_d import (
    RiskVsDSize, RiskVsD, risk_vs_d,
)
from .rate_fits import (
    PowerLawFit, power_law_fit, log_slope_fit, weighted_slope,
)

__all__ = [
    "sample_task", "sample_sequences", "attention_predictor", "vectors_from_overlaps",
    "overlaps_from_vectors", "random_orthonormal", "Estimate", "population_risk_mc",
    "risk_mc_from_vectors", "sample_token_statistics", "posterior_weights", "conditional_variance",
    "bayes_predictor", "bayes_risk_mc", "OLSResult", "ols_fit", "ols_risk_mc", "RiskVsDSize",
    "RiskVsD", "risk_vs_d", "PowerLawFit", "power_law_fit", "log_slope_fit", "weighted_slope",
]
