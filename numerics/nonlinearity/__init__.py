"""Monte Carlo, dynamics and online SGD for the family of attention nonlinearities
(``theory.nonlinearity``; docs/math/nonlinearities.md)."""

from .comparison import OracleComparison, fitted_slope, oracle_comparison
from .dynamics import SIGMA_FLOW_ODE, gradient_sigma, overlap_flow_sigma, overlap_pgd_sigma
from .montecarlo import population_risk_sigma_mc, predictor_sigma

__all__ = ["OracleComparison", "fitted_slope", "oracle_comparison",
           "SIGMA_FLOW_ODE", "gradient_sigma", "overlap_flow_sigma", "overlap_pgd_sigma",
           "population_risk_sigma_mc", "predictor_sigma"]
