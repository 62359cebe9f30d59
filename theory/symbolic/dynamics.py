"""Gradient flow and projected gradient descent as exact dynamics of the five overlaps (docs/math/dynamics.md#overlap-ode).

Work in the (formal) basis (k, v, k*, v*) with Gram matrix G(overlaps) (``gram``). The
Euclidean gradients of R(kappa, nu, theta, eta, rho) with kappa = <k,k*>, eta = <k,v*>,
rho = <k,v>, nu = <v,v*>, theta = <v,k*> are, by the chain rule,

    g_k = R_kappa k* + R_eta v* + R_rho v,      g_v = R_nu v* + R_theta k* + R_rho k,

and the Riemannian gradients on the product of unit spheres are their projections
G_k = g_k - <g_k, k> k, G_v = g_v - <g_v, v> v. Hence

- gradient flow (paper: alpha -> 0 limit of Def 1): k' = -G_k, v' = -G_v, and
  kappa' = <k',k*>, nu' = <v',v*>, theta' = <v',k*>, eta' = <k',v*>, rho' = <k',v> + <k,v'>;
- PGD (paper Def 1, simultaneous updates): k+ = k - alpha G_k, v+ = v - alpha G_v, then
  normalisation by |k+| = sqrt(k+^T G k+), |v+| likewise; the new overlaps are the inner
  products of the normalised vectors, e.g. kappa_new = <k+, k*>/|k+|, rho_new = <k+,v+>/(|k+||v+|).

Both are exact in every dimension d (iterates stay in span{k*, v*, k_0, v_0}); the only
inputs are the overlaps and the five partials. ``flow_in_partials`` / ``pgd_step_in_partials``
keep the partials as symbols (R_kappa, ...); ``overlap_flow_expressions`` substitutes the
partials of ``risk_expression``. Numeric versions: ``flow_velocity_symbolic`` and
``pgd_step_symbolic`` (partials from ``risk_grad_symbolic``, so exact to roundoff).
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from .functions import numeric_function
from .risk_expr import risk_grad_symbolic, risk_gradient_expressions, risk_symbols

__all__ = ["partial_symbols", "gram", "flow_in_partials", "pgd_step_in_partials",
           "norm_drift_in_partials", "overlap_flow_expressions", "flow_velocity_symbolic",
           "pgd_step_symbolic"]


@functools.lru_cache(maxsize=None)
def partial_symbols():
    """Symbols (R_kappa, R_nu, R_theta, R_eta, R_rho) standing for the partials of R."""
    return sp.symbols("R_kappa R_nu R_theta R_eta R_rho", real=True)


def gram():
    """Gram matrix of (k, v, k*, v*) in the overlaps (docs/math/task.md#overlaps-and-the-manifold-m)."""
    S = risk_symbols()
    kappa, nu, theta, eta, rho = S.overlaps
    return sp.Matrix([[1, rho, kappa, eta], [rho, 1, theta, nu],
                      [kappa, theta, 1, 0], [eta, nu, 0, 1]])


_K, _V, _KS, _VS = (sp.Matrix([int(i == j) for j in range(4)]) for i in range(4))


def _riemannian_gradients():
    G = gram()
    Rk, Rn, Rt, Re, Rr = partial_symbols()
    gk = Rk * _KS + Re * _VS + Rr * _V
    gv = Rn * _VS + Rt * _KS + Rr * _K
    ip = lambda x, y: (x.T * G * y)[0, 0]
    return gk - ip(gk, _K) * _K, gv - ip(gv, _V) * _V, ip


@functools.lru_cache(maxsize=None)
def flow_in_partials() -> tuple:
    """(kappa', nu', theta', eta', rho') of the gradient flow, in overlaps and partial symbols."""
    Gk, Gv, ip = _riemannian_gradients()
    dk, dv = -Gk, -Gv
    out = (ip(dk, _KS), ip(dv, _VS), ip(dv, _KS), ip(dk, _VS), ip(dk, _V) + ip(_K, dv))
    return tuple(sp.expand(x) for x in out)


@functools.lru_cache(maxsize=None)
def norm_drift_in_partials() -> tuple:
    """(<k', k>, <v', v>): must vanish identically (the flow stays on the spheres)."""
    Gk, Gv, ip = _riemannian_gradients()
    return sp.expand(ip(-Gk, _K)), sp.expand(ip(-Gv, _V))


@functools.lru_cache(maxsize=None)
def pgd_step_in_partials() -> tuple:
    """One PGD step (kappa, nu, theta, eta, rho)_new in overlaps, partial symbols and ``alpha``.

    Returns (alpha_symbol, new_overlaps): the exact recursion of paper Def 1 for every d.
    """
    alpha = sp.Symbol("alpha", positive=True)
    Gk, Gv, ip = _riemannian_gradients()
    kp, vp = _K - alpha * Gk, _V - alpha * Gv
    nk, nv = sp.sqrt(ip(kp, kp)), sp.sqrt(ip(vp, vp))
    new = (ip(kp, _KS) / nk, ip(vp, _VS) / nv, ip(vp, _KS) / nv, ip(kp, _VS) / nk,
           ip(kp, vp) / (nk * nv))
    return alpha, new


@functools.lru_cache(maxsize=None)
def overlap_flow_expressions() -> tuple:
    """The five-overlap ODE with the partials of ``risk_expression`` substituted."""
    sub = dict(zip(partial_symbols(), risk_gradient_expressions()))
    return tuple(x.subs(sub) for x in flow_in_partials())


@functools.lru_cache(maxsize=None)
def _flow_map():
    return numeric_function(risk_symbols().overlaps + partial_symbols(), list(flow_in_partials()))


@functools.lru_cache(maxsize=None)
def _pgd_map():
    alpha, new = pgd_step_in_partials()
    return numeric_function((alpha,) + risk_symbols().overlaps + partial_symbols(), list(new))


def _broadcast(values, *like):
    shape = np.broadcast_shapes(*(np.shape(x) for x in (*values, *like)))
    return tuple(np.broadcast_to(np.asarray(x, dtype=float), shape).copy() for x in values)


def flow_velocity_symbolic(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho):
    """Right-hand side (kappa', nu', theta', eta', rho') of the gradient flow on the overlaps.

    Arguments as ``theory.risk.risk_from_arrays`` (numpy-broadcastable); ``eps`` does not
    enter. Derived symbolically (module docstring); exact for every d.
    """
    partials = risk_grad_symbolic(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho)
    return _broadcast(_flow_map()(kappa, nu, theta, eta, rho, *partials), partials[0])


def pgd_step_symbolic(d, L, gamma, eps, lam, alpha, kappa, nu, theta, eta, rho):
    """One exact PGD step (paper Def 1) on the overlaps: returns the new five overlaps.

    ``alpha`` is the step size; lam is the value used at this step (a schedule is the caller's).
    Arguments broadcast like ``theory.risk.risk_from_arrays``. Exact for every d.
    """
    partials = risk_grad_symbolic(d, L, gamma, eps, lam, kappa, nu, theta, eta, rho)
    return _broadcast(_pgd_map()(alpha, kappa, nu, theta, eta, rho, *partials), partials[0], alpha)
