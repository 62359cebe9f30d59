"""Overlap ODE and exact PGD recursion (docs/math/dynamics.md#pgd-step-in-overlaps) vs the same dynamics run on vectors in R^d."""

import numpy as np
import pytest
import sympy as sp

from numerics.montecarlo.geometry import random_orthonormal
from theory.risk import risk_from_arrays, risk_grad_from_arrays
from theory.symbolic.dynamics import (flow_in_partials, norm_drift_in_partials, flow_velocity_symbolic,
                                      pgd_step_in_partials, pgd_step_symbolic)

EPS = np.finfo(float).eps
PARAMS = dict(d=7, L=4, gamma=0.8, eps=0.3, lam=0.6)


def _setup(rng, d=7):
    k_star, v_star, k, v = random_orthonormal(d, 4, rng)
    # Generic (off-M) k, v: mix in k*, v* and each other.
    k = k + 0.6 * k_star - 0.3 * v_star
    v = v + 0.5 * v_star + 0.4 * k_star + 0.2 * k
    return k / np.linalg.norm(k), v / np.linalg.norm(v), k_star, v_star


def _overlaps(k, v, ks, vs):
    return (k @ ks, v @ vs, v @ ks, k @ vs, k @ v)


def _risk_of_vectors(k, v, ks, vs):
    p = PARAMS
    return risk_from_arrays(p["d"], p["L"], p["gamma"], p["eps"], p["lam"], *_overlaps(k, v, ks, vs))


def _euclidean_gradients(k, v, ks, vs):
    p = PARAMS
    Rk, Rn, Rt, Re, Rr = risk_grad_from_arrays(p["d"], p["L"], p["gamma"], p["eps"], p["lam"],
                                               *_overlaps(k, v, ks, vs))
    return Rk * ks + Re * vs + Rr * v, Rn * vs + Rt * ks + Rr * k


def test_flow_stays_on_spheres():
    assert norm_drift_in_partials() == (0, 0)


def test_pgd_step_is_flow_to_first_order():
    alpha, new = pgd_step_in_partials()
    from theory.symbolic.risk_expr import risk_symbols
    old = risk_symbols().overlaps
    for x_new, x_old, rhs in zip(new, old, flow_in_partials()):
        assert sp.simplify(x_new.subs(alpha, 0) - x_old) == 0
        assert sp.simplify(sp.diff(x_new, alpha).subs(alpha, 0) - rhs) == 0


def test_gradient_structure_against_finite_differences(rng):
    # docs/math/dynamics.md#gradient-structure: grad_k R = R_kappa k* + R_eta v* + R_rho v (R as a function of unnormalised vectors).
    k, v, ks, vs = _setup(rng)
    gk, gv = _euclidean_gradients(k, v, ks, vs)
    h = 1e-5
    for which, g in ((0, gk), (1, gv)):
        fd1, fd2 = np.empty(7), np.empty(7)
        for i in range(7):
            e = np.zeros(7)
            e[i] = 1.0
            f = lambda t: _risk_of_vectors(*[(x + t * e) if j == which else x for j, x in enumerate((k, v))], ks, vs)
            fd1[i] = (f(h) - f(-h)) / (2 * h)
            fd2[i] = (f(2 * h) - f(-2 * h)) / (4 * h)
        # Richardson error estimate of the h-differences, plus roundoff eps |R| / h.
        tol = 4 * np.abs(fd1 - fd2) / 3 + 64 * EPS * abs(_risk_of_vectors(k, v, ks, vs)) / h
        assert np.all(np.abs((4 * fd1 - fd2) / 3 - g) <= tol)


@pytest.mark.parametrize("alpha", [1e-3, 0.05, 0.5])
def test_pgd_step_symbolic_matches_vector_pgd(alpha, rng):
    k, v, ks, vs = _setup(rng)
    gk, gv = _euclidean_gradients(k, v, ks, vs)
    k_new = k - alpha * (gk - (gk @ k) * k)
    v_new = v - alpha * (gv - (gv @ v) * v)
    k_new, v_new = k_new / np.linalg.norm(k_new), v_new / np.linalg.norm(v_new)
    want = np.array(_overlaps(k_new, v_new, ks, vs))
    p = PARAMS
    got = np.array(pgd_step_symbolic(p["d"], p["L"], p["gamma"], p["eps"], p["lam"], alpha,
                                     *_overlaps(k, v, ks, vs)))
    # Inner products of O(1) vectors of length d after an update of size alpha |grad|:
    # roundoff ~ d eps (1 + alpha (|gk| + |gv|)) in each route.
    tol = 64 * 7 * EPS * (1 + alpha * (np.linalg.norm(gk) + np.linalg.norm(gv)))
    assert np.all(np.abs(got - want) <= tol)


def test_flow_rhs_symbolic_matches_vector_projection(rng):
    k, v, ks, vs = _setup(rng)
    gk, gv = _euclidean_gradients(k, v, ks, vs)
    dk, dv = -(gk - (gk @ k) * k), -(gv - (gv @ v) * v)
    want = np.array([dk @ ks, dv @ vs, dv @ ks, dk @ vs, dk @ v + k @ dv])
    p = PARAMS
    got = np.array(flow_velocity_symbolic(p["d"], p["L"], p["gamma"], p["eps"], p["lam"],
                                             *_overlaps(k, v, ks, vs)))
    tol = 64 * 7 * EPS * (np.linalg.norm(gk) + np.linalg.norm(gv))
    assert np.all(np.abs(got - want) <= tol)


def test_flow_rhs_broadcasts(rng):
    p = PARAMS
    kappa = np.linspace(-0.5, 0.5, 6)
    out = flow_velocity_symbolic(p["d"], p["L"], p["gamma"], p["eps"], p["lam"], kappa, 0.3, 0.0, 0.0, 0.0)
    assert all(np.shape(x) == (6,) for x in out)
    # On M the off-manifold components vanish exactly (invariance, docs/math/dynamics.md#invariant-manifold).
    assert np.all(np.asarray(out[2:]) == 0)
