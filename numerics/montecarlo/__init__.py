"""Monte Carlo on the task: the sampler and the attention predictor, vectors from overlaps, and
finite-sample estimates (with standard errors) of the population, Bayes and linear-baseline risks."""

from theory.namespace import lazy_namespace

# module -> the names it exports; each module is imported when one of its names is first used.
lazy_namespace(__name__, {
    ".task": ("sample_task", "sample_sequences", "attention_predictor"),
    ".geometry": ("vectors_from_overlaps", "overlaps_from_vectors", "random_orthonormal"),
    ".population_risk": ("Estimate", "population_risk_mc", "risk_mc_from_vectors"),
    ".bayes_risk": ("sample_token_statistics", "posterior_weights", "conditional_variance",
        "bayes_predictor", "bayes_risk_mc"),
    ".ols": ("OLSResult", "ols_fit", "ols_risk_mc"),
    ".risk_vs_d": ("RiskVsDSize", "RiskVsD", "risk_vs_d"),
    ".rate_fits": ("PowerLawFit", "power_law_fit", "log_slope_fit", "weighted_slope"),
})
