"""Projected gradient descent and gradient flow on the sphere product, written on the five overlaps
(docs/math/dynamics.md#pgd-step-in-overlaps; paper Definition 1).

Gradient structure (docs/math/dynamics.md#gradient-structure, re-derived by the chain rule: R depends on k only through
kappa = <k,k*>, eta = <k,v*>, rho = <k,v>, and on v only through nu, theta, rho):

    g_k = grad_k R = R_kappa k* + R_eta v* + R_rho v,
    g_v = grad_v R = R_nu v* + R_theta k* + R_rho k.

With |k| = |v| = 1, a_k = <g_k, k> = R_kappa kappa + R_eta eta + R_rho rho and
a_v = <g_v, v> = R_nu nu + R_theta theta + R_rho rho, the projected step of size alpha is

    k~ = (1 + alpha a_k) k - alpha g_k,    v~ = (1 + alpha a_v) v - alpha g_v   (simultaneous),

and its inner products with k*, v*, and each other follow from the Gram matrix of (k, v, k*, v*):

    <k~,k*> = c_k kappa - alpha (R_kappa + R_rho theta),   <k~,v*> = c_k eta - alpha (R_eta + R_rho nu),
    <v~,k*> = c_v theta - alpha (R_theta + R_rho kappa),   <v~,v*> = c_v nu - alpha (R_nu + R_rho eta),
    <k~,v~> = c_k c_v rho - alpha (c_k <k,g_v> + c_v <g_k,v>) + alpha^2 <g_k,g_v>,
    |k~|^2 = 1 + alpha^2 (|g_k|^2 - a_k^2),   |v~|^2 = 1 + alpha^2 (|g_v|^2 - a_v^2),

with c_k = 1 + alpha a_k, c_v = 1 + alpha a_v, <k,g_v> = R_nu eta + R_theta kappa + R_rho,
<g_k,v> = R_kappa theta + R_eta nu + R_rho,
<g_k,g_v> = R_kappa (R_theta + R_rho kappa) + R_eta (R_nu + R_rho eta) + R_rho a_v,
|g_k|^2 = R_kappa^2 + R_eta^2 + R_rho^2 + 2 R_rho (R_kappa theta + R_eta nu),
|g_v|^2 = R_nu^2 + R_theta^2 + R_rho^2 + 2 R_rho (R_nu eta + R_theta kappa).
Normalising gives the next overlaps. Exact for every d (the iterates stay in span{k*, v*, k_0, v_0}),
whatever the partials are; they are evaluated at the current point (and current lambda).

The gradient flow (alpha -> 0; d k/dt = -(g_k - a_k k), d v/dt = -(g_v - a_v v)) is

    kappa' = a_k kappa - (R_kappa + R_rho theta),   eta' = a_k eta - (R_eta + R_rho nu),
    theta' = a_v theta - (R_theta + R_rho kappa),   nu'  = a_v nu  - (R_nu + R_rho eta),
    rho'   = (a_k + a_v) rho - <g_k,v> - <k,g_v>.

On M (theta = eta = rho = 0, where R_theta = R_eta = R_rho = 0) this reduces to
kappa' = -(1 - kappa^2) R_kappa, nu' = -(1 - nu^2) R_nu and theta' = eta' = rho' = 0 (docs/math/dynamics.md#flow-on-m),
and the PGD map sends M into M exactly (all three off-manifold overlaps are products with zeros).
"""

from __future__ import annotations

import numpy as np

__all__ = ["pgd_step", "flow_velocity"]


def pgd_step(alpha, kappa, nu, theta, eta, rho, r_kappa, r_nu, r_theta, r_eta, r_rho):
    """One projected gradient step (paper Definition 1) on the overlaps; returns the next
    (kappa, nu, theta, eta, rho). Formula in the module docstring; exact for every d.
    Sibling: ``numerics.dynamics.pgd_vectors`` (the same step on explicit vectors)."""
    a_k = r_kappa * kappa + r_eta * eta + r_rho * rho
    a_v = r_nu * nu + r_theta * theta + r_rho * rho
    c_k = 1.0 + alpha * a_k
    c_v = 1.0 + alpha * a_v
    t_kappa = r_theta + r_rho * kappa
    t_nu = r_nu + r_rho * eta
    gk_v = r_kappa * theta + r_eta * nu + r_rho
    k_gv = r_nu * eta + r_theta * kappa + r_rho
    gk_gv = r_kappa * t_kappa + r_eta * t_nu + r_rho * a_v
    new_kappa = c_k * kappa - alpha * (r_kappa + r_rho * theta)
    new_eta = c_k * eta - alpha * (r_eta + r_rho * nu)
    new_theta = c_v * theta - alpha * t_kappa
    new_nu = c_v * nu - alpha * t_nu
    new_rho = c_k * c_v * rho - alpha * (c_k * k_gv + c_v * gk_v) + alpha * alpha * gk_gv
    r_rho2 = r_rho * r_rho
    gk2 = r_kappa * r_kappa + r_eta * r_eta + r_rho2 + 2.0 * r_rho * (gk_v - r_rho)
    gv2 = r_nu * r_nu + r_theta * r_theta + r_rho2 + 2.0 * r_rho * (k_gv - r_rho)
    inv_nk = 1.0 / np.sqrt(1.0 + alpha * alpha * (gk2 - a_k * a_k))
    inv_nv = 1.0 / np.sqrt(1.0 + alpha * alpha * (gv2 - a_v * a_v))
    return (new_kappa * inv_nk, new_nu * inv_nv, new_theta * inv_nv, new_eta * inv_nk,
            new_rho * (inv_nk * inv_nv))


def flow_velocity(kappa, nu, theta, eta, rho, r_kappa, r_nu, r_theta, r_eta, r_rho):
    """d/dt of (kappa, nu, theta, eta, rho) under the gradient flow on the sphere product
    (the alpha -> 0 limit of ``pgd_step``; formula in the module docstring)."""
    a_k = r_kappa * kappa + r_eta * eta + r_rho * rho
    a_v = r_nu * nu + r_theta * theta + r_rho * rho
    gk_v = r_kappa * theta + r_eta * nu + r_rho
    k_gv = r_nu * eta + r_theta * kappa + r_rho
    return (a_k * kappa - (r_kappa + r_rho * theta),
            a_v * nu - (r_nu + r_rho * eta),
            a_v * theta - (r_theta + r_rho * kappa),
            a_k * eta - (r_eta + r_rho * nu),
            (a_k + a_v) * rho - gk_v - k_gv)
