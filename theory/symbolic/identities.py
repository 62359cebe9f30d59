"""Gaussian-erf identities of docs/math/risk.md#gaussian-erf-identities, proved with sympy, and the Stein moment operator.

Z ~ N(0, 1). Each ``prove_*`` function returns an ``IdentityProof`` whose ``residual`` is the
simplified difference of the two sides (exactly 0 when proved) together with the boundary
values that fix the integration constant:

- E[erf(t + gZ)] = erf(t / sqrt(1+2g^2)): the t-derivatives agree (a Gaussian integral done
  by sympy) and both sides vanish at t = 0 (oddness).
- d/dt zeta(t, g) = (2/c2) erf(t/c1) erf'(t/c2): d/dt zeta = 2 E[erf erf'(t + gZ)]; completing
  the square turns exp(-(t+gz)^2) phi(z) into K phi((z - mu)/sigma)/sigma and the first
  identity evaluates the remaining E[erf(t + g mu + g sigma W)].
- C_lambda = E[erf(lambda Z) Z] = 2 lambda / sqrt(pi (1 + 2 lambda^2)) by Stein's lemma
  E[Z f(Z)] = E[f'(Z)] and a Gaussian integral.
- zeta(0, g) = (2/pi) arcsin(2g^2/(1+2g^2)): the g-derivatives agree through the heat equation
  d/dg zeta = g d^2/dt^2 zeta, and both sides vanish at g = 0 (zeta(0, 0) = erf(0)^2).

``stein_moment(base, A, g, m)`` is E[U^m f(A + gU)] for U ~ N(0, 1) given base = E[f(A + gU)]
as an expression in A, by the recursion (Stein's lemma applied to h(U) = U^(m-1) f(A + gU))

    E[U^m f(A+gU)] = g d/dA E[U^(m-1) f(A+gU)] + (m-1) E[U^(m-2) f(A+gU)].
"""

from __future__ import annotations

import dataclasses
import functools

import sympy as sp

from ._exact import simplified
from .functions import ZetaT, erf_prime_expr, zeta_at_zero

__all__ = ["IdentityProof", "stein_moment", "prove_erf_mean", "prove_zeta_t",
           "prove_gate_correlation", "prove_zeta_at_zero", "all_identity_proofs"]


@dataclasses.dataclass(frozen=True)
class IdentityProof:
    """A symbolic identity check: ``residual`` (simplified LHS' - RHS') and boundary values."""

    name: str
    residual: sp.Expr
    boundary_lhs: sp.Expr
    boundary_rhs: sp.Expr

    @property
    def proved(self) -> bool:
        return self.residual == 0 and sp.simplify(self.boundary_lhs - self.boundary_rhs) == 0


def stein_moment(base, A, g, m: int):
    """E[U^m f(A + gU)], U ~ N(0, 1), from base = E[f(A + gU)] (an expression in A); m >= 0."""
    if m < 0:
        raise ValueError(f"m={m!r} is not allowed: the moment order must be >= 0")
    if m == 0:
        return base
    prev = stein_moment(base, A, g, m - 1)
    out = g * sp.diff(prev, A)
    if m >= 2:
        out += (m - 1) * stein_moment(base, A, g, m - 2)
    return out


def _gaussian_expectation(expr, z):
    """E[expr(Z)] for Z ~ N(0, 1), by sympy integration."""
    return sp.integrate(expr * sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi), (z, -sp.oo, sp.oo))


@functools.lru_cache(maxsize=None)
def prove_erf_mean() -> IdentityProof:
    t = sp.Symbol("t", real=True)
    g, z = sp.Symbol("g", positive=True), sp.Symbol("z", real=True)
    lhs_prime = _gaussian_expectation(erf_prime_expr(t + g * z), z)
    rhs = sp.erf(t / sp.sqrt(1 + 2 * g**2))
    residual = sp.simplify(lhs_prime - sp.diff(rhs, t))
    # At t = 0: E[erf(gZ)] = 0 because erf is odd and Z symmetric.
    return IdentityProof("E[erf(t+gZ)] = erf(t/sqrt(1+2g^2))", residual, sp.S.Zero, rhs.subs(t, 0))


@functools.lru_cache(maxsize=None)
def prove_zeta_t() -> IdentityProof:
    t = sp.Symbol("t", real=True)
    g, z = sp.Symbol("g", positive=True), sp.Symbol("z", real=True)
    phi = lambda x: sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)
    sigma = 1 / sp.sqrt(1 + 2 * g**2)
    mu = -2 * t * g / (1 + 2 * g**2)
    K = sp.exp(-t**2 / (1 + 2 * g**2)) / sp.sqrt(1 + 2 * g**2)
    # Completing the square: exp(-(t+gz)^2) phi(z) == K phi((z-mu)/sigma)/sigma, for all z.
    square = sp.simplify(sp.expand(sp.log(sp.exp(-(t + g * z)**2) * phi(z))
                                   - sp.log(K * phi((z - mu) / sigma) / sigma), force=True))
    # Then E[erf(t+gZ) exp(-(t+gZ)^2)] = K E[erf(t + g mu + g sigma W)], first identity.
    inner = sp.erf((t + g * mu) / sp.sqrt(1 + 2 * (g * sigma)**2))
    lhs = 2 * (2 / sp.sqrt(sp.pi)) * K * inner
    residual = simplified(lhs - ZetaT(t, g).rewrite(sp.erf))
    if square != 0:  # the completion of the square failed: report its residual instead
        residual = square
    # The boundary values compare E[erf(gZ) erf'(gZ)] = 0 (odd integrand) with the formula at t = 0.
    return IdentityProof("d/dt zeta = (2/c2) erf(t/c1) erf'(t/c2)", residual, sp.S.Zero,
                         ZetaT(t, g).rewrite(sp.erf).subs(t, 0))


@functools.lru_cache(maxsize=None)
def prove_gate_correlation() -> IdentityProof:
    lam, z = sp.Symbol("lam", positive=True), sp.Symbol("z", real=True)
    # Stein: E[Z erf(lam Z)] = E[d/dz erf(lam z)] = lam E[erf'(lam Z)].
    stein = lam * _gaussian_expectation(erf_prime_expr(lam * z), z)
    rhs = 2 * lam / sp.sqrt(sp.pi * (1 + 2 * lam**2))
    residual = sp.simplify(stein - rhs)
    return IdentityProof("C_lambda = 2 lam/sqrt(pi(1+2lam^2))", residual, sp.S.Zero, rhs.subs(lam, 0))


@functools.lru_cache(maxsize=None)
def prove_zeta_at_zero() -> IdentityProof:
    g = sp.Symbol("g", positive=True)
    t = sp.Symbol("t", real=True)
    # Heat equation: d/dg zeta(0, g) = g zeta''(0, g), zeta'' explicit.
    lhs_prime = g * sp.diff(ZetaT(t, g).rewrite(sp.erf), t).subs(t, 0)
    rhs = zeta_at_zero(g)
    residual = simplified(sp.radsimp(lhs_prime - sp.diff(rhs, g)))
    # zeta(0, 0) = erf(0)^2 = 0.
    return IdentityProof("zeta(0,g) = (2/pi) asin(2g^2/(1+2g^2))", residual, sp.S.Zero, rhs.subs(g, 0))


def all_identity_proofs() -> tuple:
    """The four proofs of docs/math/risk.md#gaussian-erf-identities (cached; the first call takes a few seconds)."""
    return (prove_erf_mean(), prove_zeta_t(), prove_gate_correlation(), prove_zeta_at_zero())
