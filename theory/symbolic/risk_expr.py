"""The population risk as a sympy expression in the overlaps, two ways (docs/math/risk.md#closed-form-population-risk; paper Thm 1).

``risk_expression()`` transcribes docs/math/risk.md#closed-form-population-risk (s = sqrt(d/2), g = lambda gamma, c2 = sqrt(1+2g^2),
A = lambda s kappa, a = A/c2, C = C_lambda):

    R = eps^2 + gamma^2 - 2 E1 + E2 + N   (E1, E2, N as in ``theory.risk``).

``risk_expression_from_model()`` derives R from the model of docs/math/task.md#the-task without that algebra.
For the informative token X = s k* + gamma W, W ~ N(0, I_d), write U = <W,k>,
<W,v> = rho U + P', <W,v*> = eta U + Q' with (P', Q') Gaussian, independent of U,
E P'^2 = 1 - rho^2, E P'Q' = nu - rho eta, E Q'^2 = 1 - eta^2. The gate is erf(A + gU),
the value s theta + gamma <W,v>, and Y = gamma <W,v*> + xi. Noise tokens have U_l = <X_l,k>,
<X_l,v> = rho U_l + P'_l and gate erf(lambda U_l). Every expectation is then
E[U^m f(A + gU)] with f = erf or erf^2, reduced by ``stein_moment`` to t-derivatives of
E[erf(A + gU)] = erf(A/c2) and E[erf(A + gU)^2] = Zeta(A, g). With T_l the token terms,

    R = E[Y^2] - 2 E[Y T_J] + E[T_J^2] + 2(L-1) E[T_J] E[T_l] + (L-1) E[T_l^2] + (L-1)(L-2) E[T_l]^2.

Both are exact for finite d. Numeric siblings: ``theory.risk.risk_from_arrays`` and
``risk_grad_from_arrays`` (hand-written), compared with ``risk_symbolic``/``risk_grad_symbolic``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import sympy as sp

from .functions import Zeta, ZetaT, ZetaTT, erf_prime_expr, numeric_function
from .identities import stein_moment

__all__ = ["RiskSymbols", "risk_symbols", "risk_expression", "risk_expression_from_model",
           "risk_gradient_expressions", "risk_symbolic", "risk_grad_symbolic"]


@dataclasses.dataclass(frozen=True)
class RiskSymbols:
    """The sympy symbols: parameters (d, L, gamma, eps, lam) and overlaps (kappa, ..., rho)."""

    d: sp.Symbol
    L: sp.Symbol
    gamma: sp.Symbol
    eps: sp.Symbol
    lam: sp.Symbol
    kappa: sp.Symbol
    nu: sp.Symbol
    theta: sp.Symbol
    eta: sp.Symbol
    rho: sp.Symbol

    @property
    def params(self):
        return (self.d, self.L, self.gamma, self.eps, self.lam)

    @property
    def overlaps(self):
        return (self.kappa, self.nu, self.theta, self.eta, self.rho)

    @property
    def all(self):
        """Argument order of ``theory.risk.risk_from_arrays``."""
        return self.params + self.overlaps

    @property
    def manifold(self):
        """Substitution onto M: theta = eta = rho = 0."""
        return {self.theta: 0, self.eta: 0, self.rho: 0}

    def derived(self):
        """(s, g, c2, A, a) of docs/math/risk.md#closed-form-population-risk."""
        s = sp.sqrt(self.d / 2)
        g = self.lam * self.gamma
        c2 = sp.sqrt(1 + 2 * g**2)
        A = self.lam * s * self.kappa
        return s, g, c2, A, A / c2


@functools.lru_cache(maxsize=None)
def risk_symbols() -> RiskSymbols:
    pos = dict(positive=True)
    return RiskSymbols(
        d=sp.Symbol("d", **pos), L=sp.Symbol("L", **pos), gamma=sp.Symbol("gamma", **pos),
        eps=sp.Symbol("eps", nonnegative=True), lam=sp.Symbol("lam", **pos),
        kappa=sp.Symbol("kappa", real=True), nu=sp.Symbol("nu", real=True),
        theta=sp.Symbol("theta", real=True), eta=sp.Symbol("eta", real=True),
        rho=sp.Symbol("rho", real=True))


def gate_correlation_expr(lam):
    """C_lambda = 2 lambda / sqrt(pi (1 + 2 lambda^2)) (docs/math/risk.md#gaussian-erf-identities)."""
    return 2 * lam / sp.sqrt(sp.pi * (1 + 2 * lam**2))


@functools.lru_cache(maxsize=None)
def risk_expression() -> sp.Expr:
    """docs/math/risk.md#closed-form-population-risk transcribed: R(kappa, nu, theta, eta, rho; d, L, gamma, eps, lam)."""
    S = risk_symbols()
    lam, gamma, L = S.lam, S.gamma, S.L
    kappa, nu, theta, eta, rho = S.overlaps
    s, g, c2, A, a = S.derived()
    x = sp.Dummy("x")
    erf1 = lambda y: erf_prime_expr(y)
    erf2 = lambda y: sp.diff(erf_prime_expr(x), x).subs(x, y)
    C = gate_correlation_expr(lam)
    g2 = gamma**2
    E1 = (g2 * nu * sp.erf(a) + lam * g2 * s * eta * theta * erf1(a) / c2
          + lam**2 * g2**2 * eta * rho * erf2(a) / c2**2)
    E2 = ((s**2 * theta**2 + g2) * Zeta(A, g) + 2 * lam * g2 * s * theta * rho * ZetaT(A, g)
          + lam**2 * g2**2 * rho**2 * ZetaTT(A, g))
    N = ((L - 1) * (Zeta(0, lam) + lam**2 * rho**2 * ZetaTT(0, lam))
         + (L - 1) * (L - 2) * C**2 * rho**2
         + 2 * (L - 1) * C * rho * (s * theta * sp.erf(a) + lam * g2 * rho * erf1(a) / c2))
    return S.eps**2 + g2 - 2 * E1 + E2 + N


def _expect(poly, square_gate: bool, A, g, cov):
    """E[poly(U, P', Q') f(A + gU)], f = erf^2 if square_gate else erf (see module docstring)."""
    U, P, Q = sp.symbols("U P Q")
    x = sp.Dummy("A")
    base = Zeta(x, g) if square_gate else sp.erf(x / sp.sqrt(1 + 2 * g**2))
    moments = {(0, 0): 1, (1, 0): 0, (0, 1): 0, (2, 0): cov[0], (1, 1): cov[1], (0, 2): cov[2]}
    total = sp.S.Zero
    for (mu, mp, mq), coeff in sp.Poly(sp.expand(poly), U, P, Q).terms():
        if mp + mq > 2:
            raise ValueError(f"degree {mp + mq} in (P', Q') is not allowed: at most 2 here")
        if moments[(mp, mq)] != 0:
            total += coeff * moments[(mp, mq)] * stein_moment(base, x, g, mu)
    return total.subs(x, A)


@functools.lru_cache(maxsize=None)
def risk_expression_from_model() -> sp.Expr:
    """R derived from the model by Gaussian conditioning and Stein's lemma (module docstring)."""
    S = risk_symbols()
    lam, gamma, L = S.lam, S.gamma, S.L
    kappa, nu, theta, eta, rho = S.overlaps
    s, g, _, A, _ = S.derived()
    U, P, Q = sp.symbols("U P Q")
    cov = (1 - rho**2, nu - rho * eta, 1 - eta**2)
    value = s * theta + gamma * (rho * U + P)          # <X_J, v>
    y_signal = gamma * (eta * U + Q)                   # Y - xi
    e_y_t = _expect(y_signal * value, False, A, g, cov)
    e_t2 = _expect(value**2, True, A, g, cov)
    e_t = _expect(value, False, A, g, cov)
    noise_value = rho * U + P                          # <X_l, v> for a noise token
    e_tl = _expect(noise_value, False, 0, lam, cov)
    e_tl2 = _expect(noise_value**2, True, 0, lam, cov)
    e_y2 = gamma**2 + S.eps**2
    return (e_y2 - 2 * e_y_t + e_t2 + 2 * (L - 1) * e_t * e_tl + (L - 1) * e_tl2
            + (L - 1) * (L - 2) * e_tl**2)


@functools.lru_cache(maxsize=None)
def risk_gradient_expressions() -> tuple:
    """(R_kappa, R_nu, R_theta, R_eta, R_rho): sympy partial derivatives of ``risk_expression``."""
    R = risk_expression()
    return tuple(sp.diff(R, o) for o in risk_symbols().overlaps)


@functools.lru_cache(maxsize=None)
def _risk_numeric():
    return numeric_function(risk_symbols().all, risk_expression())


@functools.lru_cache(maxsize=None)
def _grad_numeric():
    return numeric_function(risk_symbols().all, list(risk_gradient_expressions()))


def risk_symbolic(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho):
    """``risk_expression`` lambdified; same signature as ``theory.risk.risk_from_arrays``."""
    return _risk_numeric()(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho)


def risk_grad_symbolic(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho):
    """``risk_gradient_expressions`` lambdified: tuple (R_kappa, R_nu, R_theta, R_eta, R_rho).

    Same signature as ``theory.risk.risk_grad_from_arrays``; outputs broadcast to the inputs' shape.
    """
    args = (d, L, gamma, eps, lam, kappa, nu, theta, eta, rho)
    shape = np.broadcast_shapes(*(np.shape(x) for x in args))
    return tuple(np.broadcast_to(np.asarray(x, dtype=float), shape).copy() for x in _grad_numeric()(*args))
