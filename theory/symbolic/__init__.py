"""Symbolic layer (sympy): the risk in overlaps, its gradient, the overlap dynamics, the
invariant manifold M, fixed points, the Hessian at the oracle and large-d asymptotics.

Everything is derived lazily on first use and cached (``functools.lru_cache``); importing this
package derives nothing. Numeric functions (``risk_symbolic``, ``flow_velocity_symbolic``,
``pgd_step_symbolic``, ...) are the derivations turned into numpy code by ``sympy.lambdify``;
they are the symbolic siblings of the hand-written closed forms in ``theory.risk`` and
``theory.stability``. docs/math/risk.md#closed-form-population-risk.
"""

from .asymptotics import (corollary2_exponent, corollary2_excess_leading, leakage_series,
                          minimise_oracle_excess, optimal_excess_predicted, optimal_expansion,
                          optimal_lambda_predicted, shortfall_leading)
from .dynamics import (flow_in_partials, overlap_flow_expressions, flow_velocity_symbolic,
                       pgd_step_in_partials, pgd_step_symbolic)
from .fixed_points import classify_on_grid, fixed_points, reduced_jacobian
from .functions import Zeta, ZetaT, ZetaTT, ZetaTTT, lambdify_modules, numeric_function, zeta_at_zero
from .hessian import critical_lambda_limit, oracle_hessian_block_symbolic, oracle_hessian_expressions
from .highdim_branch_end import branch_end_expression, branch_end_symbolic, branch_end_symbols
from .highdim_limit import limit_drift_expressions, limit_drift_symbolic, limit_symbols
from .identities import all_identity_proofs, stein_moment
from .manifold import oracle_local_rates_symbolic, manifold_invariance, reduced_flow
from .risk_expr import (risk_expression, risk_expression_from_model, risk_grad_symbolic,
                        risk_gradient_expressions, risk_symbolic, risk_symbols)

__all__ = [
    "branch_end_expression", "branch_end_symbolic", "branch_end_symbols",
    "limit_drift_expressions", "limit_drift_symbolic", "limit_symbols",
    "Zeta", "ZetaT", "ZetaTT", "ZetaTTT", "lambdify_modules", "numeric_function", "zeta_at_zero",
    "all_identity_proofs", "stein_moment",
    "risk_symbols", "risk_expression", "risk_expression_from_model", "risk_gradient_expressions",
    "risk_symbolic", "risk_grad_symbolic",
    "flow_in_partials", "pgd_step_in_partials", "overlap_flow_expressions",
    "flow_velocity_symbolic", "pgd_step_symbolic",
    "manifold_invariance", "reduced_flow", "oracle_local_rates_symbolic",
    "fixed_points", "reduced_jacobian", "classify_on_grid",
    "oracle_hessian_expressions", "oracle_hessian_block_symbolic", "critical_lambda_limit",
    "leakage_series", "shortfall_leading", "corollary2_exponent", "optimal_expansion",
    "corollary2_excess_leading", "optimal_lambda_predicted", "optimal_excess_predicted",
    "minimise_oracle_excess",
]
