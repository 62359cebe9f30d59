"""Closed forms, special functions and symbolic derivations for single-location regression.

Companion code of Marion, Berthier, Biau, Boyer, "Attention layers provably solve
single-location regression", ICLR 2025 (arXiv 2410.01537). The sympy layer lives in
``theory.symbolic`` and is not imported here (sympy is slow to import).
"""

from .namespace import lazy_namespace

# module -> the names it exports; each module is imported when one of its names is first used.
lazy_namespace(__name__, {
    ".baselines": ("OracleOptimum", "attention_linear_crossover", "linear_predictor_risk", "linear_risk",
        "linear_risk_fixed_location", "null_risk", "oracle_best_lambda", "oracle_risk_prescribed",
        "prescribed_lambda",),
    ".bayes": ("bayes_risk_quad",),
    ".corollary2": ("SEQUENCES", "corollary2_rate"),
    ".parameters": ("OVERLAP_NAMES", "Overlaps", "Problem", "Task", "gram_matrix", "PAPER_D", "PAPER_GAMMA",
        "PAPER_L",),
    ".risk": ("oracle_risk", "population_risk", "population_risk_grad"),
    ".quad_result": ("QuadResult",),
    ".risk_quad": ("population_risk_quad",),
    ".special": ("erf_prime", "erf_second", "erf_third", "gate_correlation"),
    ".stability": ("critical_lambda", "oracle_hessian", "oracle_local_rates"),
    ".zeta": ("zeta", "zeta_at_zero", "zeta_t", "zeta_tt", "zeta_tt_at_zero", "zeta_ttt"),
})
