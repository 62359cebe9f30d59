"""Bayes risk (docs/math/baselines.md#bayes-risk): quadrature route vs Monte-Carlo route, and each step of the derivation.

Monte-Carlo comparisons are z-tests: each batch has a declared false-failure rate ALPHA, split
over its comparisons (Bonferroni), z = Phi^-1(1 - ALPHA / (2 m)). Deterministic comparisons use
the quadrature's own error estimate plus a few ulps of the value.
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import expit
from scipy.stats import norm

from numerics.montecarlo.bayes_risk import (bayes_predictor, bayes_risk_mc, conditional_variance,
                               posterior_weights, sample_token_statistics)
from numerics.montecarlo.geometry import random_orthonormal
from numerics.montecarlo.task import sample_task
from theory.bayes import bayes_risk_quad, log_likelihood_ratio_laws
from theory.parameters import Task
from numerics.montecarlo.statistics import bonferroni_z
from rng_streams import sfc64

ALPHA = 1e-3
EPS64 = np.finfo(float).eps
G_HALF = math.sqrt(0.5)


def z_crit(m):
    return bonferroni_z(ALPHA, int(m))


def problem(d, L, gamma, eps=0.0):
    return Task(d=d, L=L, gamma=gamma, eps=eps)


def bhattacharyya_bound(d, L, gamma):
    """Bayes excess <= (L-1) (4 gamma^2 / (1 + gamma^2)) BC^2 (derived in this test module).

    p_1 (1 - p_1) <= sum_{m>=2} sqrt(a_m / a_1) and p_m (1 - p_m) <= sqrt(a_m / a_1) (a = e^ell,
    token 1 informative); E_0[e^{ell/2}] = E_1[e^{-ell/2}] = BC = int sqrt(f_0 f_1), and the w^2-weighted
    versions are BC times the variance 2 gamma^2 / (1 + gamma^2) of the normalised sqrt(f_0 f_1).
    BC^2 = exp(-s^2 / (2 (1 + gamma^2))) (2 gamma / (1 + gamma^2))^d.
    """
    g2 = gamma * gamma
    log_bc2 = -(d / 2) / (2 * (1 + g2)) + d * math.log(2 * gamma / (1 + g2))
    return (L - 1) * 4 * g2 / (1 + g2) * math.exp(log_bc2)


def test_one_token_gives_eps_squared(rng):
    p = problem(7, 1, 0.8, eps=0.3)
    assert bayes_risk_quad(p).value == 0.3**2
    est = bayes_risk_mc(p, 1000, rng)
    assert est.mean == pytest.approx(0.09, rel=4 * EPS64) and est.stderr == 0.0


@pytest.mark.parametrize("d, gamma", [(2, G_HALF), (3, 0.5), (10, 1.0), (50, 1.5), (200, G_HALF), (1000, 0.9)])
def test_laws_of_ell_mass_and_mean(d, gamma):
    """E_0[ell] = -KL(f_0 || f_1) and E_1[ell] = KL(f_1 || f_0) (Gaussian KL), to working precision.

    Tolerance: the discretised law integrates 1 to within its checked 1e-10; the nodes are bounded
    by max|ell| so the mean may be off by 1e-10 max|ell| at most, plus rounding.
    """
    laws = log_likelihood_ratio_laws(d, gamma)
    s2, g2 = d / 2, gamma * gamma
    kl_10 = 0.5 * (d * g2 + s2 - d - d * math.log(g2))
    kl_01 = 0.5 * (d / g2 + s2 / g2 - d + d * math.log(g2))
    for name, expected in (("noise", -kl_01), ("informative", kl_10)):
        nodes, weights = laws[name]
        tol = 1e-10 * np.max(np.abs(nodes)) + 64 * EPS64 * np.sum(weights * np.abs(nodes))
        assert abs(weights @ nodes - expected) <= tol


@pytest.mark.parametrize("d, gamma", [(2, G_HALF), (3, 0.5), (6, 1.5), (10, 1.0), (4, 3.0)])
def test_likelihood_ratio_identity(d, gamma):
    """E_1[g(ell)] = E_0[e^ell g(ell)] and gamma^2 E_1w[g] = E_0w[e^ell g] (ell is the log-LR).

    Written with the bounded factor: e^ell for gamma <= 1 (ell is bounded above), e^-ell from the
    informative side for gamma > 1 (ell bounded below), so the tails cut at mass 1e-17 stay harmless.
    Tolerance: the laws integrate 1 to within 1e-10 (checked on construction).
    """
    laws = log_likelihood_ratio_laws(d, gamma)
    sign = 1.0 if gamma <= 1 else -1.0
    for t in (-2.0, 0.0, 3.0):
        for info, noise, factor in (("informative", "noise", 1.0), ("informative_w", "noise_w", gamma**2)):
            (n1, w1), (n0, w0) = laws[info], laws[noise]
            if sign > 0:
                lhs, rhs = factor * (w1 @ expit(n1 - t)), w0 @ (np.exp(n0) * expit(n0 - t))
            else:
                lhs, rhs = w0 @ expit(n0 - t), factor * (w1 @ (np.exp(-n1) * expit(n1 - t)))
            assert abs(lhs - rhs) <= 1e-10 * (1 + abs(lhs))


def test_laws_match_sampled_token_statistics(rng):
    """The noncentral chi^2 laws of ell (plain and w^2-size-biased) against sampled (u, w, r)."""
    cases = [(2, G_HALF), (5, 0.5), (20, 1.5)]
    thresholds = (-1.0, 2.0)
    z = z_crit(len(cases) * len(thresholds) * 4)
    for d, gamma in cases:
        p = problem(d, 1, gamma)  # L = 1: every sampled token is informative
        q = problem(d, 2, gamma)
        laws = log_likelihood_ratio_laws(d, gamma)
        s, g2 = math.sqrt(d / 2), gamma**2
        for cls, prob in (("informative", p), ("noise", q)):
            u, w, r, J = sample_token_statistics(prob, 100_000, rng)
            pick = np.ones_like(u, dtype=bool) if cls == "informative" else (np.arange(2)[None, :] != J[:, None])
            u, w, r = u[pick], w[pick], r[pick]
            sq = u * u + w * w + r
            ell = -d * math.log(gamma) - (sq - 2 * s * u + s * s) / (2 * g2) + sq / 2
            var = g2 if cls == "informative" else 1.0
            for t in thresholds:
                for name, values in ((cls, expit(ell - t)), (cls + "_w", w * w * expit(ell - t) / var)):
                    nodes, weights = laws[name]
                    exact = weights @ expit(nodes - t)
                    se = values.std(ddof=1) / math.sqrt(values.size)
                    assert abs(values.mean() - exact) <= z * se, (d, gamma, name, t)


def _direct_pair_sum(d, gamma, panel):
    """L = 2 without the Laplace step: B = gamma^2 E_1w,0[q(D)] + E_1,0w[q(D)], q = sigma(D) sigma(-D)."""
    laws = log_likelihood_ratio_laws(d, gamma, panel)

    def pair(a, b):
        """w1^T Q w2, Q = e / (1 + e)^2, e = exp(-|x1 - x2|): one (n1, n2) array worked in place, one temporary."""
        (x1, w1), (x2, w2) = laws[a], laws[b]
        e = np.subtract.outer(x1, x2)
        np.exp(np.negative(np.abs(e, out=e), out=e), out=e)
        q = np.add(1.0, e)
        return w1 @ np.divide(e, np.square(q, out=q), out=e) @ w2

    return gamma**2 * pair("informative_w", "noise") + pair("informative", "noise_w")


@pytest.mark.parametrize("d, gamma", [(2, G_HALF), (5, 0.5), (20, 0.5), (100, G_HALF), (50, 2.0)])
def test_laplace_step_matches_direct_sum_for_two_tokens(d, gamma):
    q = bayes_risk_quad(problem(d, 2, gamma))
    direct, coarse = _direct_pair_sum(d, gamma, 1.0), _direct_pair_sum(d, gamma, 2.0)
    assert abs(q.value - direct) <= q.abserr + abs(direct - coarse) + 16 * EPS64 * direct


@pytest.mark.parametrize("d", [2, 8, 40])
def test_gamma_one_two_tokens_closed_form(d):
    """gamma = 1: ell is Gaussian and independent of w, so B = 2 E[sigma(D) sigma(-D)], D ~ N(s^2, 2 s^2)."""
    s2 = d / 2
    sd = math.sqrt(2 * s2)
    value, err = quad(lambda z: expit(s2 + sd * z) * expit(-s2 - sd * z) * norm.pdf(z), -40, 40,
                      epsabs=1e-15, epsrel=1e-13, limit=200)
    q = bayes_risk_quad(problem(d, 2, 1.0))
    assert abs(q.value - 2 * value) <= q.abserr + 2 * err + 16 * EPS64 * value


# Points where the Monte Carlo is reliable (the excess is not carried by rare sequences).
AGREEMENT_POINTS = [(2, 2, G_HALF), (3, 3, 0.5), (5, 10, G_HALF), (10, 10, G_HALF), (4, 4, 1.0),
                    (6, 3, 1.5), (2, 5, 2.0)]


def test_quadrature_and_monte_carlo_agree(rng):
    z = z_crit(len(AGREEMENT_POINTS))
    rng = sfc64(rng)   # compiled draws (tests/rng_streams.py)
    for d, L, gamma in AGREEMENT_POINTS:
        p = problem(d, L, gamma, eps=0.2)
        q = bayes_risk_quad(p)
        est = bayes_risk_mc(p, 60_000, rng)
        assert abs(est.mean - q.value) <= z * est.stderr + q.abserr, (d, L, gamma, est, q)
        # Power: a 4% error in the excess would be detected (the test's resolution is below it).
        assert z * est.stderr < 0.04 * (q.value - 0.04), (d, L, gamma, est)


def test_monte_carlo_rejects_a_wrong_gamma(rng):
    """Power check: the same comparison rejects the quadrature at gamma off by 3%."""
    rng = sfc64(rng)   # the stream of the comparison it checks
    p = problem(5, 10, G_HALF)
    est = bayes_risk_mc(p, 60_000, rng)
    wrong = bayes_risk_quad(problem(5, 10, 1.03 * G_HALF))
    assert abs(est.mean - wrong.value) > z_crit(len(AGREEMENT_POINTS)) * est.stderr


def test_reduced_sampling_matches_whole_tokens(rng):
    """Whole d-dimensional tokens (numerics.montecarlo.task) vs the reduced (u, w, r) draws: same Bayes risk;
    and E[(Y - E[Y|X])^2] = E[Var(Y|X)] on whole tokens (paired), which fails for a wrong posterior."""
    d, L, gamma, eps = 5, 4, G_HALF, 0.3
    p = problem(d, L, gamma, eps)
    k_star, v_star = random_orthonormal(d, 2, rng)
    X, Y, _ = sample_task(p, k_star, v_star, 60_000, rng)
    mean, var = bayes_predictor(p, X, k_star, v_star)
    reduced = bayes_risk_mc(p, 60_000, rng)
    z = z_crit(3)
    se = math.hypot(var.std(ddof=1) / math.sqrt(var.size), reduced.stderr)
    assert abs(var.mean() - reduced.mean) <= z * se
    diff = np.square(Y - mean) - var
    assert abs(diff.mean()) <= z * diff.std(ddof=1) / math.sqrt(diff.size)
    # Power: the gamma = 1 posterior ignores the token norms; the paired test must reject it.
    u, w = X @ k_star, X @ v_star
    wrong_mean, wrong_var = conditional_variance(posterior_weights(problem(d, L, 1.0), u, np.sum(X * X, -1)), w)
    wrong = np.square(Y - wrong_mean) - (wrong_var + eps**2)
    assert abs(wrong.mean()) > z * wrong.std(ddof=1) / math.sqrt(wrong.size)


def test_bayes_risk_at_least_eps_squared(rng):
    p = problem(4, 6, G_HALF, eps=0.5)
    u, w, r, _ = sample_token_statistics(p, 20_000, rng)
    _, var = conditional_variance(posterior_weights(p, u, u * u + w * w + r), w)
    assert np.all(var >= 0)
    assert bayes_risk_quad(p).value >= 0.25


@pytest.mark.parametrize("gamma", [G_HALF, 0.5, 1.0, 1.5])
def test_bayes_excess_below_bhattacharyya_bound_and_vanishes(gamma):
    """0 < B <= (L-1)(4 gamma^2/(1+gamma^2)) BC^2 at every d; the bound decays exponentially in d,
    so the Bayes risk tends to eps^2 (for gamma^2 = 1/2 too, where norms carry no information)."""
    previous = math.inf
    for d in (2, 5, 20, 50, 100, 200):
        q = bayes_risk_quad(problem(d, 10, gamma))
        assert 0 <= q.value <= bhattacharyya_bound(d, 10, gamma) + q.abserr
        assert q.value < previous
        previous = q.value
    assert bhattacharyya_bound(200, 10, gamma) < 1e-4


def test_bad_input():
    with pytest.raises(ValueError, match="d=1"):
        bayes_risk_quad(problem(1, 3, 1.0))
    with pytest.raises(ValueError, match="panel"):
        bayes_risk_quad(problem(3, 3, 1.0), panel=0.0)
    with pytest.raises(ValueError, match="gamma"):
        bayes_risk_quad(problem(4, 3, 1.0 + 1e-9))
    with pytest.raises(ValueError, match="n="):
        bayes_risk_mc(problem(3, 3, 1.0), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        bayes_risk_mc(problem(3, 3, 1.0), 10, 0)


@pytest.mark.slow
def test_quadrature_and_monte_carlo_agree_large_sample(rng):
    """As the default test with 20x the samples and more points (about 1 minute)."""
    points = AGREEMENT_POINTS + [(20, 10, G_HALF), (8, 100, G_HALF), (3, 2, 3.0), (12, 5, 0.8)]
    z = z_crit(len(points))
    for d, L, gamma in points:
        p = problem(d, L, gamma)
        q = bayes_risk_quad(p)
        est = bayes_risk_mc(p, 1_200_000, rng)
        assert abs(est.mean - q.value) <= z * est.stderr + q.abserr, (d, L, gamma, est, q)
