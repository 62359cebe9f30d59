"""The fitted rates of Monte-Carlo errors (numerics.montecarlo.rate_fits,
docs/math/highdim.md#the-rate-as-a-test): exact on noiseless power laws, intervals that cover the true
exponent at their stated rate and reject p = 0 when the errors decay, bad input refused."""

from __future__ import annotations

import numpy as np
import pytest

from numerics.montecarlo import log_slope_fit, power_law_fit, weighted_slope

X = np.array([300.0, 1000.0, 3000.0, 10_000.0])


def test_noiseless_power_law_is_fitted_exactly():
    """e = a_j (x / 1000)^-0.9 with no noise: chi^2 is 0 at p = 0.9 (a grid point; the grid's spacing
    is 1e-3) and the amplitudes come back to the profile's round-off."""
    a = np.array([3e-3, -5e-3])
    e = a * (X[:, None] / 1000.0) ** -0.9
    fit = power_law_fit(X, e, np.full_like(e, 1e-4), x0=1000.0)
    assert fit.p == pytest.approx(0.9, abs=1e-12)
    assert fit.chi2_min < 1e-18 and fit.dof == 8 - 3
    assert np.allclose(fit.amplitudes, a, rtol=1e-12)
    assert fit.rejects_no_decay


def test_interval_covers_the_true_exponent_at_its_rate():
    """200 noisy data sets (Gaussian errors of known se, explicit generators from one SeedSequence):
    the 90% intervals miss the true p = 1 in a number of sets that is Binomial(200, ~0.1) for a correct
    interval; the bounds 8..34 hold with probability > 0.998 (binomial tails 4.8e-4 and 7.8e-4), and
    they fail if the interval's chi^2 threshold is q = 1 (68%: ~64 misses) or q = 10.8 (99.9%: ~0)."""
    a = np.array([2e-3, 3e-3])
    se = np.full((X.size, 2), 2e-4)
    misses = 0
    for child in np.random.SeedSequence(1804).spawn(200):
        e = a * (X[:, None] / 1000.0) ** -1.0 + se * np.random.default_rng(child).standard_normal(se.shape)
        fit = power_law_fit(X, e, se, x0=1000.0, rate=0.1)
        misses += not (fit.low <= 1.0 <= fit.high)
    assert 8 <= misses <= 34, misses


def test_no_decay_is_not_rejected_when_the_errors_do_not_decay():
    """Errors constant in x up to noise: a correct 99.9% interval contains p = 0 except with probability
    ~1e-3 over draws (this draw is fixed by the seed), so p = 0 is not rejected."""
    se = np.full((X.size, 2), 1e-4)
    e = np.array([5e-4, -8e-4]) + se * np.random.default_rng(18).standard_normal(se.shape)
    fit = power_law_fit(X, e, se, x0=1000.0, rate=1e-3)
    assert fit.low <= 0.0 <= fit.high and not fit.rejects_no_decay


def test_log_slope_of_an_exact_power():
    q, qse = log_slope_fit(X, 0.7 * X ** -0.5, 0.01 * X ** -0.5)
    assert q == pytest.approx(-0.5, abs=1e-12)
    # se(log y) = 0.01 / 0.7 at every point: the slope's standard error of ordinary least squares
    lx = np.log(X)
    assert qse == pytest.approx(0.01 / 0.7 / np.sqrt(np.sum((lx - lx.mean()) ** 2)), rel=1e-10)


def test_weighted_slope_is_the_normal_equations_solution():
    """Against an independent route: numpy's weighted polyfit (weights 1 / se on the residuals) and the
    inverse of the normal matrix for the slope's variance; equal to round-off (~1e-12 relative)."""
    rng = np.random.default_rng(3)
    x, se = rng.uniform(0.0, 5.0, 7), rng.uniform(0.1, 1.0, 7)
    y = 1.0 - 0.4 * x + se * rng.standard_normal(7)
    b, b_se = weighted_slope(x, y, se)
    A = np.column_stack([np.ones_like(x), x])
    cov = np.linalg.inv(A.T @ (A / se[:, None] ** 2))
    assert b == pytest.approx(np.polyfit(x, y, 1, w=1.0 / se)[0], rel=1e-12)
    assert b_se == pytest.approx(np.sqrt(cov[1, 1]), rel=1e-12)
    with pytest.raises(ValueError, match="distinct x"):
        weighted_slope([1.0, 1.0], [1.0, 2.0], [0.1, 0.1])
    with pytest.raises(ValueError, match="shapes"):
        weighted_slope([1.0, 2.0], [1.0, 2.0, 3.0], [0.1, 0.1])


@pytest.mark.parametrize("kwargs", [dict(x=X[:2], e=np.ones((2, 1)), se=np.ones((2, 1))),
                                    dict(x=X, e=np.ones((4, 1)), se=np.zeros((4, 1))),
                                    dict(x=X, e=np.ones((4, 2)), se=np.ones((4, 1))),
                                    dict(x=X, e=np.ones((4, 1)), se=np.ones((4, 1)), rate=1.5)])
def test_bad_input_raises(kwargs):
    with pytest.raises(ValueError):
        power_law_fit(**kwargs)
    with pytest.raises(ValueError, match="y="):
        log_slope_fit(X, -np.ones(4), np.ones(4))
