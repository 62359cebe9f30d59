"""The invariant manifold M = {theta = eta = rho = 0} and the reduced flow on it (docs/math/dynamics.md#invariant-manifold).

Proved symbolically, for all parameters (d, L, gamma, eps, lam > 0):

- ``manifold_invariance``: R is a polynomial of degree 2 in (theta, eta, rho) without linear
  terms, so R_theta = R_eta = R_rho = 0 on M; the flow's theta', eta', rho' and one PGD step's
  theta_new, eta_new, rho_new vanish on M (any step size alpha). Each is simplified to exactly 0.
- ``reduced_flow``: on M the flow is kappa' = -(1 - kappa^2) R_kappa, nu' = -(1 - nu^2) R_nu with,
  a_l = lambda s / sqrt(1 + 2 lambda^2 gamma^2) and b = a_l / sqrt(1 + 4 lambda^2 gamma^2),

      R_M   = eps^2 + (L-1) zeta(0,lambda) + gamma^2 [1 - 2 nu erf(a_l kappa) + zeta(lambda s kappa, lambda gamma)],
      R_nu  = -2 gamma^2 erf(a_l kappa),
      R_kappa = 2 gamma^2 a_l erf'(a_l kappa) [erf(b kappa) - nu],

  the docs/math/dynamics.md#flow-on-m formulas; ``reduced_flow().residuals`` are the simplified differences (all 0).
- ``oracle_local_rates_symbolic``: in angles kappa = cos phi, nu = cos psi the flow is
  phi' = sin(phi) R_kappa(cos phi, cos psi), psi' = sin(psi) R_nu(cos phi); its linearisation at
  (phi, psi) = (0, 0) is diagonal with exponential rates
      r_phi = -R_kappa(1, 1) = 2 gamma^2 a_l erf'(a_l) erfc(b),   r_psi = -R_nu(1, 1) = 2 gamma^2 erf(a_l),
  so phi, psi ~ exp(-r t) and 1 - kappa, 1 - nu ~ exp(-2 r t) (the kappa-Jacobian eigenvalues are
  -2 r_phi, -2 r_psi). Numeric sibling: ``theory.stability.oracle_local_rates``.

Fixed points and their classification: ``theory.symbolic.fixed_points``.
"""

from __future__ import annotations

import dataclasses
import functools

import sympy as sp

from .dynamics import flow_in_partials, partial_symbols, pgd_step_in_partials
from ._exact import partial_at, simplified
from .functions import Zeta, erf_prime_expr
from .risk_expr import risk_expression, risk_symbols

__all__ = ["ManifoldInvariance", "manifold_invariance", "ReducedFlow", "reduced_flow",
           "reduced_parameters", "LocalRatesExpressions", "oracle_local_rates_symbolic"]


@dataclasses.dataclass(frozen=True)
class ManifoldInvariance:
    """Simplified expressions that must all be exactly 0 (see module docstring)."""

    linear_terms: tuple          # coefficients of theta, eta, rho (degree-1 part) in R
    max_degree: int              # total degree of R in (theta, eta, rho)
    partials_on_M: tuple         # (R_theta, R_eta, R_rho) on M
    flow_on_M: tuple             # (theta', eta', rho') on M
    pgd_on_M: tuple              # (theta_new, eta_new, rho_new) on M, any alpha

    @property
    def proved(self) -> bool:
        zeros = self.linear_terms + self.partials_on_M + self.flow_on_M + self.pgd_on_M
        return all(z == 0 for z in zeros) and self.max_degree <= 2


@functools.lru_cache(maxsize=None)
def _risk_gradient_on_manifold() -> tuple:
    """(R_kappa, R_nu, R_theta, R_eta, R_rho) on M = {theta = eta = rho = 0}: the partials of
    ``risk_expression`` (as ``theory.symbolic.risk_gradient_expressions``) restricted to M, derived on M."""
    S = risk_symbols()
    R = risk_expression()
    return tuple(partial_at(R, o, S.manifold) for o in S.overlaps)


@functools.lru_cache(maxsize=None)
def _flow_on_manifold() -> tuple:
    """The five-overlap ODE (``theory.symbolic.overlap_flow_expressions``) on M: its form in the
    partials on M, with the partials of R on M substituted (the same expressions as substituting
    the partials first and restricting to M after, derived on M)."""
    M = risk_symbols().manifold
    partials = dict(zip(partial_symbols(), _risk_gradient_on_manifold()))
    return tuple(x.subs(M).xreplace(partials) for x in flow_in_partials())


@functools.lru_cache(maxsize=None)
def manifold_invariance() -> ManifoldInvariance:
    S = risk_symbols()
    M = S.manifold
    off = (S.theta, S.eta, S.rho)
    poly = sp.Poly(sp.expand(risk_expression()), *off)
    linear = tuple(simplified(poly.coeff_monomial(m)) for m in off)
    partials = tuple(simplified(x) for x in _risk_gradient_on_manifold()[2:])
    flow = tuple(simplified(x) for x in _flow_on_manifold()[2:])
    # One PGD step: on M the partials R_theta, R_eta, R_rho are 0 (proved just above).
    _, new = pgd_step_in_partials()
    _, _, Rt, Re, Rr = partial_symbols()
    pgd = tuple(simplified(x.subs(M).subs({Rt: 0, Re: 0, Rr: 0})) for x in new[2:])
    return ManifoldInvariance(linear, poly.total_degree(), partials, flow, pgd)


def reduced_parameters():
    """(a_l, b) of the module docstring, in the symbols of ``risk_symbols``."""
    S = risk_symbols()
    s, g, c2, _, _ = S.derived()
    a_l = S.lam * s / c2
    return a_l, a_l / sp.sqrt(1 + 4 * g**2)


@dataclasses.dataclass(frozen=True)
class ReducedFlow:
    """The flow on M in (kappa, nu): derived (from the five-overlap ODE) and docs/math/dynamics.md#flow-on-m forms."""

    risk: sp.Expr            # R_M, stated form
    r_kappa: sp.Expr         # dR_M/dkappa, stated form
    r_nu: sp.Expr            # dR_M/dnu, stated form
    kappa_dot: sp.Expr       # -(1 - kappa^2) r_kappa
    nu_dot: sp.Expr          # -(1 - nu^2) r_nu
    residuals: tuple         # derived minus stated form, simplified: (risk, r_kappa, r_nu, kappa', nu')

    @property
    def proved(self) -> bool:
        return all(r == 0 for r in self.residuals)


@functools.lru_cache(maxsize=None)
def reduced_flow() -> ReducedFlow:
    S = risk_symbols()
    M = S.manifold
    kappa, nu = S.kappa, S.nu
    _, g, _, _, _ = S.derived()
    s = sp.sqrt(S.d / 2)
    a_l, b = reduced_parameters()
    stated_risk = (S.eps**2 + (S.L - 1) * Zeta(0, S.lam)
                 + S.gamma**2 * (1 - 2 * nu * sp.erf(a_l * kappa) + Zeta(S.lam * s * kappa, g)))
    stated_r_nu = -2 * S.gamma**2 * sp.erf(a_l * kappa)
    stated_r_kappa = 2 * S.gamma**2 * a_l * erf_prime_expr(a_l * kappa) * (sp.erf(b * kappa) - nu)
    kappa_dot = -(1 - kappa**2) * stated_r_kappa
    nu_dot = -(1 - nu**2) * stated_r_nu
    grads = _risk_gradient_on_manifold()
    flow = _flow_on_manifold()
    derived = (risk_expression().subs(M), grads[0], grads[1], flow[0], flow[1])
    stated = (stated_risk, stated_r_kappa, stated_r_nu, kappa_dot, nu_dot)
    residuals = tuple(simplified(sp.expand((x - y).rewrite(sp.erf))) for x, y in zip(derived, stated))
    return ReducedFlow(stated_risk, stated_r_kappa, stated_r_nu, kappa_dot, nu_dot, residuals)


@dataclasses.dataclass(frozen=True)
class LocalRatesExpressions:
    """Linearisation at the oracle (phi, psi) = (0, 0) of the angle flow on M."""

    jacobian: sp.Matrix      # d(phi', psi')/d(phi, psi) at (0, 0), derived
    r_phi: sp.Expr           # closed form 2 gamma^2 a_l erf'(a_l) erfc(b)
    r_psi: sp.Expr           # closed form 2 gamma^2 erf(a_l)
    residuals: tuple         # jacobian - diag(-r_phi, -r_psi), simplified entries
    positive: tuple          # (r_phi > 0, r_psi > 0) as decided by sympy for all parameters

    @property
    def proved(self) -> bool:
        return all(r == 0 for r in self.residuals) and all(p is True for p in self.positive)


@functools.lru_cache(maxsize=None)
def oracle_local_rates_symbolic() -> LocalRatesExpressions:
    S = risk_symbols()
    phi, psi = sp.symbols("phi psi", real=True)
    flow = flow_in_partials()
    Rk, Rn, _, _, _ = partial_symbols()
    grads = _risk_gradient_on_manifold()
    on_M = {**S.manifold, partial_symbols()[2]: 0, partial_symbols()[3]: 0, partial_symbols()[4]: 0}
    # kappa' = -(1 - kappa^2) R_kappa on M exactly, so phi' = -kappa'/sin(phi) = sin(phi) R_kappa.
    angles = {S.kappa: sp.cos(phi), S.nu: sp.cos(psi)}
    phi_dot = sp.simplify(flow[0].subs(on_M).subs(angles) / (-sp.sin(phi)))
    psi_dot = sp.simplify(flow[1].subs(on_M).subs(angles) / (-sp.sin(psi)))
    partials = {Rk: grads[0].subs(angles), Rn: grads[1].subs(angles)}
    field = sp.Matrix([phi_dot, psi_dot]).subs(partials)
    jac = field.jacobian([phi, psi]).subs({phi: 0, psi: 0})
    a_l, b = reduced_parameters()
    r_phi = 2 * S.gamma**2 * a_l * erf_prime_expr(a_l) * sp.erfc(b)
    r_psi = 2 * S.gamma**2 * sp.erf(a_l)
    target = sp.diag(-r_phi, -r_psi)
    residuals = tuple(simplified(sp.expand((jac[i] - target[i]).rewrite(sp.erf))) for i in range(4))
    # erfc(b) > 0 for every real b, and erf(a_l) > 0 once sympy decides a_l > 0 (erf is odd and
    # increasing); sympy < 1.14 cannot decide the sign of erf itself, so both are replaced by
    # positive symbols p, q and sympy decides the sign of the rest.
    p, q = sp.symbols("p q", positive=True)
    erf_a_positive = q if a_l.is_positive else sp.erf(a_l)
    positive = (r_phi.subs(sp.erfc(b), p).is_positive, r_psi.subs(sp.erf(a_l), erf_a_positive).is_positive)
    return LocalRatesExpressions(jac, r_phi, r_psi, residuals, positive)
