"""The d -> infinity limit of the drift of one run on M at lambda = lambda_bar / s, by sympy
(docs/math/highdim.md#the-limit-in-closed-form).

From the model at leading order in 1/s: the informative token's gate is g = erf(lambda_bar kappa), its value
coordinate q = vartheta + gamma z_v (vartheta = s theta), the target gamma z_* (Cov(z_v, z_*) = nu), the
noise xi = eps a_3, the noise tokens O(1/s) (left out). The derivation here:

1. R_inf = E[(g q - gamma z_* - xi)^2] as a Gaussian expectation (z_v = a_1, z_* = nu a_1 + sqrt(1 - nu^2) a_2,
   a_i independent standard normals);
2. the flow (``theory.symbolic.flow_in_partials``, the Riemannian gradient flow of paper eq. (3) in partials)
   with R(kappa, nu, theta) = R_inf(kappa, nu, s theta), R_eta = R_rho = 0, at theta = vartheta / s, eta = rho = 0:
   s cancels;
3. alpha E[N_v] = (c/d)[(1 - 1/B) R_theta^2 + S_vv / B] with S_vv = E[(2 r g s)^2] + 4 d gamma^2 E[(r g)^2]
   (the k*-component of P_v h_v and the trace part), d = 2 s^2, and D_nu = -nu alpha E[N_v] / 2;
4. the fast mode: mu_f = d(theta')/d(theta) on M to leading order (mu_f / d at s -> infinity), the increment's
   variance C = Var(2 s r g) at vartheta = 0, and V = s^2 alpha C / (B |mu_f| (2 - alpha |mu_f|));
5. the average over vartheta ~ N(0, V) (the drift is quadratic in vartheta).

Sibling: the hand-written ``theory.highdim.limit_drift``.
"""

from __future__ import annotations

import functools

import sympy as sp

from .dynamics import flow_in_partials, partial_symbols
from .functions import numeric_function
from .risk_expr import risk_symbols

__all__ = ["gaussian_mean", "limit_symbols", "limit_drift_expressions", "limit_drift_symbolic"]


@functools.lru_cache(maxsize=None)
def limit_symbols():
    """(kappa, nu, lam_bar, c, B, gamma, eps)."""
    return sp.symbols("kappa nu lam_bar c B gamma eps", real=True)


def gaussian_mean(expr, variables):
    """E[expr] for a polynomial in independent standard normals ``variables``: x^n -> (n - 1)!! (0 if n odd)."""
    poly = sp.Poly(sp.expand(expr), *variables)
    total = 0
    for powers, coeff in poly.terms():
        moment = 1
        for n in powers:
            moment *= 0 if n % 2 else sp.factorial2(n - 1)
        total += coeff * moment
    return sp.expand(total)


@functools.lru_cache(maxsize=None)
def limit_drift_expressions():
    """(G_kappa, G_nu, V, mu_f / d) as sympy expressions in ``limit_symbols()`` (module docstring)."""
    kappa, nu, lam_bar, c, B, gamma, eps = limit_symbols()
    s = sp.Symbol("s", positive=True)
    vt, a1, a2, a3 = sp.symbols("vartheta a1 a2 a3", real=True)
    g = sp.Symbol("g", real=True)
    r = g * (vt + gamma * a1) - gamma * (nu * a1 + sp.sqrt(1 - nu**2) * a2) - eps * a3
    risk = gaussian_mean(r**2, (a1, a2, a3))                                   # R_inf(g, nu, vartheta)
    o = risk_symbols()
    gate = sp.erf(lam_bar * o.kappa)
    R = risk.subs({g: gate, vt: s * o.theta}).subs(nu, o.nu)
    Rk, Rn, Rt, Re, Rr = partial_symbols()
    partials = {Rk: sp.diff(R, o.kappa), Rn: sp.diff(R, o.nu), Rt: sp.diff(R, o.theta), Re: 0, Rr: 0}
    flow = [f.subs(partials) for f in flow_in_partials()]                       # (kappa', nu', theta', ...)
    mu = sp.diff(flow[2], o.theta).subs({o.theta: 0, o.eta: 0, o.rho: 0})      # mu_f
    d, alpha = 2 * s**2, c / (2 * s**2)
    second = gaussian_mean((r * g) ** 2, (a1, a2, a3))                        # E[(r g)^2]
    s_vv = 4 * s**2 * second + 4 * d * gamma**2 * second
    n_v = alpha * ((1 - 1 / B) * partials[Rt] ** 2 + s_vv.subs(g, gate).subs(vt, s * o.theta) / B)
    on_m = {o.eta: 0, o.rho: 0, o.theta: vt / s}
    drift_k = flow[0].subs(on_m)
    drift_n = (flow[1] - o.nu * n_v / 2).subs(on_m)
    variance_c = (4 * s**2 * second).subs({vt: 0, g: gate})                  # Var(2 s r g) at vartheta = 0
    # mu_f / d has the limit -g^2 (its O(1) part, from a_v theta, is O(1/d) of it): the leading order is kept
    mu_d = sp.limit(sp.expand(mu / d), s, sp.oo)
    V = sp.simplify(s**2 * alpha * variance_c / (B * d * (-mu_d) * (2 + alpha * d * mu_d)))
    out = []
    for expr in (drift_k, drift_n):
        poly = sp.Poly(sp.expand(expr), vt)
        averaged = sum(coeff * (0 if n % 2 else sp.factorial2(n - 1) * V ** (n // 2))
                       for (n,), coeff in poly.terms())
        out.append(averaged)
    rename = {o.kappa: kappa, o.nu: nu}
    results = [sp.factor(e.subs(rename)) for e in (*out, V, mu_d)]
    if any(e.has(s) for e in results):
        raise RuntimeError("the limit drift still depends on s: the scaling of the derivation is wrong")
    return tuple(results)


@functools.lru_cache(maxsize=None)
def limit_drift_symbolic():
    """numpy function (kappa, nu, lam_bar, c, B, gamma, eps) -> (G_kappa, G_nu, V, mu_f / d), lambdified."""
    return numeric_function(limit_symbols(), limit_drift_expressions())
