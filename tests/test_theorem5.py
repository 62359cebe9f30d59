"""Paper Theorem 5: PGD initialised on M converges to the oracle up to the global sign (docs/math/dynamics.md#convergence-on-m).

The sign rule tested: starts with kappa_0, nu_0 >= 0 (not both 0) go to (1, 1), kappa_0, nu_0 <= 0
to (-1, -1); in a mixed quadrant the side of the separatrix (the stable manifold of the saddle
(0, 0), numerics.dynamics.phase_portrait.separatrix) decides, so neither sign alone does. The discrete
map x -> x + alpha F(x) has the same fixed points and eigenvectors as the flow, so its stable
manifold is tangent to the flow's at (0, 0) and differs by O(alpha) away from it; the starts here
lie >= 5e-4 from the flow's separatrix, and the rule holds for all of them (measured).
"""

import dataclasses

import numpy as np
import pytest

from numerics.dynamics.experiments import PAPER_EXPERIMENTS, initial_overlaps
from numerics.dynamics.initial import sample_initial_vectors
from numerics.dynamics.phase_portrait import predicted_limit_sign, separatrix
from numerics.dynamics.pgd import overlap_pgd
from numerics.dynamics.pgd_vectors import vector_pgd
from theory.parameters import Overlaps, Problem
from theory.risk import oracle_risk, population_risk_grad

EPS = np.finfo(float).eps
GRID = np.array([-0.9, -0.6, -0.3, -0.1, 0.0, 0.1, 0.3, 0.6, 0.9])

# (lam, d, alpha, steps): alpha times the largest curvature on M (<= ~3.3 at lambda = 0.1,
# d = 400) stays well below 2; alpha * steps is long enough for the slow direction at (1, 1)
# (rate 2 |dR/dkappa(1, 1)|, 0.021 at lambda = 0.1, d = 400) to bring 1 - |kappa| below DELTA.
SETTINGS = [(0.1, 400, 0.1, 7000), (0.05, 10, 0.5, 6000), (0.5, 10, 0.2, 6000)]
DELTA = 1e-6


def _starts(d):
    """30 random starts uniform on M (the paper's init) and the grid without the fixed point (0, 0)."""
    o = initial_overlaps(dataclasses.replace(PAPER_EXPERIMENTS[0], d=d))
    k, n = (x.ravel() for x in np.meshgrid(GRID, GRID))
    keep = ~((k == 0) & (n == 0))
    return np.r_[o.kappa, k[keep]], np.r_[o.nu, n[keep]]


@pytest.mark.parametrize("lam, d, alpha, steps", SETTINGS)
def test_pgd_on_m_converges_to_the_oracle_with_the_predicted_sign(lam, d, alpha, steps):
    kappa0, nu0 = _starts(d)
    zero = np.zeros_like(kappa0)
    log = overlap_pgd(Problem(d=d, lam=lam), (kappa0, nu0, zero, zero, zero), alpha=alpha, n_steps=steps,
                      log_every=steps // 10)
    kappa, nu = log.kappa[-1], log.nu[-1]
    assert np.min(np.minimum(np.abs(kappa), np.abs(nu))) >= 1 - DELTA
    sign = np.sign(kappa)
    np.testing.assert_array_equal(np.sign(nu), sign)
    predicted = predicted_limit_sign(kappa0, nu0, separatrix(Problem(d=d, lam=lam)))
    np.testing.assert_array_equal(sign, predicted)
    # the rule is not "sign of kappa_0": in the mixed quadrants both limits occur
    mixed = kappa0 * nu0 < 0
    assert np.any(sign[mixed] == np.sign(kappa0[mixed])) and np.any(sign[mixed] != np.sign(kappa0[mixed]))
    # the limit risk is the oracle's: 0 <= R - R* <= |dR| * (distance), distance <= 2 DELTA
    problem = Problem(d=d, lam=lam)
    oracle = float(oracle_risk(problem))
    grad = population_risk_grad(problem, Overlaps.oracle())
    bound = 2 * DELTA * (abs(grad["kappa"]) + abs(grad["nu"])) + 8 * EPS * oracle
    assert np.all(log.excess_risk[-1] - oracle >= -8 * EPS * oracle)
    assert np.all(log.excess_risk[-1] - oracle <= bound)
    # descent: the risk never increases along a run (up to roundoff of the risk)
    assert np.all(np.diff(log.excess_risk, axis=0) <= 8 * EPS * oracle)


def test_vector_pgd_stays_on_m_up_to_roundoff(rng):
    """Exactly invariant in exact arithmetic (docs/math/dynamics.md#invariant-manifold); in float64 each vector step injects
    off-M components of at most ~8 u (about 6 roundings per coordinate of k - alpha P g, with
    alpha |g| <= 1/3, then the normalisation), and near the oracle the transverse dynamics
    contracts (Hessian eigenvalues 0.21 and 424 in the off-M block at lambda = 0.1, d = 400,
    numerics.dynamics.hessian_fd.local_oracle_hessian_fd), so the
    distance to M stays below 8 u (t + 1) while alpha * 424 < 2. Paper's row 1 (d = 400,
    lambda = 0.1, alpha = 4e-3), 8 runs, 3000 steps."""
    u = EPS / 2
    vecs = sample_initial_vectors(400, 8, rng, on_manifold=True)
    log = vector_pgd(Problem(d=400, lam=0.1), *vecs, alpha=4e-3, n_steps=3000, log_every=100).log
    assert np.all(log.distance_to_manifold <= 8 * u * (log.steps[:, None] + 1))


@pytest.mark.slow
def test_vector_pgd_leaves_m_when_alpha_exceeds_the_stability_limit(rng):
    """Negative control: alpha = 5e-3 > 2/424 makes the off-M Hessian direction at the oracle
    unstable for PGD; roundoff then grows geometrically and the bound above fails."""
    u = EPS / 2
    vecs = sample_initial_vectors(400, 4, rng, on_manifold=True)
    log = vector_pgd(Problem(d=400, lam=0.1), *vecs, alpha=5e-3, n_steps=8000, log_every=100).log
    assert np.any(log.distance_to_manifold > 8 * u * (log.steps[:, None] + 1))
