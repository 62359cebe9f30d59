"""The projected, normalised SGD step expanded in the step size, by sympy
(docs/math/highdim.md#the-effective-ode).

In a 6-dim frame (k*, v*, f3, ..., f6) take k = (kappa, eta, k3, 0, 0, 0), v = (theta, nu, v3, v4,
0, 0) and arbitrary (stochastic) gradients g_k, g_v in R^6 (symbols; six coordinates are enough:
a step moves k, v only in span(k, v, g_k, g_v), and the rotation invariance of the overlaps lets
that span sit in six coordinates next to k*, v*). The step of paper Definition 1 with these
gradients, k+ = (k - alpha P_k g_k) / |k - alpha P_k g_k| (v likewise), gives the new overlaps as
functions of alpha; ``step_expansion`` returns their Taylor coefficients of order 1 and 2 at
alpha = 0, derived by differentiation. Averaged over the minibatch they are the population
flow F and the correction D of ``theory.highdim.effective_drift`` (the check in the tests:
for one fixed gradient, the hand-written D from N_k = |P_k g_k|^2, N_v, M equals the order-2
coefficient here, and F equals the order-1 coefficient).
"""

from __future__ import annotations

import functools

import sympy as sp

__all__ = ["step_symbols", "step_expansion", "step_expansion_numeric"]


@functools.lru_cache(maxsize=None)
def step_symbols():
    """(alpha, frame symbols (kappa, eta, k3, theta, nu, v3, v4), g_k (6), g_v (6))."""
    alpha = sp.Symbol("alpha", positive=True)
    frame = sp.symbols("kappa eta k3 theta nu v3 v4", real=True)
    gk = sp.symbols("gk1:7", real=True)
    gv = sp.symbols("gv1:7", real=True)
    return alpha, frame, gk, gv


def _new_overlaps():
    alpha, (kappa, eta, k3, theta, nu, v3, v4), gk, gv = step_symbols()
    k = sp.Matrix([kappa, eta, k3, 0, 0, 0])
    v = sp.Matrix([theta, nu, v3, v4, 0, 0])
    g, h = sp.Matrix(gk), sp.Matrix(gv)
    kt = k - alpha * (g - (g.dot(k)) * k)
    vt = v - alpha * (h - (h.dot(v)) * v)
    nk, nv = sp.sqrt(kt.dot(kt)), sp.sqrt(vt.dot(vt))
    return (kt[0] / nk, vt[1] / nv, vt[0] / nv, kt[1] / nk, kt.dot(vt) / (nk * nv))


@functools.lru_cache(maxsize=None)
def step_expansion() -> tuple:
    """((first-order coefficients), (second-order coefficients)) of the new (kappa, nu, theta,
    eta, rho) in alpha, as sympy expressions of ``step_symbols`` (|k| = |v| = 1 assumed by the
    caller's values, not imposed symbolically)."""
    alpha = step_symbols()[0]
    first, second = [], []
    for x in _new_overlaps():
        d1 = sp.diff(x, alpha)
        first.append(d1.subs(alpha, 0))
        second.append(sp.diff(d1, alpha).subs(alpha, 0) / 2)
    return tuple(first), tuple(second)


@functools.lru_cache(maxsize=None)
def step_expansion_numeric():
    """``step_expansion`` lambdified: f(kappa, eta, k3, theta, nu, v3, v4, *gk, *gv) -> (first
    (5,), second (5,))."""
    _, frame, gk, gv = step_symbols()
    first, second = step_expansion()
    fun = sp.lambdify((*frame, *gk, *gv), [list(first), list(second)], modules="numpy")
    return fun
