"""Closed-form population risk of the attention predictor (docs/math/risk.md#closed-form-population-risk; paper Theorem 1).

T(X) = sum_l erf(lambda <X_l, k>) <X_l, v> and R(k, v) = E[(Y - T(X))^2]. With s = sqrt(d/2),
g = lambda gamma, c2 = sqrt(1 + 2 g^2), A = lambda s kappa, a = A / c2 and C = C_lambda:

    R = eps^2 + gamma^2 - 2 E1 + E2 + N,
    E1 = gamma^2 nu erf(a) + lambda gamma^2 s eta theta erf'(a)/c2 + lambda^2 gamma^4 eta rho erf''(a)/c2^2,
    E2 = (s^2 theta^2 + gamma^2) zeta(A, g) + 2 lambda gamma^2 s theta rho zeta'(A, g)
         + lambda^2 gamma^4 rho^2 zeta''(A, g),
    N  = (L-1) [zeta(0, lambda) + lambda^2 rho^2 zeta''(0, lambda)] + (L-1)(L-2) C^2 rho^2
         + 2 (L-1) C rho [s theta erf(a) + lambda gamma^2 rho erf'(a)/c2].

E1 = E[Y erf(lambda<X_J,k>) <X_J,v>], E2 = E[erf(lambda<X_J,k>)^2 <X_J,v>^2], N collects the
L-1 noise tokens. Exact for every finite d, L and every feasible overlaps; it depends on (k, v)
only through the five overlaps. Siblings: ``theory.risk_quad.population_risk_quad`` (1-D Gaussian
quadrature, independent algebra) and ``numerics.montecarlo.population_risk.population_risk_mc`` (sampling).
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from .parameters import OVERLAP_NAMES, Overlaps, Problem, check_realisable, check_representable
from .special import erf_derivatives, erf_prime, erf_second, gate_correlation
from .zeta import zeta, zeta_at_zero, zeta_of_ratio, zeta_t_derivatives, zeta_tt_at_zero

__all__ = ["population_risk", "population_risk_grad", "oracle_risk", "risk_from_arrays",
           "risk_grad_from_arrays"]


def _scalars(problem: Problem):
    d, L, gamma, eps, lam = (np.asarray(x, dtype=float) for x in
                             (problem.d, problem.L, problem.gamma, problem.eps, problem.lam))
    return d, L, gamma, eps, lam


def _common(d, gamma, lam, kappa):
    s = np.sqrt(d / 2.0)
    g = lam * gamma
    c2 = np.sqrt(1.0 + 2.0 * g * g)
    A = lam * s * kappa
    return s, g, c2, A, A / c2


def _ratios(d, gamma, lam, kappa):
    """Overflow-free pieces of the closed form for every finite lambda, gamma > 0:

    s, a = lambda s kappa / c2, r = lambda / c2 = 1 / hypot(1/lambda, sqrt2 gamma) (<= lambda and
    <= 1/(sqrt2 gamma)), g = lambda gamma (may be +inf, used only through 1/sqrt(1 + 4 g^2)),
    and q = c2 / c1 = 1 / sqrt(1 + 4 g^2). Forming lambda^2 or c2 directly overflows for
    lambda gamma > 1.3e154; these ratios do not (1/lambda = inf for subnormal lambda gives r = 0,
    within one subnormal of the exact r).
    """
    with np.errstate(divide="ignore", over="ignore"):
        r = 1.0 / np.hypot(1.0 / lam, np.sqrt(2.0) * gamma)
        g = lam * gamma
        q = 1.0 / np.hypot(1.0, 2.0 * g)
    s = np.sqrt(d / 2.0)
    return s, r * s * kappa, r, g, q


def _lam2_zeta_tt_at_zero(lam):
    """lambda^2 zeta''(0, lambda) = (8/pi) (lambda/c2)^2 / sqrt(1 + 4 lambda^2), without overflow."""
    with np.errstate(divide="ignore", over="ignore"):
        r = 1.0 / np.hypot(1.0 / lam, np.sqrt(2.0))
        return (8.0 / np.pi) * r * r / np.hypot(1.0, 2.0 * lam)


def risk_from_arrays(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho):
    """The closed-form risk on plain float arrays (no validation); see ``population_risk``.

    zeta'(A, g) and zeta''(A, g) are inlined from their formulas (theory.zeta) so that the
    erf and exp evaluations at a = A/c2 and A/c1 are shared: this is the hot path of sweeps.
    Every factor lambda^j gamma^(2j) / c^j is formed as a product of bounded ratios
    (``_ratios``), so the value is finite whenever R is representable, for any lambda up to
    the float64 maximum and gamma up to ~1e154 (where gamma^2 itself overflows).
    """
    s, a, r, g, q = _ratios(d, gamma, lam, kappa)
    g2 = gamma * gamma
    b = g2 * r            # lambda gamma^2 / c2
    C = gate_correlation(lam)
    ea, d1, d2 = erf(a), erf_prime(a), erf_second(a)
    u = a * q             # A / c1
    eu, du = erf(u), erf_prime(u)
    # lambda gamma^2 zeta'(A, g) and (lambda gamma^2)^2 zeta''(A, g) (formulas of theory.zeta)
    b_z1 = 2.0 * b * eu * d1
    b2_z2 = 2.0 * b * (b * q * du * d1 + b * eu * d2)
    E1 = g2 * nu * ea + b * s * eta * theta * d1 + b * b * eta * rho * d2
    E2 = ((s * s * theta * theta + g2) * zeta_of_ratio(a, g) + 2.0 * s * theta * rho * b_z1
          + rho * rho * b2_z2)
    N = ((L - 1) * (zeta_at_zero(lam) + rho * rho * _lam2_zeta_tt_at_zero(lam))
         + (L - 1) * (L - 2) * C * C * rho * rho
         + 2.0 * (L - 1) * C * rho * (s * theta * ea + b * rho * d1))
    return eps * eps + g2 - 2.0 * E1 + E2 + N


def risk_grad_from_arrays(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho):
    """The five partial derivatives (R_kappa, R_nu, R_theta, R_eta, R_rho) of the closed form.

    Obtained by differentiating the formula of the module docstring term by term
    (d a/d kappa = lambda s / c2, d A/d kappa = lambda s); checked against sympy and finite
    differences in the tests. Returns a tuple of five broadcast arrays.
    """
    s, g, c2, A, a = _common(d, gamma, lam, kappa)
    g2 = gamma * gamma
    C = gate_correlation(lam)
    ea, (d1, d2, d3) = erf(a), erf_derivatives(a)  # one exp for the three (the same values)
    z1, z2, z3 = zeta_t_derivatives(A, g)
    da = lam * s / c2
    dE1 = da * (g2 * nu * d1 + lam * g2 * s * eta * theta * d2 / c2
                + lam**2 * g2**2 * eta * rho * d3 / c2**2)
    dE2 = lam * s * ((s * s * theta * theta + g2) * z1 + 2 * lam * g2 * s * theta * rho * z2
                     + lam**2 * g2**2 * rho * rho * z3)
    dN = 2 * (L - 1) * C * rho * da * (s * theta * d1 + lam * g2 * rho * d2 / c2)
    r_kappa = -2 * dE1 + dE2 + dN
    r_nu = -2 * g2 * ea
    r_theta = (-2 * lam * g2 * s * eta * d1 / c2 + 2 * s * s * theta * zeta(A, g)
               + 2 * lam * g2 * s * rho * z1 + 2 * (L - 1) * C * rho * s * ea)
    r_eta = -2 * (lam * g2 * s * theta * d1 / c2 + lam**2 * g2**2 * rho * d2 / c2**2)
    r_rho = (-2 * lam**2 * g2**2 * eta * d2 / c2**2 + 2 * lam * g2 * s * theta * z1
             + 2 * lam**2 * g2**2 * rho * z2
             + 2 * (L - 1) * lam**2 * rho * zeta_tt_at_zero(lam) + 2 * (L - 1) * (L - 2) * C * C * rho
             + 2 * (L - 1) * C * (s * theta * ea + 2 * lam * g2 * rho * d1 / c2))
    shape = np.broadcast(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho).shape
    # a fresh float array (or float64 scalar) of the broadcast shape; broadcast only where a partial lacks
    # dimensions (the flow's right-hand side calls this on scalars, where broadcast_to dominated)
    return tuple(np.multiply(r, 1.0) if np.shape(r) == shape else np.broadcast_to(r, shape) * 1.0
                 for r in (r_kappa, r_nu, r_theta, r_eta, r_rho))


def population_risk(problem: Problem, overlaps: Overlaps):
    """Population risk R = E[(Y - T(X))^2] in closed form (docs/math/risk.md#closed-form-population-risk, paper Theorem 1).

    Broadcasts over array-valued fields of ``problem`` and ``overlaps``. Exact at finite d.
    Siblings: ``population_risk_quad`` (quadrature), ``population_risk_mc`` (Monte Carlo).
    """
    check_realisable(problem, overlaps)
    with np.errstate(over="ignore", invalid="ignore"):
        value = risk_from_arrays(*_scalars(problem),
                                 *(np.asarray(x, dtype=float) for x in overlaps.as_tuple()))
    return check_representable(value, problem)


def population_risk_grad(problem: Problem, overlaps: Overlaps) -> dict:
    """The five partial derivatives dR/d(kappa, nu, theta, eta, rho) of the closed form, as a dict.

    On the manifold M (theta = eta = rho = 0) the last three vanish (invariance of M, docs/math/dynamics.md#invariant-manifold).
    """
    check_realisable(problem, overlaps)
    grads = risk_grad_from_arrays(*_scalars(problem), *(np.asarray(x, dtype=float) for x in overlaps.as_tuple()))
    return dict(zip(OVERLAP_NAMES, grads))


def oracle_risk(problem: Problem):
    """Risk at the oracle (k, v) = (k*, v*) (paper Theorem 1; docs/math/baselines.md#oracle-risk):

        R(k*, v*) = eps^2 + gamma^2 E[(1 - erf(lambda (s + gamma Z)))^2] + (L-1) zeta(0, lambda)
                  = eps^2 + gamma^2 [1 - 2 erf(lambda s / c2) + zeta(lambda s, lambda gamma)]
                    + (L-1) zeta(0, lambda).

    The first error term is the informative gate falling short of 1, the second the leakage of
    the L-1 noise tokens. Exact at finite d.
    """
    d, L, gamma, eps, lam = _scalars(problem)
    s, a, r, g, q = _ratios(d, gamma, lam, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        value = (eps * eps + gamma * gamma * (1.0 - 2.0 * erf(a) + zeta_of_ratio(a, g))
                 + (L - 1) * zeta_at_zero(lam))
    return check_representable(value, problem)
