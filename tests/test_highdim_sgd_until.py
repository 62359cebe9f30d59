"""Runs of the reduced SGD simulator that end at a condition (``online_sgd_reduced(until=...)``), as the
escape-time runs of the figure highdim_sgd, panel (c), do at their first alignment: the logged values up to
the end of each run are those of the run without ``until``, NaN afterwards."""

import numpy as np
import pytest

from numerics import online_sgd_reduced
from numerics.dynamics.initial import sample_initial_overlaps
from theory import OVERLAP_NAMES, Problem

EPS = np.finfo(float).eps


def _aligned(delta):
    return lambda o: np.minimum(np.abs(o["kappa"]), np.abs(o["nu"])) >= 1.0 - delta


@pytest.mark.parametrize("engine", ["kernel", "numpy"])
def test_a_run_ended_by_until_has_the_values_of_the_whole_run_up_to_its_end(engine):
    d, n_runs, delta = 40, 12, 0.67  # at d = 40 the runs leave the saddle slowly: a third of them reach 0.33
    problem = Problem(d=d, L=10, eps=0.1, lam=1.0 / np.sqrt(d / 2.0))
    start = sample_initial_overlaps(d, n_runs, np.random.default_rng(4), on_manifold=True)
    gens = lambda: [np.random.default_rng(s) for s in np.random.SeedSequence(11).spawn(n_runs)]
    kw = dict(alpha=0.5 / d, n_steps=1200, batch_size=1, log_every=7, engine=engine)
    whole = online_sgd_reduced(problem, start, rng=gens(), **kw)
    ended = online_sgd_reduced(problem, start, rng=gens(), until=_aligned(delta), **kw)
    done = _aligned(delta)({k: getattr(whole, k) for k in ("kappa", "nu")})
    # the last logged row of each run: its first aligned one, or the end
    last = np.where(done.any(axis=0), np.argmax(done, axis=0), len(whole.steps) - 1)
    assert 0 < np.sum(done.any(axis=0)) < n_runs  # some runs end early, some run to the end
    rows = np.arange(len(whole.steps))[:, None]
    for name in OVERLAP_NAMES + ("population_risk",):
        a, b = getattr(whole, name), getattr(ended, name)
        assert np.all(np.isnan(b[rows > last])), name
        kept = rows <= last
        if engine == "kernel" and name != "population_risk":   # run by run: bit-identical
            assert np.array_equal(a[kept], b[kept]), name
        elif name == "population_risk" and engine == "kernel":
            # the closed form of the same overlaps, elementwise; numpy's vectorised erf / exp may take another
            # code path next to NaN entries: a few ulps of each transcendental
            assert np.max(np.abs(a[kept] - b[kept]) / np.abs(a[kept])) <= 64 * EPS, name
        else:                    # vectorised over the runs left: the summation order may differ (as alone)
            assert np.max(np.abs(a[kept] - b[kept])) <= 5e4 * EPS * np.max(np.abs(a)), name


def test_until_is_rejected_with_a_test_set_or_when_not_callable():
    problem = Problem(d=10, L=10, eps=0.1, lam=1.0)
    start = sample_initial_overlaps(10, 2, np.random.default_rng(0))
    kw = dict(alpha=0.01, n_steps=5, batch_size=1, rng=np.random.default_rng(1))
    with pytest.raises(ValueError, match="until="):
        online_sgd_reduced(problem, start, test_size=10, until=_aligned(0.1), **kw)
    with pytest.raises(ValueError, match="until="):
        online_sgd_reduced(problem, start, until=True, **kw)


def test_runs_without_the_population_risk_have_the_same_overlaps():
    """population_risk=False (the exit runs of the claim highdim-sgd-escape): the same overlaps bit for bit, no
    logged risk, and excess_risk refused; such runs still join by SGDTrajectory.concat_runs."""
    d, n_runs = 40, 6
    problem = Problem(d=d, L=10, eps=0.1, lam=1.0 / np.sqrt(d / 2.0))
    start = sample_initial_overlaps(d, n_runs, np.random.default_rng(4), on_manifold=True)
    kw = dict(alpha=0.5 / d, n_steps=300, batch_size=1, log_every=7, until=_aligned(0.9))
    whole = online_sgd_reduced(problem, start, rng=np.random.default_rng(5), **kw)
    bare = online_sgd_reduced(problem, start, rng=np.random.default_rng(5), population_risk=False, **kw)
    for name in OVERLAP_NAMES:
        np.testing.assert_array_equal(getattr(bare, name), getattr(whole, name))
    assert whole.population_risk is not None and bare.population_risk is None
    with pytest.raises(ValueError, match="population_risk"):
        bare.excess_risk
    joined = type(bare).concat_runs([bare, bare])
    assert joined.population_risk is None and joined.kappa.shape == (len(bare.steps), 2 * n_runs)
    with pytest.raises(ValueError, match="parts="):
        type(bare).concat_runs([bare, whole])
