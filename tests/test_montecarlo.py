"""Machinery of the Monte-Carlo route: streaming summaries, memory bound, validation.

Agreement of ``population_risk_mc`` with the other routes is tested in test_risk_routes.py.
"""

import dataclasses
import tracemalloc

import numpy as np
import pytest

from numerics.montecarlo.geometry import vectors_from_overlaps
from numerics.montecarlo.population_risk import Estimate, population_risk_mc, risk_mc_from_vectors
from numerics.montecarlo.task import attention_predictor, sample_sequences
from theory import Overlaps, Problem, population_risk
from numerics.montecarlo.statistics import bonferroni_z

EPS = np.finfo(float).eps


def test_estimate_z_score_and_frozen():
    est = Estimate(mean=1.5, stderr=0.25, n=100)
    assert est.z(1.0) == 2.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.mean = 0.0


def test_batches_merge_to_the_one_pass_statistics(rng):
    """Replaying the same stream batch by batch, the merged (n, mean, M2) equal a two-pass
    computation on all losses. Chan's update and pairwise summation are both backward stable:
    the means differ by O((number of merges + log2 n) eps) relative, 64 eps is a bound
    (8 merges, n = 5000); the same for the variance, whose relative error carries an extra
    factor from the squared deviations: 256 eps."""
    problem = Problem(d=50, L=4, eps=0.2, lam=0.6)
    overlaps = Overlaps(kappa=0.4, nu=0.5, theta=0.1, eta=0.2, rho=-0.1)
    k, v, k_star, v_star = vectors_from_overlaps(overlaps, 4)
    seed = rng.integers(2**63)
    est = risk_mc_from_vectors(problem, k, v, k_star, v_star, n=5000,
                               rng=np.random.default_rng(seed), chunk=700)
    gen = np.random.default_rng(seed)
    losses = []
    for m in [700] * 7 + [100]:
        X, Y, _ = sample_sequences(5.0, float(problem.gamma), 0.2, 4, k_star, v_star, m, gen)
        losses.append((Y - attention_predictor(X, k, v, 0.6)) ** 2)
    loss = np.concatenate(losses)
    assert est.n == loss.size == 5000
    assert abs(est.mean - loss.mean()) <= 64 * EPS * loss.mean()
    sd = loss.std(ddof=1) / np.sqrt(loss.size)
    assert abs(est.stderr - sd) <= 256 * EPS * sd


def test_memory_is_bounded_by_the_batch_cap(rng):
    """L = 1000 with the default chunk: batches are capped at 2**22 token coordinates (32 MiB),
    so the peak stays well below the 160 MB that one batch of all 5000 sequences would take.
    Allowed: the batch (32 MiB) + its projections and gates (a few (batch, L) arrays, 8 MiB
    each) with room to spare: 100 MB."""
    problem = Problem(d=10**5, L=1000, lam=0.05)
    tracemalloc.start()
    try:
        population_risk_mc(problem, Overlaps(kappa=0.5, nu=0.5), n=5000, rng=rng)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100e6


@pytest.mark.slow
def test_ten_million_samples(rng):
    """n = 1e7 in bounded memory; z-test against the closed form at rate 1e-3."""
    problem = Problem(d=400, L=10, eps=0.1, lam=0.5)
    overlaps = Overlaps(kappa=0.3, nu=0.2, theta=0.1, eta=-0.2, rho=0.15)
    est = population_risk_mc(problem, overlaps, n=10**7, rng=rng)
    assert est.n == 10**7
    assert abs(est.z(float(population_risk(problem, overlaps)))) <= bonferroni_z(1e-3)


@pytest.mark.parametrize("kwargs, field", [
    (dict(n=1), "n"), (dict(n=10.0), "n"), (dict(chunk=0), "chunk"),
    (dict(J=7), "J"),
    (dict(problem=Problem(d=np.array([4, 5]), lam=0.5)), "d"),
    (dict(problem=Problem(d=4, lam=np.array([0.1, 0.5]))), "lam"),
    (dict(overlaps=Overlaps(kappa=np.array([0.1, 0.2]), nu=0.3)), "kappa"),
    (dict(problem=Problem(d=2, lam=0.5)), "d"),   # these overlaps have rank 4 > d
])
def test_rejects_bad_input(kwargs, field, rng):
    args = dict(problem=Problem(d=4, L=3, lam=0.5),
                overlaps=Overlaps(kappa=0.3, nu=0.4, theta=0.2, eta=0.1, rho=0.2), n=100, rng=rng)
    args.update(kwargs)
    with pytest.raises(ValueError, match=field):
        population_risk_mc(**args)


def test_small_d_realisable_overlaps_are_accepted(rng):
    """Overlaps of vectors in R^2 (rank 2) are accepted at d = 2 by the reduced route."""
    k = np.array([0.6, 0.8])
    v = np.array([-0.8, 0.6])
    overlaps = Overlaps(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=float(k @ v))
    est = population_risk_mc(Problem(d=2, L=2, lam=0.5), overlaps, n=1000, rng=rng)
    assert est.n == 1000 and np.isfinite(est.mean)


def test_running_mean_merges_batches_like_one_pass(rng):
    """Chan's merge of uneven batches gives the mean and variance of the whole sample, to roundoff
    (a few ulps of the second moment: the shifted data keep the merge well conditioned)."""
    from numerics.montecarlo.population_risk import RunningMean

    x = 1e3 + rng.standard_normal(10_001)
    acc = RunningMean()
    for part in np.split(x, [1, 7, 500, 4096]):
        acc.add(part)
    est = acc.estimate(offset=2.0)
    assert est.n == x.size
    assert abs(est.mean - (2.0 + x.mean())) <= 8 * np.finfo(float).eps * 1e3
    # The variance of data with mean 1e3 and spread 1 is conditioned like eps (mean/std)^2 ~ 2e-10.
    assert abs(est.stderr / (x.std(ddof=1) / np.sqrt(x.size)) - 1) <= 5 * np.finfo(float).eps * 1e6
    with pytest.raises(ValueError, match="at least 2"):
        RunningMean().estimate()


def test_sd_with_stderr_is_the_delta_method_and_covers_the_normal_value(rng):
    """Against scipy's fourth central moment (the delta-method formula, to round-off ~1e-12), and for
    normal samples against the known se(s) ~ sigma / sqrt(2 (n - 1)): for normal data m4 - s^4 = 2 sigma^4
    is estimated with standard deviation ~sqrt(96 / n) sigma^4 (var of x^4 is 96 sigma^8), so se(s), its
    square root, has relative error ~sqrt(96 / n) / 4 = 1.7% at n = 20,000: 10% is ~6 of it."""
    from scipy.stats import moment

    from numerics.montecarlo.statistics import sd_with_stderr

    x = rng.standard_normal((3, 20_000)) * np.array([[0.5], [1.0], [2.0]])
    sd, se = sd_with_stderr(x, axis=1)
    m4 = moment(x, 4, axis=1)
    np.testing.assert_allclose(sd, x.std(axis=1, ddof=1), rtol=1e-14)
    np.testing.assert_allclose(se, np.sqrt((m4 - sd ** 4) / x.shape[1]) / (2 * sd), rtol=1e-12)
    np.testing.assert_allclose(se, np.array([0.5, 1.0, 2.0]) / np.sqrt(2 * (x.shape[1] - 1)), rtol=0.1)
