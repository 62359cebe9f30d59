"""The compiled full-SGD loop (numerics/kernels/sgd_full_step.py) against the NumPy reference route.

Same random numbers (the kernel draws each run's B L d token coordinates and B target noises from the run's
training generator in the order of ``numerics.sgd.full.sample_batch``: tested by the generators' states),
same formulas in the same order; the routes differ where erf and exp round differently and in the summation
order of the sums over d coordinates and B L tokens: at most ~(B L + d) ulps of unit-size quantities per
step, added up at most linearly over n steps where the dynamics do not expand (docs/math/kernels.md#full-sgd):
overlaps within n (B L + d) eps, the risks, whose partials are at most d + 2 L^2 in size, within
5 (d + 2 L^2) times that.
"""

import numpy as np
import pytest

from numerics.dynamics.initial import sample_initial_vectors
from numerics.dynamics.schedules import PaperSchedule, ScheduledProblem
from numerics.sgd.full import online_sgd_full, sample_batch
from theory import OVERLAP_NAMES, Problem

EPS = np.finfo(float).eps


def _compare(problem, runs, steps, B, alpha, test_size=0, log_every=1):
    d, L = int(problem.d), int(problem.L)
    vecs = sample_initial_vectors(d, runs, np.random.default_rng(3))
    out = [online_sgd_full(problem, *vecs, alpha=alpha, n_steps=steps, batch_size=B, rng=np.random.default_rng(17),
                           log_every=log_every, test_size=test_size, engine=e) for e in ("numpy", "kernel")]
    tol = steps * (B * L + d) * EPS
    for name in OVERLAP_NAMES + ("population_risk", "test_risk"):
        ref, ker = getattr(out[0], name), getattr(out[1], name)
        if ref is None:
            assert ker is None
            continue
        bound = tol if name in OVERLAP_NAMES else tol * 5 * (d + 2 * L * L)
        diff = np.max(np.abs(ref - ker))
        assert diff <= bound, (name, diff, bound)
    np.testing.assert_array_equal(out[0].steps, out[1].steps)
    np.testing.assert_array_equal(out[0].lam, out[1].lam)
    return out


def test_paper_dimension_with_schedule_and_fixed_test_set():
    """d = 80, L = 10, B = 5 (the paper's), lambda_t = 2/(1 + 0.2 t), 8 runs, 300 steps, a test set of 50."""
    problem = ScheduledProblem(d=80, L=10, eps=0.1, lam=PaperSchedule(lam0=2.0, rate=0.2))
    _compare(problem, 8, 300, 5, 0.01, test_size=50, log_every=37)


@pytest.mark.parametrize("d, L, B", [(2, 2, 1), (6, 4, 3), (33, 3, 7)])
def test_small_and_odd_shapes(d, L, B):
    _compare(Problem(d=d, L=L, eps=0.1, lam=1.0), 5, 60, B, 0.02, log_every=7)


def test_kernel_draws_the_reference_numbers():
    """After n steps the kernel has advanced the run's generator exactly as n calls of ``sample_batch``:
    the same count of the same draws (a different count or kind would leave another state)."""
    from numerics.kernels.erf_poly import erf_table
    from numerics.kernels.sfc64 import set_sfc64_state, sfc64_state
    from numerics.kernels.sgd_full_step import sgd_full_kernel

    d, L, B, n = 7, 3, 2, 5
    k, v, ks, vs = sample_initial_vectors(d, 1, np.random.default_rng(0))
    ref, ker = (np.random.Generator(np.random.SFC64(9)) for _ in range(2))
    for _ in range(n):
        sample_batch([ref], ks, vs, B, L, 0.7, 0.1)
    snaps, state = np.empty((1, 2, d)), sfc64_state(ker)
    sgd_full_kernel(k[0].copy(), v[0].copy(), vs[0], np.sqrt(d / 2.0) * ks[0], state, 0.7, 0.1, np.ones(n), 0.01, B, L,
                    np.full(n + 1, -1), snaps, erf_table())
    set_sfc64_state(ker, state)
    assert repr(ker.bit_generator.state) == repr(ref.bit_generator.state)


def test_engine_is_checked_and_loss_grad_keeps_the_reference_route(rng):
    from numerics.sgd.full import minibatch_loss_grad

    problem = Problem(d=6, L=3, eps=0.1, lam=1.0)
    vecs = sample_initial_vectors(6, 2, rng)
    kw = dict(alpha=0.01, n_steps=4, batch_size=2)
    with pytest.raises(ValueError, match="engine='c'"):
        online_sgd_full(problem, *vecs, rng=rng, engine="c", **kw)
    a = online_sgd_full(problem, *vecs, rng=np.random.default_rng(2), engine="numpy", **kw)
    b = online_sgd_full(problem, *vecs, rng=np.random.default_rng(2), loss_grad=minibatch_loss_grad, **kw)
    for name in OVERLAP_NAMES:
        assert np.array_equal(getattr(a, name), getattr(b, name))
