"""What is robust beyond Theorem 5 (docs/math/dynamics.md#the-papers-experiments): measured facts, tested where they hold with margin."""

import numpy as np
import pytest

from numerics.dynamics.stalls import beyond_theorem_summary, perturbed_pgd, stall_summary
from numerics.dynamics.experiments import PAPER_EXPERIMENTS, run_population_experiments, summarize_alignment
from theory.parameters import Overlaps
from numerics.dynamics.hessian_fd import local_oracle_hessian_fd
from theory.parameters import Problem, Task


def test_oracle_is_a_local_minimum_at_small_lambda_and_a_saddle_at_large():
    """Hessian of R on the sphere product at (k*, v*), d = 400 (numerics.dynamics.stalls)."""
    small = local_oracle_hessian_fd(Problem(d=400, lam=0.1))
    assert small.kind == "local minimum"
    for lam in (0.9, 1.0):
        big = local_oracle_hessian_fd(Problem(d=400, lam=lam))
        assert big.kind == "saddle"
        # the descent direction is off M: k towards v* and v towards k* (x1, y1), not kappa/nu
        x1, x2, y1, y2 = big.eigenvectors[:, 0]
        assert x1**2 + y1**2 > 0.99


def test_perturbed_oracle_returns_at_small_lambda_and_leaves_at_large(rng):
    """PGD from perturbations of size ~1e-3. lambda = 0.1: every run contracts (measured 50-500x
    in 5000 steps; asserted 5x, the slow direction alone, eigenvalue 0.011 over flow time 20,
    already gives 1.2x and the others contract fast). lambda = 1.0 (eigenvalue -0.29, growth
    ~e^(0.29 t) over flow time 10): every run moves away (measured 1.4-21x; asserted > 1x)."""
    back = perturbed_pgd(Problem(d=400, lam=0.1), Overlaps.oracle(), alpha=4e-3, n_steps=5000, size=1e-3,
                         n_runs=10, rng=rng, log_every=5000)
    assert np.all(back.final_distance < back.initial_distance / 5)
    away = perturbed_pgd(Problem(d=400, lam=1.0), Overlaps.oracle(), alpha=2e-3, n_steps=5000, size=1e-3,
                         n_runs=10, rng=rng, log_every=5000)
    assert np.all(away.final_distance > away.initial_distance)


@pytest.fixture(scope="module")
def small_lambda_sphere():
    return run_population_experiments([PAPER_EXPERIMENTS[1]], log_every=1000)[0]


def test_small_lambda_off_m_some_runs_stall_at_a_spurious_minimum(small_lambda_sphere, rng):
    """Row 2 (uniform on the sphere, lambda = 0.1): a fraction of the 30 runs ends at k = +-v*,
    kappa = nu = rho = 0, |theta| = 0.63 (an invariant set: there dR/dkappa = dR/dnu = dR/drho = 0),
    at a higher risk than the oracle; the others align. (Measured 12/30 stalled; if each run
    stalled with probability >= 0.2, all 30 aligning would have probability < 2e-3.)"""
    summary = summarize_alignment(small_lambda_sphere)
    stalls = stall_summary(small_lambda_sphere)
    assert 0 < len(stalls.stalled) < 30
    assert len(stalls.stalled) + summary.n_aligned == 30
    f = stalls.final
    assert np.all(np.abs(f["eta"]) > 1 - 1e-6)
    assert np.all(np.abs(f["kappa"]) < 1e-6) and np.all(np.abs(f["nu"]) < 1e-6)
    assert np.all(np.abs(f["rho"]) < 1e-6)
    np.testing.assert_allclose(np.abs(f["theta"]), np.abs(f["theta"][0]), atol=1e-6)
    assert np.all(stalls.final_excess_risk > stalls.oracle_excess_risk + 1e-3)
    # locally attracting: perturbations of the stall point contract
    point = Overlaps(**{k: float(v[0]) for k, v in f.items()})
    back = perturbed_pgd(Problem(d=400, lam=0.1), point, alpha=4e-3, n_steps=5000, size=1e-3, n_runs=6,
                         rng=rng, log_every=5000)
    assert np.all(back.final_distance < back.initial_distance / 5)


@pytest.mark.slow
def test_paper_rows_3_and_4():
    """Row 3 (lambda = 0.9): no run aligns in 120,000 steps and the runs end below the oracle's
    risk (the oracle is a saddle). Row 4 (schedule): nearly all runs align, and the final risk
    is close to the oracle's at the final lambda."""
    res = run_population_experiments(PAPER_EXPERIMENTS, log_every=1000)
    summary = beyond_theorem_summary(res, perturbation_steps=20_000)
    large, sched = summary.alignment[2], summary.alignment[3]
    assert large.n_aligned == 0
    assert np.all(large.final_excess_risk < large.oracle_excess_risk)
    assert sched.n_aligned >= 25
    assert abs(np.median(sched.final_excess_risk) - sched.oracle_excess_risk) < 1e-3
    assert len(summary.lines()) >= 4


@pytest.mark.parametrize("lam", [0.1, 0.5, 0.9, 1.0])
def test_finite_difference_hessian_matches_the_closed_form_one(lam):
    """The two routes to the oracle Hessian (numerics.dynamics.stalls: central differences of the
    closed-form risk in local coordinates; theory.stability: closed form) have the same spectrum.
    Tolerance: the O(h^2) truncation estimated by Richardson from steps h and 2h (|H_2h - H_h| / 3),
    doubled, plus the roundoff resolution of each route, doubled."""
    from theory import Problem
    from theory import oracle_hessian as closed_form

    problem = Problem(d=400, lam=lam)
    fine, coarse = local_oracle_hessian_fd(problem, h=1e-4), local_oracle_hessian_fd(problem, h=2e-4)
    t = closed_form(Problem(d=400, lam=lam))
    ref = np.sort([*t.block_eigenvalues, t.r_phi, t.r_psi])
    tol = 2 * np.abs(coarse.eigenvalues - fine.eigenvalues) / 3 + 2 * coarse.resolution
    assert np.all(np.abs(fine.eigenvalues - ref) <= tol), (fine.eigenvalues, ref, tol)


def test_paper_large_lambda_is_above_the_critical_lambda():
    """At d = 400, L = 10 the oracle stops being a local minimum at lambda_c ~ 0.892 (closed form):
    the paper's lambda = 0.1 is below it (minimum), its lambda = 0.9 above it (saddle), as the
    finite-difference Hessian says too."""
    from theory import critical_lambda

    lam_c = critical_lambda(Task(d=400, L=10, gamma=np.sqrt(0.5))).lam_c
    assert 0.1 < lam_c < 0.9
    assert local_oracle_hessian_fd(Problem(d=400, lam=0.1)).eigenvalues[0] > 0
    assert local_oracle_hessian_fd(Problem(d=400, lam=0.9)).eigenvalues[0] < 0
