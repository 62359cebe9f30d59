"""Invariance of M, the reduced flow, its fixed points and the rates at the oracle (docs/math/dynamics.md#local-rates)."""

import functools

import numpy as np
import pytest
from scipy.special import erf

from theory.parameters import Problem
from theory.risk import risk_from_arrays, risk_grad_from_arrays
from theory.special import erf_prime
from theory.stability import oracle_local_rates
from theory.symbolic.fixed_points import classify_on_grid, fixed_points
from theory.symbolic.functions import numeric_function, roundoff_scale
from theory.symbolic.manifold import oracle_local_rates_symbolic, manifold_invariance, reduced_flow
from theory.symbolic.risk_expr import risk_grad_symbolic, risk_gradient_expressions, risk_symbolic, risk_symbols
from theory.zeta import zeta

EPS = np.finfo(float).eps


def _params(rng, n):
    """Moderate parameters (a_l <= ~5, so nothing underflows in the Jacobians)."""
    return (rng.integers(2, 200, n).astype(float), rng.integers(2, 20, n).astype(float),
            rng.uniform(0.3, 1.5, n), rng.uniform(0, 0.5, n), rng.uniform(0.05, 0.5, n))


def _stated_on_M(d, L, gamma, eps, lam, kappa, nu):
    """docs/math/dynamics.md#flow-on-m formulas on M, hand-written: (R_M, dR/dkappa, dR/dnu)."""
    s = np.sqrt(d / 2)
    a_l = lam * s / np.sqrt(1 + 2 * lam**2 * gamma**2)
    b = a_l / np.sqrt(1 + 4 * lam**2 * gamma**2)
    R = eps**2 + (L - 1) * zeta(0.0, lam) + gamma**2 * (1 - 2 * nu * erf(a_l * kappa) + zeta(lam * s * kappa, lam * gamma))
    r_kappa = 2 * gamma**2 * a_l * erf_prime(a_l * kappa) * (erf(b * kappa) - nu)
    return R, r_kappa, -2 * gamma**2 * erf(a_l * kappa)


def test_manifold_invariance_proved():
    result = manifold_invariance()
    assert result.max_degree == 2
    assert result.linear_terms == (0, 0, 0)
    assert result.partials_on_M == (0, 0, 0)
    assert result.flow_on_M == (0, 0, 0)
    assert result.pgd_on_M == (0, 0, 0)
    assert result.proved


def test_reduced_flow_equals_the_stated_formulas_symbolically():
    flow = reduced_flow()
    assert flow.residuals == (0, 0, 0, 0, 0)


def test_stated_on_manifold_formulas_numerically(rng):
    n = 300
    d, L, gamma, eps, lam = _params(rng, n)
    d = d * rng.integers(1, 50, n)  # also larger d
    kappa, nu = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    zero = np.zeros(n)
    args = (d, L, gamma, eps, lam, kappa, nu, zero, zero, zero)
    R, r_kappa, r_nu = _stated_on_M(d, L, gamma, eps, lam, kappa, nu)
    sym = risk_grad_symbolic(*args)
    hand = risk_grad_from_arrays(*args)
    # Values are sums of <= 4 O(gamma^2 (L + 1)) terms of a few rounded factors each; exp(-a^2)
    # amplifies argument errors by a^2 <= d lam^2 / 2.
    scale = 64 * EPS * (1 + d * lam**2 / 2) * (eps**2 + gamma**2 * (1 + a_l_bound(d, lam, gamma)) + L)
    for got in (risk_symbolic(*args), risk_from_arrays(*args)):
        assert np.all(np.abs(got - R) <= scale)
    for grads in (sym, hand):
        assert np.all(np.abs(grads[0] - r_kappa) <= scale)
        assert np.all(np.abs(grads[1] - r_nu) <= scale)
        assert np.all(np.asarray(grads[2:]) == 0)


def a_l_bound(d, lam, gamma):
    return lam * np.sqrt(d / 2) / np.sqrt(1 + 2 * lam**2 * gamma**2)


def test_exactly_five_fixed_points_with_expected_kinds():
    kinds = {(int(p.kappa), int(p.nu)): p.kind for p in fixed_points()}
    assert kinds == {(0, 0): "saddle", (1, 1): "stable", (-1, -1): "stable",
                     (1, -1): "unstable", (-1, 1): "unstable"}
    # Signs of det and trace decided by sympy for all positive parameters.
    assert all(p.proved for p in fixed_points())


@pytest.mark.parametrize("index", range(5))
def test_grid_classification_agrees(index):
    p = fixed_points()[index]
    grid = classify_on_grid(float(p.kappa), float(p.nu))
    assert grid.kind == p.kind
    assert grid.n_undecided < grid.n_points / 2  # the grid decided most of its points


@functools.lru_cache(maxsize=None)
def _scale_functions():
    S = risk_symbols()
    return tuple(roundoff_scale(S.all, g) for g in risk_gradient_expressions()[:2])


def roundoff(params, k0, n0, h):
    """Absolute roundoff of the finite-difference quotient of f = -(1 - x^2) R_x at (k0, n0).

    1 - (x0 +- h)^2 carries an absolute error ~ eps; times |R_x| and divided by h in the quotient
    this gives ~ eps |R_x| / h. R_x carries ~ eps * (sum of |additive terms|); times
    |1 - x^2| <= 2 and divided by... nothing more, since near a fixed point it enters the quotient
    as [(1 - x^2) R_x](h) - [(1 - x^2) R_x](-h) over 2h with |1 - x^2| = O(h) at the corners and
    R_x = O(h) at (0, 0): ~ eps * scale.
    """
    zero = np.zeros(())
    grads = risk_grad_from_arrays(*params, np.array(k0), np.array(n0), zero, zero, zero)
    size = max(abs(float(grads[0])), abs(float(grads[1])))
    scale = sum(f(*params, k0, n0, 0.0, 0.0, 0.0) for f in _scale_functions())
    return 64 * EPS * (4 * size / h + 2 * scale)


def _hand_flow_on_M(params, kappa, nu):
    zero = np.zeros_like(kappa)
    g = risk_grad_from_arrays(*params, kappa, nu, zero, zero, zero)
    return np.array([-(1 - kappa**2) * g[0], -(1 - nu**2) * g[1]])


@pytest.mark.parametrize("index", range(5))
def test_fixed_point_eigenvalues_match_finite_difference_jacobian(index, rng):
    p = fixed_points()[index]
    S = risk_symbols()
    eig = numeric_function(S.params, list(p.eigenvalues))
    k0, n0 = float(p.kappa), float(p.nu)
    h = 1e-3
    for params in zip(*_params(rng, 10)):
        jac, err = np.empty((2, 2)), np.empty((2, 2))
        for j, e in enumerate(np.eye(2)):
            f = lambda t: _hand_flow_on_M(params, np.array(k0 + t * e[0]), np.array(n0 + t * e[1]))
            d1 = (f(h) - f(-h)) / (2 * h)
            d2 = (f(2 * h) - f(-2 * h)) / (4 * h)
            jac[:, j] = (4 * d1 - d2) / 3
            # Richardson error estimate of the h-quotient + roundoff (see ``roundoff``).
            err[:, j] = 4 * np.abs(d1 - d2) / 3 + roundoff(params, k0, n0, h)
        want = np.sort(np.real(np.asarray(eig(*params), dtype=float)))
        got = np.sort(np.linalg.eigvals(jac).real)
        # The Jacobians here are diagonal (corners) or symmetric ((0, 0)): eigenvalues move by at
        # most the Frobenius norm of the perturbation.
        tol = np.sqrt(np.sum(err**2))
        assert np.all(np.abs(got - want) <= tol)
        assert np.all(np.sign(got) == np.sign(want))


def test_local_rates_proved_and_match_stability_module(rng):
    rates = oracle_local_rates_symbolic()
    assert rates.proved
    S = risk_symbols()
    f = numeric_function(S.params, [rates.r_phi, rates.r_psi])
    for d, L, gamma, eps, lam in zip(*_params(rng, 20)):
        got = oracle_local_rates(Problem(d=int(d), L=int(L), gamma=gamma, eps=eps, lam=lam))
        r_phi, r_psi = f(d, L, gamma, eps, lam)
        a2 = d * lam**2 / 2
        assert abs(got.r_phi - r_phi) <= 64 * EPS * (1 + a2) * abs(r_phi)
        assert abs(got.r_psi - r_psi) <= 64 * EPS * abs(r_psi)


def test_local_rates_match_angle_flow_finite_differences():
    # phi' = -kappa'/sin(phi) at kappa = cos(phi), nu = 1; odd in phi, so phi'(h)/h -> -r_phi.
    params = (400.0, 10.0, np.sqrt(0.5), 0.0, 0.1)
    rates = oracle_local_rates(Problem(d=400, lam=0.1))
    for which, r in ((0, rates.r_phi), (1, rates.r_psi)):
        vals = []
        for h in (1e-3, 2e-3):
            kappa, nu = (np.cos(h), 1.0) if which == 0 else (1.0, np.cos(h))
            dot = _hand_flow_on_M(params, np.array(kappa), np.array(nu))[which]
            vals.append(-dot / np.sin(h) / h)
        # Error O(h^2): Richardson estimate as tolerance.
        richardson = (4 * vals[0] - vals[1]) / 3
        assert abs(richardson - (-r)) <= 4 * abs(vals[0] - vals[1]) / 3 + 1e-9 * abs(r)


def test_the_symbolic_layer_loads_no_scipy_optimize_until_it_minimises(new_process_imports):
    """The claims on M (invariance, fixed points, local rates) import ``theory.symbolic``: that
    loads sympy, not scipy.optimize (~0.3 s CPU per worker), which only
    ``minimise_oracle_excess`` needs (loaded on its first call). A new process after
    ``import theory.symbolic; from theory.symbolic import manifold`` (tests/conftest.py)."""
    loaded = new_process_imports["symbolic"]
    assert "sympy" in loaded and "scipy.optimize" not in loaded, loaded
