"""Full-dimensional online SGD (numerics/sgd_full.py): gradients, loss convention, test risk."""

import numpy as np
import pytest
from scipy.special import erf
from scipy.stats import norm

from numerics.montecarlo.geometry import vectors_from_overlaps
from numerics.dynamics.initial import sample_initial_vectors
from numerics.sgd.full import minibatch_loss_grad, online_sgd_full, sample_batch
from theory import OVERLAP_NAMES, Overlaps, Problem
from theory.risk import risk_grad_from_arrays

EPS = np.finfo(float).eps
POINT = Overlaps(kappa=0.4, nu=0.3, theta=0.2, eta=-0.1, rho=0.25)


def _loss(X, Y, k, v, lam):
    T = np.sum(erf(lam * np.einsum("rbld,rd->rbl", X, k)) * np.einsum("rbld,rd->rbl", X, v), -1)
    return np.mean((Y - T) ** 2, axis=1)


def test_minibatch_gradient_matches_complex_step_derivatives(rng):
    # Complex step: Im l(k + i h u) / h = <grad l, u> + O(h^2 |l'''|); h = 1e-20 makes that
    # term vanish in float64, leaving roundoff of a few eps times the size of the sum.
    d, L, B, lam, h = 9, 5, 4, 0.7, 1e-20
    k, v, ks, vs = (x[None] for x in vectors_from_overlaps(POINT, d, rng))
    X, Y = sample_batch([rng], ks, vs, B, L, np.sqrt(0.5), 0.1)
    loss, g_k, g_v = minibatch_loss_grad(X, Y, k, v, lam)
    assert loss[0] == pytest.approx(_loss(X, Y, k, v, lam)[0], rel=16 * EPS)
    for _ in range(3):
        u = rng.standard_normal((1, d))
        dk = _loss(X.astype(complex), Y, k + 1j * h * u, v, lam).imag / h
        dv = _loss(X.astype(complex), Y, k, v + 1j * h * u, lam).imag / h
        scale = np.sum(np.abs(g_k * u)) + np.sum(np.abs(g_v * u))
        assert abs(dk[0] - np.sum(g_k * u)) <= 64 * EPS * scale
        assert abs(dv[0] - np.sum(g_v * u)) <= 64 * EPS * scale


def test_mean_stochastic_gradient_is_the_population_gradient(rng):
    # Loss convention (mean squared error, no 1/2): on the tangent space, E[g_k] = R_kappa k*
    # + R_eta v* + R_rho v and E[g_v] = R_nu v* + R_theta k* + R_rho k with the closed-form partials
    # (docs/math/dynamics.md#overlap-ode). (Off the sphere E[loss] also depends on |k|, |v|, which only adds multiples of k
    # to g_k and of v to g_v: the projection of the SGD step removes them.) Per-sample gradients
    # (B = 1) of n samples, projected on k*, v*, the other vector (each made orthogonal to k for
    # g_k, to v for g_v) and a direction orthogonal to all four; 8 z-tests, family-wise
    # false-failure rate 1e-3 (Bonferroni).
    d, L, gamma, eps, lam, n = 10, 6, np.sqrt(0.5), 0.1, 0.6, 40000
    k, v, ks, vs = vectors_from_overlaps(POINT, d, rng)
    X, Y = sample_batch([rng], ks[None], vs[None], n, L, gamma, eps)
    ones = np.ones((n, 1))
    _, g_k, g_v = minibatch_loss_grad(X.reshape(n, 1, L, d), Y.reshape(n, 1), ones * k, ones * v, lam)
    r_kappa, r_nu, r_theta, r_eta, r_rho = risk_grad_from_arrays(d, L, gamma, eps, lam, *POINT.as_tuple())
    perp = np.linalg.qr(np.stack([ks, vs, k, v, rng.standard_normal(d)], axis=1))[0][:, 4]
    expected_k = r_kappa * ks + r_eta * vs + r_rho * v
    expected_v = r_nu * vs + r_theta * ks + r_rho * k
    z_crit = norm.isf(1e-3 / 16)
    for g, expected, own, partner in ((g_k, expected_k, k, v), (g_v, expected_v, v, k)):
        for direction in (ks, vs, partner, perp):
            direction = direction - (direction @ own) * own
            proj = g @ direction
            z = (proj.mean() - expected @ direction) / (proj.std(ddof=1) / np.sqrt(n))
            assert abs(z) < z_crit


def test_fixed_test_set_risk_is_unbiased_for_the_population_risk(rng):
    # The test set is independent of the training trajectory, so at every logged step
    # E[test risk | k_n, v_n] = R(k_n, v_n). Runs are independent: a t-test on the per-run mean
    # difference over the logged steps; two-sided false-failure rate 1e-3.
    problem = Problem(d=20, L=10, eps=0.1, lam=1.5)
    vecs = sample_initial_vectors(20, 40, rng)
    out = online_sgd_full(problem, *vecs, alpha=0.005, n_steps=60, batch_size=5, rng=rng,
                          log_every=20, test_size=300)
    assert out.test_risk_kind == "fixed"
    diff = (out.test_risk - out.population_risk).mean(axis=0)
    z = diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))
    assert abs(z) < norm.isf(1e-3 / 2)


def test_logged_overlaps_are_those_of_the_vectors_and_training_ignores_the_test_set(rng):
    problem = Problem(d=15, L=10, eps=0.1, lam=1.0)
    vecs = sample_initial_vectors(15, 3, rng)
    kw = dict(alpha=0.01, n_steps=25, batch_size=5, log_every=10)
    a = online_sgd_full(problem, *vecs, rng=np.random.default_rng(4), **kw)
    b = online_sgd_full(problem, *vecs, rng=np.random.default_rng(4), test_size=30, **kw)
    assert list(a.steps) == [0, 10, 20, 25] and a.test_risk is None
    for name in OVERLAP_NAMES:
        assert np.array_equal(getattr(a, name), getattr(b, name))
    k, v, ks, vs = vecs
    assert np.array_equal(a.kappa[0], np.sum(k * ks, 1)) and np.array_equal(a.rho[0], np.sum(k * v, 1))


@pytest.mark.parametrize("per_run", ["seed sequences", "generators"])
def test_runs_seeded_one_by_one_draw_and_advance_their_seeds_alike_on_both_stream_routes(rng, per_run):
    """Without a test set the compiled route takes each run's training state from its seed (``stream_states``),
    with one from a Generator (``child_streams``): the same trajectories bit for bit, and the seeds given
    per run are left advanced alike (two children spawned each)."""
    problem = Problem(d=12, L=4, eps=0.1, lam=1.0)
    vecs = sample_initial_vectors(12, 3, rng)
    kw = dict(alpha=0.02, n_steps=12, batch_size=3, log_every=4)
    make = (lambda: np.random.SeedSequence(8).spawn(3)) if per_run == "seed sequences" else (
        lambda: [np.random.default_rng(s) for s in np.random.SeedSequence(8).spawn(3)])
    seeds_a, seeds_b = make(), make()
    a = online_sgd_full(problem, *vecs, rng=seeds_a, **kw)
    b = online_sgd_full(problem, *vecs, rng=seeds_b, test_size=5, **kw)
    for name in OVERLAP_NAMES:
        assert np.array_equal(getattr(a, name), getattr(b, name))
    spawned = lambda seeds: [getattr(s, "bit_generator", s) for s in seeds]
    count = lambda seeds: [(x.seed_seq if hasattr(x, "seed_seq") else x).n_children_spawned for x in spawned(seeds)]
    assert count(seeds_a) == count(seeds_b) == [2, 2, 2]


def test_full_simulator_rejects_bad_input(rng):
    problem = Problem(d=6, lam=1.0)
    k, v, ks, vs = sample_initial_vectors(6, 2, rng)
    kw = dict(alpha=0.01, n_steps=3, batch_size=2, rng=rng)
    with pytest.raises(ValueError, match="k has shape"):
        online_sgd_full(problem, k[:, :5], v, ks, vs, **kw)
    with pytest.raises(ValueError, match="unit vectors"):
        online_sgd_full(problem, 2 * k, v, ks, vs, **kw)
    with pytest.raises(ValueError, match="orthogonal"):
        online_sgd_full(problem, k, v, ks, ks, **kw)
    with pytest.raises(ValueError, match="log_every"):
        online_sgd_full(problem, k, v, ks, vs, log_every=0, **kw)
    with pytest.raises(ValueError, match="test_size"):
        online_sgd_full(problem, k, v, ks, vs, test_size=-1, **kw)


@pytest.mark.parametrize("engine", ["kernel", "numpy"])
def test_without_population_risk_the_same_overlaps(engine):
    """population_risk=False (the full runs of the claim sgd-reduced-equals-full-in-law): the same overlaps bit
    for bit, no population risk; with it, the closed form of each logged step."""
    d, n_runs = 7, 3
    problem = Problem(d=d, L=4, eps=0.1, lam=1.0)
    vectors = [np.tile(x, (n_runs, 1)) for x in vectors_from_overlaps(POINT, d, np.random.default_rng(1))]
    kw = dict(alpha=0.05, n_steps=6, batch_size=3, log_every=2, engine=engine)
    with_risk = online_sgd_full(problem, *vectors, rng=np.random.default_rng(2), **kw)
    bare = online_sgd_full(problem, *vectors, rng=np.random.default_rng(2), population_risk=False, **kw)
    assert bare.population_risk is None and with_risk.population_risk.shape == with_risk.kappa.shape
    for name in OVERLAP_NAMES:
        assert np.array_equal(getattr(bare, name), getattr(with_risk, name))
