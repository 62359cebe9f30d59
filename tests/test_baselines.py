"""Baselines (docs/math/baselines.md#best-linear-predictor): linear predictor (paper Prop 3) vs OLS on samples, null and oracle attention.

Monte-Carlo comparisons are z-tests with false-failure rate ALPHA per test, Bonferroni over the
comparisons of the test. Deterministic comparisons are in ulps of the values.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from numerics.montecarlo.geometry import random_orthonormal
from numerics.montecarlo.ols import ols_fit, ols_risk_mc
from numerics.montecarlo.task import sample_task
from rng_streams import sfc64
from theory.baselines import (attention_linear_crossover, linear_predictor_risk, linear_risk,
                              linear_risk_fixed_location, null_risk, oracle_best_lambda,
                              oracle_risk_prescribed, prescribed_lambda)
from theory.risk import oracle_risk
from theory.parameters import Task

ALPHA = 1e-3
EPS64 = np.finfo(float).eps
G_HALF = math.sqrt(0.5)


def z_crit(m):
    return norm.isf(ALPHA / (2 * m))


def prop3_coef(L, gamma, v_star):
    return np.tile(gamma**2 / (gamma**2 + L - 1) * v_star, (L, 1))


@pytest.mark.parametrize("d, L, gamma, eps", [(3, 1, 0.7, 0.2), (5, 4, G_HALF, 0.0), (20, 10, 1.3, 0.5)])
def test_prop3_is_the_minimum_of_the_linear_risk(rng, d, L, gamma, eps):
    """The quadratic risk of linear predictors equals Prop 3 at Prop 3's coefficients, and every
    perturbation increases it (R(beta* + h) - R(beta*) = h^T M h > 0: a minimum, not a saddle)."""
    p = Task(d=d, L=L, gamma=gamma, eps=eps)
    k_star, v_star = random_orthonormal(d, 2, rng)
    best = linear_predictor_risk(p, prop3_coef(L, gamma, v_star), k_star, v_star)
    assert best == pytest.approx(float(linear_risk(p)), rel=64 * EPS64, abs=64 * EPS64)
    for _ in range(5):
        h = 1e-3 * rng.standard_normal((L, d))
        assert linear_predictor_risk(p, prop3_coef(L, gamma, v_star) + h, k_star, v_star) > best
    fixed = np.zeros((L, d))
    fixed[L - 1] = v_star
    assert linear_predictor_risk(p, fixed, k_star, v_star, J=L - 1) == pytest.approx(eps**2, abs=64 * EPS64)


def test_linear_predictor_risk_matches_sampled_squared_error(rng):
    """The second-moment algebra behind Prop 3, checked on random coefficients by Monte Carlo."""
    cases = [(4, 3, G_HALF, None), (6, 2, 1.4, None), (5, 3, 0.8, 1)]
    z = z_crit(len(cases))
    rng = sfc64(rng)   # compiled draws (tests/rng_streams.py)
    for d, L, gamma, J in cases:
        p = Task(d=d, L=L, gamma=gamma, eps=0.3)
        k_star, v_star = random_orthonormal(d, 2, rng)
        coef = 0.3 * rng.standard_normal((L, d))
        X, Y, _ = sample_task(p, k_star, v_star, 200_000, rng, J=J)
        loss = np.square(Y - np.einsum("nld,ld->n", X, coef))
        exact = linear_predictor_risk(p, coef, k_star, v_star, J=J)
        assert abs(loss.mean() - exact) <= z * loss.std(ddof=1) / math.sqrt(loss.size)


# (d, L, gamma): d = 5 and d = 20 at the same (L, gamma) show the independence of d.
OLS_CASES = [(5, 2, G_HALF), (20, 2, G_HALF), (5, 4, 1.0), (20, 4, 1.0), (12, 3, 0.5)]


def test_ols_matches_prop3_for_uniform_location(rng):
    """OLS test risk, minus the sandwich estimate of its estimation excess (numerics.montecarlo.ols), equals
    Prop 3 within z stderr; the excess correction is a small part of the budget (n >> L d).
    Power: Prop 3 differs from the null risk by gamma^4/(gamma^2 + L - 1) >= 0.05 here, over 15
    stderr, so an OLS that failed to learn would be rejected."""
    z = z_crit(len(OLS_CASES))
    rng = sfc64(rng)   # compiled draws (tests/rng_streams.py)
    for d, L, gamma in OLS_CASES:
        p = Task(d=d, L=L, gamma=gamma, eps=0.3)
        k_star, v_star = random_orthonormal(d, 2, rng)
        res = ols_risk_mc(p, k_star, v_star, n_train=60_000, n_test=60_000, rng=rng)
        est = res.corrected
        assert abs(est.mean - float(linear_risk(p))) <= z * est.stderr, (d, L, gamma, est)
        assert res.excess_correction < est.stderr
        assert float(null_risk(p) - linear_risk(p)) > 15 * est.stderr


def test_ols_reaches_eps_squared_for_fixed_location(rng):
    z = z_crit(2)
    rng = sfc64(rng)   # compiled draws (tests/rng_streams.py)
    for d, L in ((5, 3), (20, 2)):
        p = Task(d=d, L=L, gamma=G_HALF, eps=0.4)
        k_star, v_star = random_orthonormal(d, 2, rng)
        est = ols_risk_mc(p, k_star, v_star, n_train=40_000, n_test=40_000, rng=rng, J=1).corrected
        assert abs(est.mean - float(linear_risk_fixed_location(p))) <= z * est.stderr


def test_ols_fit_recovers_exact_linear_model(rng):
    X = rng.standard_normal((50, 2, 3))
    coef = rng.standard_normal((2, 3))
    Y = np.einsum("nld,ld->n", X, coef)
    assert np.allclose(ols_fit(X, Y), coef, rtol=0, atol=1e3 * EPS64)


def test_null_risk_matches_sampled_output_variance(rng):
    p = Task(d=6, L=4, gamma=0.9, eps=0.5)
    rng = sfc64(rng)   # compiled draws (tests/rng_streams.py)
    k_star, v_star = random_orthonormal(6, 2, rng)
    _, Y, _ = sample_task(p, k_star, v_star, 200_000, rng)
    y2 = Y * Y
    assert abs(y2.mean() - float(null_risk(p))) <= z_crit(1) * y2.std(ddof=1) / math.sqrt(y2.size)


@pytest.mark.parametrize("d, L, gamma", [(2, 10, G_HALF), (50, 10, G_HALF), (10**4, 3, 1.5), (10**8, 100, G_HALF)])
def test_oracle_best_lambda_is_an_interior_minimum(d, L, gamma):
    p = Task(d=d, L=L, gamma=gamma, eps=0.1)
    opt = oracle_best_lambda(p)
    assert opt.interior
    assert opt.risk == pytest.approx(float(oracle_risk(p.with_lam(opt.lam))), rel=4 * EPS64)
    # Brute force on a fine grid: nothing beats the optimum beyond rounding of the risk.
    grid = np.exp(np.linspace(math.log(opt.lam) - 3, math.log(opt.lam) + 3, 2001))
    brute = oracle_risk(p.with_lam(grid))
    assert opt.risk <= brute.min() * (1 + 16 * EPS64)
    assert opt.risk < float(null_risk(p))


def test_prescribed_schedule():
    p = Task(d=400, L=10, gamma=G_HALF, eps=0.0)
    lam = prescribed_lambda(400, 10)
    assert lam == pytest.approx(4000 ** -0.25, rel=4 * EPS64)
    assert float(oracle_risk_prescribed(p)) == float(oracle_risk(p.with_lam(lam)))
    assert float(oracle_risk_prescribed(p)) >= oracle_best_lambda(p).risk


@pytest.mark.parametrize("L, gamma", [(2, 2.0), (3, 1.0), (10, G_HALF), (10, 2.0)])
def test_attention_beats_linear_beyond_a_single_crossover(L, gamma):
    d_c = attention_linear_crossover(L, gamma)
    lin = float(linear_risk(Task(d=2, L=L, gamma=gamma)))
    below = [oracle_best_lambda(Task(d=d, L=L, gamma=gamma)).risk - lin
             for d in range(2, math.ceil(d_c))]
    above = [oracle_best_lambda(Task(d=int(d), L=L, gamma=gamma)).risk - lin
             for d in np.unique(np.round(np.logspace(math.log10(math.ceil(d_c)), 8, 30)))]
    assert all(g > 0 for g in below) and all(g < 0 for g in above)


def test_baselines_bad_input(rng):
    p = Task(d=5, L=3)
    k_star, v_star = random_orthonormal(5, 2, rng)
    with pytest.raises(ValueError, match="coef"):
        linear_predictor_risk(p, np.zeros((2, 5)), k_star, v_star)
    with pytest.raises(ValueError, match="n_train"):
        ols_risk_mc(p, k_star, v_star, n_train=10, n_test=100, rng=rng)
    with pytest.raises(ValueError, match="L=1"):
        attention_linear_crossover(1, 1.0)
    with pytest.raises(ValueError, match="no crossover"):
        attention_linear_crossover(10, G_HALF, d_range=(1e3, 1e6))


@pytest.mark.slow
def test_ols_matches_prop3_in_the_paper_setting(rng):
    """L = 10, gamma^2 = 1/2 (the paper's setting), d = 10 and 20: p = L d up to 200 (about 1 minute)."""
    z = z_crit(2)
    for d in (10, 20):
        p = Task(d=d, L=10, gamma=G_HALF, eps=0.1)
        k_star, v_star = random_orthonormal(d, 2, rng)
        res = ols_risk_mc(p, k_star, v_star, n_train=400_000, n_test=400_000, rng=rng)
        est = res.corrected
        assert abs(est.mean - float(linear_risk(p))) <= z * est.stderr, (d, est)
        assert res.excess_correction < est.stderr
