"""The moment closure of online SGD at step c/d (docs/math/highdim.md#fluctuations-of-the-fast-overlap):
structure of the covariance inputs, the small-c limit, and (slow) the comparison with the reduced
simulator at d = 10^4."""

import numpy as np
import pytest
from scipy.stats import norm

from numerics import online_sgd_reduced
from numerics.highdim import effective_flow, increment_covariance, moment_closure_flow
from theory import PAPER_GAMMA, Overlaps, Problem
from theory.highdim import gradient_moments

EPS = np.finfo(float).eps


def test_frame_second_moments_hold_the_in_frame_traces():
    """The in-frame second moments are symmetric positive semi-definite (to round-off), so is the
    increment covariance, and their traces are the in-frame parts of S_kk, S_vv (the rest is the
    non-negative (d - 4) trace term)."""
    state = (0.3, 0.2, 0.1, -0.2, 0.15)
    for m in (gradient_moments(Problem(d=d, eps=0.1, lam=0.5), state) for d in (100, 300)):
        S = m.frame_second
        assert np.allclose(S, S.T, rtol=0, atol=64 * EPS * np.max(np.abs(S)))
        assert np.all(np.linalg.eigvalsh(S) >= -1e-10 * np.max(np.abs(S)))
        cov = increment_covariance(m, state)
        assert np.all(np.linalg.eigvalsh(cov) >= -1e-10 * np.max(np.abs(cov)))
        assert np.trace(S[:4, :4]) <= m.s_kk and np.trace(S[4:, 4:]) <= m.s_vv


def test_closure_rhs_without_covariance_is_the_effective_drift():
    """At Sigma = 0 the closure's mean velocity is F + alpha D exactly (the curvature term vanishes)
    and dSigma/dtau = (alpha / B) C; for a covariance along theta only, the curvature term is
    (1/2) Sigma_thth d^2F/dtheta^2, and F is a cubic polynomial in theta, so the sigma-point
    evaluation equals the central second difference of F at any step (round-off: 1e-9 of |F|
    at the d = 100 scale of the theta-curvature)."""
    from numerics.highdim.fluctuations import moment_closure_rhs, population_velocity
    from theory.highdim import effective_drift

    d, lam, alpha, B = 100, 0.5, 1e-3, 2
    problem = Problem(d=d, eps=0.1, lam=lam)
    x = np.array([0.3, 0.2, 0.05, -0.1, 0.02])
    z = np.concatenate([x, np.zeros(15)])
    out = moment_closure_rhs(problem, z, alpha=alpha, batch_size=B)
    drift = effective_drift(problem, x, alpha=alpha, batch_size=B)
    assert np.allclose(out[:5], drift, rtol=0, atol=1e-12 * np.max(np.abs(drift)))
    m = gradient_moments(problem, tuple(x))
    C = increment_covariance(m, tuple(x)) * alpha / B
    assert np.allclose(out[5:], C[np.triu_indices(5)], rtol=0, atol=1e-12 * np.max(np.abs(C)))
    var = 1e-4
    z[5 + 9] = var  # Sigma_theta,theta (upper-triangle index of (2, 2))
    out = moment_closure_rhs(problem, z, alpha=alpha, batch_size=B)
    e = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    F = population_velocity(problem, np.stack([x, x + 0.05 * e, x - 0.05 * e]))
    expected = drift + 0.5 * var * (F[1] + F[2] - 2 * F[0]) / 0.05**2
    assert np.allclose(out[:5], expected, rtol=0, atol=1e-9 * np.max(np.abs(F)))


def test_bad_input_names_the_parameter():
    problem = Problem(d=100, eps=0.1, lam=0.5)
    for kwargs, name in ((dict(c=0.0), "c"), (dict(batch_size=0), "batch_size")):
        with pytest.raises(ValueError, match=name):
            moment_closure_flow(problem, (0.3, 0.2, 0.0, 0.0, 0.0), **(dict(c=0.1, batch_size=1, t_end=1.0) | kwargs))


@pytest.mark.slow
def test_closure_follows_mean_sgd_at_d_10_4():
    """d = 10^4, lambda = 2/s, c = 0.1, B = 1, 200 runs to flow time 0.5 (50,000 steps): mean kappa
    and nu at 4 times within Bonferroni z (family 1e-3) of the closure, and the drift without the
    fluctuations rejected (power). ~2 min of CPU."""
    d, c = 10_000, 0.1
    problem = Problem(d=d, eps=0.1, lam=2.0 / np.sqrt(d / 2.0))
    start = (0.2, 0.2, 0.0, 0.0, 0.0)
    n, R = int(0.5 * d / c), 200
    init = Overlaps(**{k: np.full(R, x) for k, x in zip(("kappa", "nu", "theta", "eta", "rho"), start)})
    run = online_sgd_reduced(problem, init, alpha=c / d, n_steps=n, batch_size=1,
                             rng=np.random.default_rng(1804), log_every=n // 4)
    closure = moment_closure_flow(problem, start, c=c, batch_size=1, t_end=0.5, t_eval=run.time).mean
    plain = effective_flow(problem, start, c=c, batch_size=1, t_end=0.5, t_eval=run.time).y
    z_crit = norm.isf(1e-3 / (2 * 8))
    z_plain = []
    for i, name in enumerate(("kappa", "nu")):
        x = getattr(run, name)[1:]
        mean, se = x.mean(axis=1), x.std(axis=1, ddof=1) / np.sqrt(R)
        assert np.all(np.abs(mean - closure[i, 1:]) <= z_crit * se)
        z_plain += list(np.abs(mean - plain[i, 1:]) / se)
    assert max(z_plain) >= z_crit + norm.ppf(0.99)


def test_escape_rate_is_the_saddle_eigenvalue():
    """Without noise the escape rate is the positive eigenvalue of [[-p, q], [q, 0]] with the closed
    forms of docs/math/dynamics.md#fixed-points-and-their-types (to the central difference's
    h^2 error, ~1e-10 relative), the direction its eigenvector, sigma = 1/sqrt(d)."""
    from numerics.highdim.escape import escape_prediction

    d, lam = 400, 0.1
    problem = Problem(d=d, eps=0.0, lam=lam)
    pred = escape_prediction(problem, t_max=200.0)
    s, g2 = np.sqrt(d / 2.0), PAPER_GAMMA**2
    a = lam * s / np.sqrt(1 + 2 * lam**2 * g2)
    e0 = 2 / np.sqrt(np.pi)
    p = 2 * g2 * a**2 * e0**2 / np.sqrt(1 + 4 * lam**2 * g2)
    q = 2 * g2 * a * e0
    mu = (-p + np.sqrt(p * p + 4 * q * q)) / 2
    assert abs(pred.rate - mu) <= 1e-8 * mu
    r = np.array([q, p + mu]) / np.hypot(q, p + mu)
    assert np.allclose(pred.direction, r, rtol=0, atol=1e-8)
    assert pred.sigma == pytest.approx(1 / np.sqrt(d), rel=1e-15)
    assert np.all(np.diff(pred.times) < 0)  # larger |xi| quantile, earlier alignment


@pytest.mark.slow
def test_sgd_noise_slows_the_escape_rate_and_widens_the_spread():
    """With SGD at c = 0.05 the correction alpha D lowers the escape rate and the noise adds to the
    initial spread (sigma > 1/sqrt(d)). ~1 min (the effective ODE to alignment at 1 - delta = 0.5)."""
    from numerics.highdim.escape import escape_prediction

    d, lam = 400, 0.1
    pred = escape_prediction(Problem(d=d, eps=0.0, lam=lam), delta=0.5, t_max=100.0)
    noisy = escape_prediction(Problem(d=d, eps=0.1, lam=lam), c=0.05, delta=0.5,
                              t_max=100.0)
    assert noisy.rate < pred.rate and noisy.sigma > pred.sigma
