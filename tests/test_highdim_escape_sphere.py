"""The first-alignment law of PGD started uniformly on the sphere product (numerics.highdim.escape_sphere,
docs/math/highdim.md#escape-from-the-sphere). Against the paper's small-lambda experiment: claim
`highdim-escape-sphere`; the large-lambda and schedule experiments here (slow)."""

import dataclasses

import numpy as np
import pytest
from scipy.stats import halfnorm

from theory import PAPER_GAMMA, PAPER_L, Problem


def _problem(lam, d=400):
    return Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0, lam=lam)


@pytest.mark.parametrize("lam", [0.1, 0.9, 1.0])
def test_saddle_jacobian_is_two_symmetric_blocks_and_a_stable_rho(lam):
    """At x = 0 the Jacobian has no coupling between (kappa, nu), (theta, eta) and rho, each block is
    symmetric, the rho rate is negative, and each 2 x 2 block has exactly one positive eigenvalue
    (central differences of a smooth drift, step 1e-6: exact zeros stay zeros, the rest to ~1e-8)."""
    from numerics.highdim import saddle_jacobian

    J = saddle_jacobian(_problem(lam))
    blocks = np.zeros((5, 5), dtype=bool)
    blocks[:2, :2] = blocks[2:4, 2:4] = blocks[4, 4] = True
    assert np.all(J[~blocks] == 0.0)
    assert np.allclose(J, J.T, rtol=0, atol=1e-7 * np.abs(J).max())
    assert J[4, 4] < 0
    for b in (J[:2, :2], J[2:4, 2:4]):
        w = np.linalg.eigvalsh(b)
        assert w[0] < 0 < w[1]


def test_flow_has_the_two_sign_symmetries_the_law_uses():
    """F(S x) = S F(x) for S = diag(1, 1, -1, -1, -1) and diag(-1, -1, -1, -1, 1), to round-off."""
    from numerics.highdim.fluctuations import population_velocity

    x = np.random.default_rng(0).normal(scale=0.05, size=(4, 5))
    F = population_velocity(_problem(0.1), x)
    for S in (np.array([1, 1, -1, -1, -1.0]), np.array([-1, -1, -1, -1, 1.0])):
        assert np.allclose(population_velocity(_problem(0.1), x * S) * S, F, rtol=1e-12, atol=1e-15)


def test_on_manifold_law_is_the_escape_prediction():
    """Started on M (xi_off = 0, exit angle 0) the law's quartiles are those of
    numerics.highdim.escape_prediction (the flow, exact half-normal quantiles) in steps. Tolerance:
    4 standard errors of a sample quartile of n draws (tau = a - log|xi| / mu, |xi| half-normal:
    se = sqrt(q(1-q)/n) / (mu z f(z)), f the half-normal density at its quantile z), plus the flow's
    time grid (t_max / 20,000 flow time) and PGD's logging step (10), both in steps."""
    from numerics.highdim import escape_prediction, sphere_escape_law

    alpha, n, q, t_max = 4e-3, 20_000, np.array([0.25, 0.5, 0.75]), 60.0
    flow = escape_prediction(_problem(0.1), quantiles=tuple(1 - q), t_max=t_max)
    # from eps r PGD aligns after 11,300 steps (45.2 flow time): 12,000 steps and t_max = 60 suffice
    law = sphere_escape_law(_problem(0.1), alpha=alpha, n_steps=12_000, rng=np.random.default_rng(3),
                            n_draws=n, n_angles=3, log_every=10, on_manifold=True)
    assert np.all(law.exit_angles == 0.0) and law.aligned_fraction == 1.0
    z = halfnorm.ppf(1 - q)
    se = np.sqrt(q * (1 - q) / n) / (flow.rate * z * halfnorm.pdf(z)) / alpha
    tol = 4 * se + (t_max / 20_000) / alpha + 10
    assert np.all(np.abs(law.aligned_quantiles(q) - flow.times / alpha) <= tol)


@pytest.mark.parametrize("bad, name", [({"alpha": 0.0}, "alpha"), ({"n_steps": 0}, "n_steps"),
                                       ({"n_draws": 0}, "n_draws"), ({"delta": 1.0}, "delta"),
                                       ({"eps": 0.5}, "eps"), ({"n_angles": 2}, "n_angles"),
                                       ({"log_every": 0}, "log_every")])
def test_bad_input_raises(bad, name):
    from numerics.highdim import sphere_escape_law

    kwargs = {"alpha": 4e-3, "n_steps": 100, "rng": np.random.default_rng(0), **bad}
    with pytest.raises(ValueError, match=name):
        sphere_escape_law(_problem(0.1), **kwargs)


@pytest.mark.slow
def test_large_lambda_no_exit_aligns_and_no_run_does():
    """The paper's "sphere, large lambda" (lambda = 0.9 > lambda_c): from no exit angle does PGD align
    within the experiment's 120,000 steps, and none of its 30 runs does (deterministic: 0 of 30)."""
    from numerics import PAPER_EXPERIMENTS, run_population_experiments, summarize_alignment
    from numerics.highdim import sphere_escape_law

    config = PAPER_EXPERIMENTS[2]
    law = sphere_escape_law(config.problem, alpha=config.alpha, n_steps=config.n_steps,
                            rng=np.random.default_rng(0), n_draws=200, log_every=100)
    assert np.all(law.steps_after < 0) and law.aligned_fraction == 0.0
    result = run_population_experiments([config], log_every=100)[0]
    assert summarize_alignment(result, delta=0.05).n_aligned == 0


@pytest.mark.slow
def test_schedule_sets_the_first_aligned_step():
    """The paper's "sphere, schedule": the after-exit PGD's first aligned step (absolute) is the same
    from every aligned exit angle and does not depend on the step the exit happens (0 or 3,000), and
    every aligned run of the paper's 30 first aligns at that step (same logging, 10 steps)."""
    from numerics import PAPER_EXPERIMENTS, run_population_experiments, summarize_alignment
    from numerics.dynamics.pgd import overlap_pgd
    from numerics.highdim import sphere_escape_law

    config = PAPER_EXPERIMENTS[3]
    law = sphere_escape_law(config.problem, alpha=config.alpha, n_steps=config.n_steps,
                            rng=np.random.default_rng(0), n_draws=200, n_angles=5, log_every=10)
    step = np.unique(law.steps_after[law.steps_after >= 0])
    assert step.size == 1
    start = np.zeros((5, 1))
    start[:2, 0] = 1e-3 * law.directions[0]
    late = overlap_pgd(config.problem, tuple(start), alpha=config.alpha, n_steps=config.n_steps - 3_000,
                       log_every=10, start_step=3_000)
    ok = np.minimum(late.abs_kappa, late.abs_nu)[:, 0] >= 0.95
    assert late.steps[np.argmax(ok)] == step[0]
    first = summarize_alignment(run_population_experiments([config], log_every=10)[0]).first_aligned_step
    assert np.all(first[first >= 0] == step[0]) and np.sum(first >= 0) >= 1
