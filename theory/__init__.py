"""Closed forms, special functions and symbolic derivations for single-location regression.

Companion code of Marion, Berthier, Biau, Boyer, "Attention layers provably solve
single-location regression", ICLR 2025 (arXiv 2410.01537).
"""

from .parameters import OVERLAP_NAMES, Overlaps, Problem, gram_matrix
from .risk import oracle_risk, population_risk, population_risk_grad
from .stability import critical_lambda, oracle_hessian, oracle_local_rates
from .special import erf_prime, erf_second, erf_third, gate_correlation
from .zeta import zeta, zeta_at_zero, zeta_t, zeta_tt, zeta_tt_at_zero, zeta_ttt

__all__ = [
    "OVERLAP_NAMES", "Overlaps", "Problem", "gram_matrix",
    "oracle_risk", "population_risk", "population_risk_grad",
    "critical_lambda", "oracle_hessian", "oracle_local_rates",
    "erf_prime", "erf_second", "erf_third", "gate_correlation",
    "zeta", "zeta_t", "zeta_tt", "zeta_ttt", "zeta_at_zero", "zeta_tt_at_zero",
]
