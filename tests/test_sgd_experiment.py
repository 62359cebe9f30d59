"""The paper's online-SGD experiment: configuration, runner and logged quantities."""

import dataclasses
import math

import numpy as np
import pytest

from numerics.dynamics.schedules import PaperSchedule
from numerics.sgd.experiment import PAPER_SGD, SGDExperiment, run_sgd_experiment
from theory import OVERLAP_NAMES, Overlaps, oracle_risk

SMALL = dataclasses.replace(PAPER_SGD, n_steps=1000, n_runs=4, test_size=100, log_every=250)


def test_paper_configuration_is_the_papers_online_sgd_experiment():
    c = PAPER_SGD
    assert (c.d, c.L, c.eps, c.lam0, c.alpha, c.n_steps, c.batch_size, c.n_runs, c.test_size) == \
        (80, 10, 0.1, 2.0, 1e-3, 200_000, 5, 30, 1000)
    assert c.gamma == math.sqrt(0.5) and c.init == "sphere" and c.log_every == 500
    assert c.schedule == PaperSchedule(lam0=2.0, rate=1e-4)
    assert c.problem.lam == c.schedule and c.problem.d == 80


def test_runner_logs_every_quantity_of_the_paper_figure():
    result = run_sgd_experiment(SMALL)
    tr = result.trajectory
    assert list(tr.steps) == [0, 250, 500, 750, 1000] and tr.n_runs == 4
    assert np.array_equal(tr.lam, 2.0 / (1.0 + 1e-4 * tr.steps))
    for name in OVERLAP_NAMES + ("population_risk", "test_risk"):
        assert getattr(tr, name).shape == (5, 4)
    assert np.array_equal(tr.excess_risk, tr.population_risk - 0.1**2)
    assert tr.test_risk_kind == "fresh"
    for quantity in ("excess_risk", "test_excess_risk", "abs_kappa", "abs_nu", "distance_to_manifold"):
        mean, lo, hi = result.band(quantity)
        assert mean.shape == (5,) and np.all(lo <= mean) and np.all(mean <= hi)
    assert np.all(result.band("abs_kappa")[0] >= 0)


@pytest.mark.parametrize("simulator", ["reduced", "full"])
def test_initialisations(simulator):
    on_m = run_sgd_experiment(dataclasses.replace(SMALL, init="manifold", simulator=simulator,
                                                  test_size=0, n_steps=10, d=20))
    # Uniform on M: theta = eta = rho = 0 at step 0 (to roundoff for explicit vectors: O(eps)).
    assert np.all(on_m.trajectory.distance_to_manifold[0] <= 1e-14)
    start = Overlaps(kappa=0.3, nu=0.2, theta=0.1, eta=-0.1, rho=0.15)
    fixed = run_sgd_experiment(dataclasses.replace(SMALL, init=start, simulator=simulator,
                                                   test_size=0, n_steps=10, d=20))
    for name in OVERLAP_NAMES:
        np.testing.assert_allclose(getattr(fixed.trajectory, name)[0], getattr(start, name),
                                   rtol=0, atol=1e-14)


def test_configuration_is_validated():
    with pytest.raises(ValueError, match="init"):
        SGDExperiment(init="uniform")
    with pytest.raises(ValueError, match="simulator"):
        SGDExperiment(simulator="fast")
    with pytest.raises(ValueError, match="gamma"):
        SGDExperiment(gamma=-1.0)
    with pytest.raises(ValueError, match="rate"):
        SGDExperiment(schedule_rate=-1.0)
    with pytest.raises(ValueError, match="n_runs"):
        SGDExperiment(n_runs=0)
    with pytest.raises(ValueError, match="scalar"):
        SGDExperiment(init=Overlaps(kappa=np.zeros(2), nu=np.zeros(2)))
    with pytest.raises(ValueError, match="not logged"):
        run_sgd_experiment(dataclasses.replace(SMALL, test_size=0, n_steps=10)).band("test_excess_risk")


@pytest.mark.slow
def test_paper_sgd_experiment_learns_the_oracle():
    # The paper's SGD figure: every run aligns (|kappa|, |nu| -> 1) and the excess risk drops to
    # the oracle's at the final lambda (the oracle minimises R at this small lambda; SGD's
    # stationary noise keeps it slightly above). Levels: 0.99 and a 5% margin (observed in
    # benchmarks/RESULTS.md: 0.998 and 1%).
    result = run_sgd_experiment(PAPER_SGD, executor=2)
    tr = result.trajectory
    assert np.all(np.abs(tr.kappa[-1]) > 0.99) and np.all(np.abs(tr.nu[-1]) > 0.99)
    final = PAPER_SGD.problem.with_lam(float(tr.lam[-1]))
    oracle_excess = float(oracle_risk(final)) - PAPER_SGD.eps**2
    assert oracle_excess <= np.mean(tr.excess_risk[-1]) <= 1.05 * oracle_excess


@pytest.mark.parametrize("engine, test_size", [("kernel", 0), ("kernel", 50), ("numpy", 50)])
def test_child_seeds_are_the_runs_seed_sequences_built_or_not(engine, test_size):
    """sgd_runs hands the simulators ChildSeeds (the kernel routes read the children's fields without building
    them): the same streams, so the same runs bit for bit, as the list of child SeedSequences they stand for."""
    from numerics.sgd.reduced import online_sgd_reduced
    from numerics.sgd.experiment import ChildSeeds, child_seed

    parents = np.random.SeedSequence(7).spawn(3)
    lazy = ChildSeeds(parents, 1)
    assert len(lazy) == 3 and [s.spawn_key for s in lazy] == [child_seed(p, 1).spawn_key for p in parents]
    assert [s.spawn_key for s in lazy[1:]] == [p.spawn_key + (1,) for p in parents[1:]]
    start = Overlaps(**{k: np.full(3, x) for k, x in zip(OVERLAP_NAMES, (0.3, 0.2, 0.1, -0.1, 0.15))})
    kw = dict(alpha=1e-2, n_steps=40, batch_size=2, log_every=20, test_size=test_size, engine=engine)
    problem = SMALL.problem
    a = online_sgd_reduced(problem, start, rng=lazy, **kw)
    b = online_sgd_reduced(problem, start, rng=[child_seed(p, 1) for p in parents], **kw)
    c = online_sgd_reduced(problem, start, rng=[child_seed(p, 2) for p in parents], **kw)
    for name in OVERLAP_NAMES + (("test_risk",) if test_size else ()):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert not np.array_equal(a.kappa, c.kappa)
