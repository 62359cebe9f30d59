"""Online SGD for other members: the reduced simulator against the full one, for softmax
(numerics.nonlinearity.sgd; the hooks of numerics.sgd.reduced and numerics.sgd.full)."""

import numpy as np
import pytest
from scipy.stats import ks_2samp

import numerics.sgd.reduced as sr
from numerics import vectors_from_overlaps
from numerics.nonlinearity.sgd import (MinibatchLossGrad, ReducedCoefficients, online_sgd_full_sigma,
                                       online_sgd_reduced_sigma)
from numerics.sgd.full import minibatch_loss_grad
from numerics.sgd.reduced import cholesky_coordinates
from reduced_one_step import reduced_and_full_step
from theory import OVERLAP_NAMES, Overlaps, Problem

EPS = np.finfo(float).eps
START = Overlaps(kappa=0.5, nu=0.4, theta=0.2, eta=-0.2, rho=0.3)


def _tile(overlaps, n):
    return Overlaps(**{k: np.full(n, float(x)) for k, x in overlaps.as_dict().items()})


def test_erf_member_gradients_are_the_toolkits(rng):
    """The generic maps with sigma = erf reproduce the erf simulators' own (roundoff: the same
    products summed in another order, <= 16 ulps of the largest coefficient)."""
    KV = cholesky_coordinates(START)
    x, y = rng.standard_normal((1, 4, 30)), rng.standard_normal((1, 3))
    a, b = sr._coefficients(KV, x, y, 0.7, 2 / 3, 3), ReducedCoefficients("erf")(KV, x, y, 0.7, 2 / 3, 3)
    assert np.array_equal(a[0], b[0])
    assert np.max(np.abs(a[1] - b[1])) <= 16 * EPS * np.max(np.abs(a[1]))
    X, Y = rng.standard_normal((2, 3, 10, 6)), rng.standard_normal((2, 3))
    k, v = rng.standard_normal((2, 6)), rng.standard_normal((2, 6))
    for u, w in zip(minibatch_loss_grad(X, Y, k, v, 0.7), MinibatchLossGrad("erf")(X, Y, k, v, 0.7)):
        assert np.max(np.abs(u - w)) <= 16 * EPS * np.max(np.abs(u)) * 10


def test_softmax_one_step_matches_the_full_step_on_the_same_samples(rng):
    """One reduced step equals one full step on the same samples (as for erf in test_sgd_reduced)."""
    got, want = reduced_and_full_step(START, ReducedCoefficients("softmax"), MinibatchLossGrad("softmax"), rng)
    for name in OVERLAP_NAMES:   # O(1) numbers, different summation orders: 64 eps as for erf
        assert abs(got[name] - want[name]) <= 64 * EPS, name


def _drop_orthogonal(draw):
    def wrong(*args):
        noise, a11, n21, a22 = draw(*args)
        return noise, 0 * a11, 0 * n21, 0 * a22
    return wrong


_KS_STEPS = (1, 3, 10, 30)


def _law_check(d, alpha, n_runs, level, rng, monkeypatch):
    problem = Problem(d=d, L=10, eps=0.1, lam=1.0)
    vecs = [np.tile(a, (n_runs, 1)) for a in vectors_from_overlaps(START, d)]
    kw = dict(alpha=alpha, n_steps=max(_KS_STEPS), batch_size=5, log_every=1)
    full = online_sgd_full_sigma(problem, *vecs, "softmax", rng=rng, **kw)
    reduced = online_sgd_reduced_sigma(problem, _tile(START, n_runs), "softmax", rng=rng, **kw)
    for step in _KS_STEPS:
        for name in OVERLAP_NAMES:
            p = ks_2samp(getattr(full, name)[step], getattr(reduced, name)[step]).pvalue
            assert p > level, (step, name, p)
    # Power: the same test at the same sample size rejects a simulator without X^perp.
    monkeypatch.setattr(sr, "_draw_noise", _drop_orthogonal(sr._draw_noise))
    wrong = online_sgd_reduced_sigma(problem, _tile(START, n_runs), "softmax", rng=rng, **kw)
    p_min = min(ks_2samp(getattr(full, name)[s], getattr(wrong, name)[s]).pvalue
                for s in _KS_STEPS for name in OVERLAP_NAMES)
    assert p_min < level


def test_softmax_reduced_simulator_has_the_law_of_the_full_simulator(rng, monkeypatch):
    """KS tests at 4 steps x 5 overlaps = 20 tests, family-wise false-failure rate 1e-3
    (Bonferroni: each at 5e-5), d = 20, 600 runs; power: the same family rejects the simulator
    that drops the orthogonal component."""
    _law_check(20, 0.05, 600, 1e-3 / 20, rng, monkeypatch)


@pytest.mark.slow
def test_softmax_reduced_simulator_law_slow(rng, monkeypatch):
    """As above with 1000 runs at d = 80 (20 KS tests at family-wise rate 1e-3), with power."""
    _law_check(80, 0.02, 1000, 1e-3 / 20, rng, monkeypatch)


def test_sigma_simulators_reject_a_test_set(rng):
    with pytest.raises(ValueError, match="test_size"):
        online_sgd_reduced_sigma(Problem(d=10, lam=1.0), _tile(START, 2), "softmax", alpha=0.01,
                                 n_steps=1, batch_size=1, rng=rng, test_size=10)


def test_training_summary_for_erf_is_the_papers_sgd_experiment():
    """sgd_training_sigma("erf") runs the same initialisations and streams as numerics.sgd_runs;
    the two gradient implementations differ by summation order only (1e-16 per step, 300 steps)."""
    import dataclasses

    from numerics import PAPER_SGD, sgd_runs
    from numerics.nonlinearity.training import sgd_training_sigma

    config = dataclasses.replace(PAPER_SGD, n_steps=300, n_runs=3, test_size=0, log_every=300)
    ours = sgd_training_sigma("erf", config=config, seed=5)
    theirs = sgd_runs(config, np.random.SeedSequence(5).spawn(3))
    assert np.max(np.abs(ours.abs_kappa - np.abs(theirs.kappa[-1]))) <= 1e-12
    assert np.max(np.abs(ours.abs_nu - np.abs(theirs.nu[-1]))) <= 1e-12
    assert ours.excess.shape == (3,) and np.all(ours.excess > 0)


def test_logging_the_overlaps_does_not_change_the_runs():
    """The figure nonlinearity_training logs the overlaps every log_every steps: the runs are those of
    the unlogged call, bit for bit (the simulator's random numbers do not depend on its block length)."""
    import dataclasses

    from numerics import PAPER_SGD
    from numerics.nonlinearity.training import sgd_training_sigma

    config = dataclasses.replace(PAPER_SGD, n_steps=200, n_runs=3, test_size=0)
    once = sgd_training_sigma("softmax", config=config, seed=7)
    logged = sgd_training_sigma("softmax", config=config, seed=7, log_every=30)
    assert once.steps.tolist() == [0, 200]
    assert logged.steps.tolist() == [*range(0, 200, 30), 200]
    for name in ("kappa", "nu", "theta", "eta", "rho"):
        assert logged.overlaps[name].shape == (len(logged.steps), 3)
        assert np.array_equal(logged.overlaps[name][[0, -1]], once.overlaps[name]), name
    assert np.array_equal(logged.excess, once.excess) and np.array_equal(logged.aligned, once.aligned)


def test_the_training_claim_refuses_figures_of_different_experiments():
    """nonlinearities-sgd-training compares runs from the same initialisations only: figures whose
    settings differ (beyond the member and the test set) are an error, before any data is read."""
    from figures.registry import find_recipe
    from figures.verify import discover_claims

    claim = next(c for c in discover_claims() if c.claim_id == "nonlinearities-sgd-training")

    class Figure:
        def __init__(self, name, params):
            self.name, self.params = name, params

        @property
        def data(self):
            raise AssertionError("read before the settings were compared")

    erf, soft = (find_recipe(name).params(True) for name in claim.figures)
    with pytest.raises(ValueError, match="seed"):
        claim.check(True, None, Figure("erf", erf), Figure("softmax", {**soft, "seed": soft["seed"] + 1}))
