"""The compiled PGD on vectors (numerics/kernels/pgd_vectors_step.py) against the NumPy reference route.

Both routes run paper Definition 1 on explicit vectors from the same start; their partials come
from two transcriptions of the same closed form and their inner products are summed in different
orders, so each drifts from exact arithmetic by about u = eps/2 per step (as the overlap and
vector routes, ``pgd_route_gap_bound``): after n steps they agree to within n eps per overlap
(docs/math/kernels.md#pgd-on-vectors). Measured: <= 90 eps after 10^4 steps at d = 20 and 400.
"""

import numpy as np
import pytest

from numerics import PaperSchedule, ScheduledProblem
from numerics.dynamics.initial import sample_initial_vectors
from numerics.dynamics.pgd import pgd_route_gap_bound
from numerics.dynamics.pgd_vectors import vector_pgd
from theory.parameters import OVERLAP_NAMES, Problem

EPS = np.finfo(float).eps


def _both(problem, vectors, **kw):
    return tuple(vector_pgd(problem, *vectors, engine=e, **kw) for e in ("numpy", "kernel"))


def _assert_round_off(ref, ker, steps, d, L=10):
    tol = pgd_route_gap_bound(max(steps, 1))
    for name in OVERLAP_NAMES:
        diff = np.max(np.abs(getattr(ref.log, name) - getattr(ker.log, name)))
        assert diff <= tol, (name, diff, tol)
    # the final vectors: unit vectors whose inner products agree to tol; coordinates to d tol at most
    for a, b in ((ref.k, ker.k), (ref.v, ker.v)):
        assert np.max(np.abs(a - b)) <= d * tol
    # the excess risk moves by <= (sum of |partials|) tol, the partials at most 5 (d + 2 L^2) in all
    # (tests/test_kernels_pgd.py)
    assert np.max(np.abs(ref.log.excess_risk - ker.log.excess_risk)) <= 5 * (d + 2 * L * L) * tol
    np.testing.assert_array_equal(ref.log.lam, ker.log.lam)
    np.testing.assert_array_equal(ref.log.steps, ker.log.steps)


@pytest.mark.parametrize("d", [4, 400])
def test_four_regimes_with_a_schedule(d):
    """Two runs in each regime of the claim definition1-overlap-vs-vector (rows 1-3 of the paper's
    experiments on and off M, and a schedule), 300 steps (the reference costs ~0.4 ms a step)."""
    rng = np.random.default_rng(d)
    regimes = [(0.1, 4e-3, True), (0.1, 4e-3, False), (0.9, 1e-3, False), (PaperSchedule(lam0=0.5), 2e-3, False)]
    parts = [sample_initial_vectors(d, 2, rng, on_manifold=on_m) for _, _, on_m in regimes]
    vectors = [np.concatenate([part[i] for part in parts]) for i in range(4)]
    problem = ScheduledProblem(d=d, lam=[lam for lam, _, _ in regimes for _ in range(2)])
    alpha = np.repeat([a for _, a, _ in regimes], 2)
    _assert_round_off(*_both(problem, vectors, alpha=alpha, n_steps=300, log_every=37), 300, d)


def test_on_m_start_stays_on_m_and_inputs_are_not_modified():
    """The paper's row 1 on M (the claim theorem5-distance-to-M): both routes stay on M to round-off;
    the caller's vectors are left as they were."""
    vectors = sample_initial_vectors(400, 3, np.random.default_rng(3), on_manifold=True)
    copies = [x.copy() for x in vectors]
    ref, ker = _both(Problem(d=400, lam=0.1), vectors, alpha=4e-3, n_steps=500, log_every=50)
    _assert_round_off(ref, ker, 500, 400)
    assert np.max(ker.log.distance_to_manifold) <= 8 * (EPS / 2) * 501
    for x, y in zip(vectors, copies):
        np.testing.assert_array_equal(x, y)


def test_zero_steps_and_unknown_engine():
    vectors = sample_initial_vectors(6, 2, np.random.default_rng(0))
    ref, ker = _both(Problem(d=6, lam=0.4), vectors, alpha=0.01, n_steps=0)
    # only the start's inner products, summed in another order: d roundings of unit-size terms
    np.testing.assert_allclose(ref.log.kappa, ker.log.kappa, rtol=0, atol=6 * EPS)
    np.testing.assert_array_equal(ref.k, ker.k)
    with pytest.raises(ValueError, match="engine"):
        vector_pgd(Problem(d=6, lam=0.4), *vectors, alpha=0.01, n_steps=1, engine="fortran")
