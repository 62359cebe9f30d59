"""Closed forms, special functions and symbolic derivations for single-location regression.

Companion code of Marion, Berthier, Biau, Boyer, "Attention layers provably solve
single-location regression", ICLR 2025 (arXiv 2410.01537). The sympy layer lives in
``theory.symbolic`` and is not imported here (sympy is slow to import).
"""

from .baselines import (
    OracleOptimum, attention_linear_crossover, linear_predictor_risk, linear_risk,
    linear_risk_fixed_location, null_risk, oracle_best_lambda, oracle_risk_prescribed,
    prescribed_lambda,
)
from .bayes import bayes_risk_quad
from .corollary2 import SEQUENCES, corollary2_rate
from .parameters import OVERLAP_NAMES, PAPER_D, PAPER_GAMMA, PAPER_L, Overlaps, Problem, Task, gram_matrix
from .risk import oracle_risk, population_risk, population_risk_grad
from .quad_result import QuadResult
from .risk_quad import population_risk_quad
from .special import erf_prime, erf_second, erf_third, gate_correlation
from .stability import critical_lambda, oracle_hessian, oracle_local_rates
from .zeta import zeta, zeta_at_zero, zeta_t, zeta_tt, zeta_tt_at_zero, zeta_ttt

__all__ = [
    "OracleOptimum", "attention_linear_crossover", "linear_predictor_risk", "linear_risk",
    "linear_risk_fixed_location", "null_risk", "oracle_best_lambda", "oracle_risk_prescribed",
    "prescribed_lambda",
    "bayes_risk_quad",
    "SEQUENCES", "corollary2_rate",
    "OVERLAP_NAMES", "Overlaps", "Problem", "Task", "gram_matrix", "PAPER_D", "PAPER_GAMMA", "PAPER_L",
    "oracle_risk", "population_risk", "population_risk_grad",
    "QuadResult", "population_risk_quad",
    "erf_prime", "erf_second", "erf_third", "gate_correlation",
    "critical_lambda", "oracle_hessian", "oracle_local_rates",
    "zeta", "zeta_at_zero", "zeta_t", "zeta_tt", "zeta_tt_at_zero", "zeta_ttt",
]
