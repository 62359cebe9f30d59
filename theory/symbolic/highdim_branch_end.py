"""Where the aligned branch of the drift of one run ends at c of order sqrt(d), by sympy
(docs/math/highdim.md#the-end-of-the-branch-at-c-of-order-sqrt-d).

The derivation from the model, at lambda = lambda_bar / s near the saddle where every gate is linear,
u = a p with a = 2 lambda_bar / (sqrt(pi) s) (the cubic term of erf is O(1/d) of it):

1. R = E[(a p_0 q_0 + sum_l a p_l q_l - gamma z_* - xi)^2] as a Gaussian expectation in all five overlaps:
   p_0 = s kappa + gamma z_k, q_0 = s theta + gamma z_v, (z_k, z_v, z_*) with the covariances (rho, eta, nu), L - 1
   noise tokens (p, q) with correlation rho;
2. the flow (``theory.symbolic.flow_in_partials``) and its Jacobian at the saddle, s -> infinity: the blocks on M
   (kappa, nu) and off M (theta, eta), and the decoupling of rho;
3. the fast mode: the most negative eigenvalue mu of the (theta, eta) block, its unit eigenvector w (the block is
   symmetric: the left eigenvector is w), the increment's variance Q = Var(2 r u_0 <X_0, k*>) at the saddle and the
   spread sigma^2 = alpha w_theta^2 Q / (2 B |mu|) (alpha |mu| -> 0);
4. G on M as the average of the flow over x +- sigma w, plus alpha D_nu = -(alpha / (2 B)) S_vv nu with
   S_vv = 4 s^2 E[r^2 u_0^2] + 4 d (gamma^2 E[r^2 u_0^2] + (L - 1) E[r^2 u_l^2]) (D_kappa is O(1/s) of the kappa-row);
5. c = C B sqrt(d): the leading orders J_kk ~ s, J_nn ~ 1/s, J_kn, J_nk ~ 1, and det J = 0 solved for C^2.

Sibling: the hand-written ``theory.highdim.branch_end_constant``.
"""

from __future__ import annotations

import functools

import sympy as sp

from .dynamics import flow_in_partials, partial_symbols
from .functions import numeric_function
from .highdim_limit import gaussian_mean
from .risk_expr import risk_symbols

__all__ = ["branch_end_symbols", "branch_end_expression", "branch_end_symbolic"]


@functools.lru_cache(maxsize=None)
def branch_end_symbols():
    """(lam_bar, L, gamma, eps)."""
    return sp.symbols("lam_bar L gamma eps", positive=True)


def _leading(expr, s, power):
    """lim_{s -> infinity} expr / s^power."""
    return sp.simplify(sp.limit(sp.simplify(expr / s**power), s, sp.oo))


@functools.lru_cache(maxsize=None)
def branch_end_expression():
    """C^2 (module docstring) as a sympy expression in ``branch_end_symbols()``."""
    lam_bar, L, gamma, eps = branch_end_symbols()
    s = sp.Symbol("s", positive=True)
    C, B, sigma = sp.symbols("C B sigma", positive=True)
    o = risk_symbols()
    kappa, nu, theta, eta, rho = o.overlaps
    a1, a2, a3, a4, a5, n1, n2 = sp.symbols("a1:6 n1 n2", real=True)
    a = 2 * lam_bar / (sp.sqrt(sp.pi) * s)
    c2 = (nu - eta * rho) / sp.sqrt(1 - rho**2)
    zk, zv = a1, rho * a1 + sp.sqrt(1 - rho**2) * a2
    zs = eta * a1 + c2 * a2 + sp.sqrt(1 - eta**2 - c2**2) * a3
    p0, q0 = s * kappa + gamma * zk, s * theta + gamma * zv
    A0 = a * p0 * q0 - gamma * zs - eps * a4
    A = a * n1 * (rho * n1 + sp.sqrt(1 - rho**2) * n2)
    inf_vars, noise_vars = (a1, a2, a3, a4), (n1, n2)
    EA0, EA02 = gaussian_mean(A0, inf_vars), gaussian_mean(A0**2, inf_vars)
    EA, EA2 = gaussian_mean(A, noise_vars), gaussian_mean(A**2, noise_vars)
    R = sp.expand(EA02 + 2 * (L - 1) * EA0 * EA + (L - 1) * EA2 + (L - 1) * (L - 2) * EA**2)
    Rk, Rn, Rt, Re, Rr = partial_symbols()
    partials = {Rk: sp.diff(R, kappa), Rn: sp.diff(R, nu), Rt: sp.diff(R, theta), Re: sp.diff(R, eta),
                Rr: sp.diff(R, rho)}
    flow = [sp.expand(f.subs(partials)) for f in flow_in_partials()]
    x = (kappa, nu, theta, eta, rho)
    zero = {v: 0 for v in x}
    jac = sp.Matrix(5, 5, lambda i, j: _leading(sp.diff(flow[i], x[j]).subs(zero), s, 0))
    if any(jac[i, 4] != 0 or jac[4, i] != 0 for i in range(4)) or jac[:2, :2] != jac[2:4, 2:4]:
        raise RuntimeError("the saddle's Jacobian is not two equal blocks with rho decoupled: the scaling is wrong")
    (m_neg, b), (b2, zero_entry) = jac[2:4, 2:4].tolist()
    if b != b2 or zero_entry != 0:
        raise RuntimeError("the (theta, eta) block is not [[-m, b], [b, 0]]")
    mu = (m_neg - sp.sqrt(m_neg**2 + 4 * b**2)) / 2
    w_eta_over_theta = b / mu
    w_theta2 = 1 / (1 + w_eta_over_theta**2)
    # the increment of theta per unit alpha: -2 r sum_l u_l <X_l, k*>, at the saddle <X_0, k*> = s + gamma a5
    r0 = (A0 + A).subs(zero)
    u0 = (a * p0).subs(zero)
    all_vars = inf_vars + noise_vars + (a5,)
    Q = _leading(gaussian_mean((2 * r0 * u0 * (s + gamma * a5)) ** 2, all_vars), s, 0)
    d, alpha = 2 * s**2, C * B / (sp.sqrt(2) * s)                    # c = C B sqrt(d)
    sigma2 = alpha * w_theta2 * Q / (2 * B * -mu)
    displaced = {theta: sigma * sp.sqrt(w_theta2), eta: sigma * sp.sqrt(w_theta2) * w_eta_over_theta, rho: 0}
    G = [sp.expand((f.subs(displaced) + f.subs({k: -v for k, v in displaced.items()})) / 2) for f in flow[:2]]
    e_u0 = gaussian_mean((r0 * u0) ** 2, all_vars)
    e_ul = gaussian_mean((r0 * a * n1) ** 2, all_vars)
    s_vv = 4 * s**2 * e_u0 + 4 * d * (gamma**2 * e_u0 + (L - 1) * e_ul)
    G[1] = G[1] - alpha * s_vv * nu / (2 * B)
    J = sp.Matrix(2, 2, lambda i, j: sp.diff(G[i], x[j]).subs({kappa: 0, nu: 0}).subs(sigma, sp.sqrt(sigma2)))
    j_kk, j_nn = _leading(J[0, 0], s, 1), _leading(J[1, 1], s, -1)
    j_kn, j_nk = _leading(J[0, 1], s, 0), _leading(J[1, 0], s, 0)
    det = sp.expand(j_kk * j_nn - j_kn * j_nk)
    roots = sp.solve(sp.Eq(det, 0), C**2)
    if len(roots) != 1 or det.has(s) or roots[0].has(B):
        raise RuntimeError("det J is not one d-free, batch-free equation in C^2")
    return sp.simplify(roots[0])


@functools.lru_cache(maxsize=None)
def branch_end_symbolic():
    """numpy function (lam_bar, L, gamma, eps) -> C (module docstring), lambdified."""
    return numeric_function(branch_end_symbols(), (sp.sqrt(branch_end_expression()),))
