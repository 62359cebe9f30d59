"""The compiled PGD kernel (numerics/kernels/pgd_step.py) against the NumPy reference route.

Both routes evaluate the same formulas in the same order; the per-step constants are
bit-identical (checked), the steps differ only where erf, exp (C library vs SciPy/NumPy) and the
20-term quadrature sum (sequential vs NumPy's dot) round differently: a few ulps of O(1)
quantities per step. In the stable regimes those differences add up at most linearly, so after n
steps the overlaps agree to within n * 8 eps (docs/math/kernels.md#pgd); measured: <= 1e-15.
"""

import numpy as np
import pytest

import numerics.dynamics.pgd as pgd_module
from numerics import PAPER_EXPERIMENTS, PaperSchedule, ScheduledProblem, overlap_pgd, sample_initial_overlaps
from numerics.dynamics.experiments import initial_overlaps
from numerics.dynamics.risk_partials import lambda_constants
from numerics.kernels.pgd_step import GL_NODES, GL_WEIGHTS, N_CONSTANTS, lambda_constants_kernel
from theory.parameters import OVERLAP_NAMES, Overlaps, Problem
from pgd_step_size import scale_pgd_step_size

EPS = np.finfo(float).eps
GAMMA = np.sqrt(0.5)


def _both(problem, start, **kw):
    return (overlap_pgd(problem, start, engine="numpy", **kw), overlap_pgd(problem, start, engine="kernel", **kw))


def _assert_round_off(ref, ker, steps, d, L=10):
    tol = 8 * EPS * max(steps, 1)  # module docstring: linear accumulation of a few ulps per step
    for name in OVERLAP_NAMES:
        diff = np.max(np.abs(getattr(ref, name) - getattr(ker, name)))
        assert diff <= tol, (name, diff, tol)
    # |dR| <= sum of |partials| * tol; the largest partial is R_theta ~ 2 s^2 theta (<= d) plus
    # noise terms ~ 2 (L - 1)^2 C^2 (< 2 L^2): 5 (d + 2 L^2) tol bounds it.
    diff = np.max(np.abs(ref.excess_risk - ker.excess_risk))
    assert diff <= 5 * (d + 2 * L * L) * tol, ("excess_risk", diff)
    np.testing.assert_array_equal(ref.lam, ker.lam)
    np.testing.assert_array_equal(ref.steps, ker.steps)


@pytest.mark.parametrize("lam", [1e-3, 0.1, 0.9, 1.0, 3.0, 50.0])
@pytest.mark.parametrize("d", [2, 5, 400, 10**6])
def test_constants_are_bit_identical(lam, d):
    ref = lambda_constants(float(d), 10.0, GAMMA, lam)
    out, x2, w = np.empty(N_CONSTANTS), np.empty(20), np.empty(20)
    lambda_constants_kernel(float(d), 10.0, GAMMA, lam, GL_NODES, GL_WEIGHTS, out, x2, w)
    np.testing.assert_array_equal(out, ref.scalars)
    np.testing.assert_array_equal(x2, ref.gl_x2)
    np.testing.assert_array_equal(w, ref.gl_w)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_paper_experiments_constant_lambda(index):
    """Rows 1-3 of the paper's experiments (30 runs each), first 2,000 steps."""
    c = PAPER_EXPERIMENTS[index]
    kw = dict(alpha=c.alpha, n_steps=2000, log_every=100)
    _assert_round_off(*_both(c.problem, initial_overlaps(c), **kw), 2000, c.d)


def test_paper_schedule_experiment_until_its_instability():
    """Row 4 (lambda_t = 1/(1 + 1e-4 t), alpha = 4e-3): the PGD map has a Jacobian eigenvalue
    < -1 at its start (tests/test_pgd.py::test_step_size_instability_is_the_map_not_the_code), so
    any two roundings separate exponentially after ~500 steps; the reference perturbed by one
    ulp does too. Before that the routes agree to round-off."""
    c = PAPER_EXPERIMENTS[3]
    kw = dict(alpha=c.alpha, n_steps=400, log_every=20)
    _assert_round_off(*_both(c.problem, initial_overlaps(c), **kw), 400, c.d)


def test_all_experiments_batched_with_resume_and_block_boundaries(monkeypatch):
    """Mixed runs (constant lambdas and a schedule, different alphas), resumed at step 150 and
    with kernel blocks of 64 steps: the kernel route equals the reference to round-off, and its
    block length changes nothing (bit-identical)."""
    configs = [(0.1, 4e-3), (0.9, 1e-3), (PaperSchedule(lam0=0.5), 2e-3), (PaperSchedule(lam0=1.0, rate=1e-2), 1e-3)]
    start = sample_initial_overlaps(400, 8, np.random.default_rng(5))
    problem = ScheduledProblem(d=400, lam=[c[0] for c in configs for _ in range(2)])
    kw = dict(alpha=np.repeat([c[1] for c in configs], 2), log_every=37)
    first = _both(problem, start, n_steps=150, **kw)
    _assert_round_off(*first, 150, 400)
    second = [overlap_pgd(problem, f.state_at(-1), n_steps=300, start_step=150, engine=e, **kw)
              for f, e in zip(first, ("numpy", "kernel"))]
    _assert_round_off(*second, 450, 400)
    monkeypatch.setattr(pgd_module, "_KERNEL_BLOCK", 64)
    small = overlap_pgd(problem, first[1].state_at(-1), n_steps=300, start_step=150, engine="kernel", **kw)
    for name in OVERLAP_NAMES + ("excess_risk", "lam"):
        np.testing.assert_array_equal(getattr(small, name), getattr(second[1], name))


def test_runs_are_bit_identical_alone_and_across_chunks():
    """The kernel computes each group's constants once per chunk of steps (numerics.kernels.pgd_step._CHUNK =
    256) for all the group's runs: a run's bits are those of the run alone, in one call or resumed at a step
    that is not a multiple of the chunk (schedules and constant lambdas, several groups)."""
    configs = [(PaperSchedule(lam0=1.0, rate=1e-3), 2e-3), (0.9, 1e-3), (PaperSchedule(lam0=0.5), 2e-3)]
    start = sample_initial_overlaps(400, 6, np.random.default_rng(11))
    lam = [c[0] for c in configs for _ in range(2)]
    alpha = np.repeat([c[1] for c in configs], 2)
    together = overlap_pgd(ScheduledProblem(d=400, lam=lam), start, alpha=alpha, n_steps=700, log_every=13)
    head = overlap_pgd(ScheduledProblem(d=400, lam=lam), start, alpha=alpha, n_steps=301, log_every=13)
    tail = overlap_pgd(ScheduledProblem(d=400, lam=lam), head.state_at(-1), alpha=alpha, n_steps=399,
                       start_step=301, log_every=13)
    np.testing.assert_array_equal(np.stack(tail.state_at(-1)), np.stack(together.state_at(-1)))
    for j in range(6):
        alone = overlap_pgd(ScheduledProblem(d=400, lam=lam[j]), Overlaps(**{k: v[j:j + 1] for k, v in
                            start.as_dict().items()}), alpha=alpha[j], n_steps=700, log_every=13)
        for name in OVERLAP_NAMES + ("excess_risk",):
            np.testing.assert_array_equal(getattr(alone, name)[:, 0], getattr(together, name)[:, j])


@pytest.mark.parametrize("lam, alpha", [(0.1, 4e-3), (0.9, 1e-3), (PaperSchedule(lam0=1.0), 4e-3)])
def test_rank_deficient_starts(lam, alpha):
    """Starts where the Gram matrix of (k, v, k*, v*) is singular: on M (theta = eta = rho = 0,
    which stays exactly invariant on both routes), at the oracle and its sign flips (corners),
    k = v (rho = 1) and k = k* with v orthogonal to both."""
    on_m = sample_initial_overlaps(400, 6, np.random.default_rng(3), on_manifold=True)
    corners = dict(kappa=[1.0, -1.0, 1.0, 0.6, 1.0], nu=[1.0, 1.0, 0.0, 0.8, 0.0],
                   theta=[0.0, 0.0, 0.0, 0.6, 0.0], eta=[0.0, 0.0, 0.0, 0.8, 0.0],
                   rho=[0.0, 0.0, 0.0, 1.0, 0.0])
    start = Overlaps(**{k: np.r_[getattr(on_m, k), corners[k]] for k in OVERLAP_NAMES})
    ref, ker = _both(ScheduledProblem(d=400, lam=lam), start, alpha=alpha, n_steps=300, log_every=50)
    _assert_round_off(ref, ker, 300, 400)
    for name in ("theta", "eta", "rho"):
        assert np.all(getattr(ker, name)[:, :6] == 0)


def test_small_d_and_step_sizes_of_the_claims():
    """d = 2 and 5, and the step sizes of the Richardson claim (alpha0 / 2^j)."""
    start = sample_initial_overlaps(5, 4, np.random.default_rng(9))
    for d in (5, 50):
        for alpha in (4e-3, 5e-4):
            _assert_round_off(*_both(Problem(d=d, lam=0.3), start, alpha=alpha, n_steps=500, log_every=100), 500, d)
    on_m = sample_initial_overlaps(2, 4, np.random.default_rng(9), on_manifold=True)
    _assert_round_off(*_both(Problem(d=2, lam=0.3), on_m, alpha=1e-2, n_steps=500, log_every=100), 500, 2)


def test_kernel_raises_on_non_finite_iterates_and_bad_engine():
    start = sample_initial_overlaps(400, 2, np.random.default_rng(1))
    with pytest.raises(FloatingPointError, match="non-finite"):
        overlap_pgd(Problem(d=400, lam=0.1), start, alpha=1e200, n_steps=5, engine="kernel")
    with pytest.raises(ValueError, match="engine='fortran'"):
        overlap_pgd(Problem(d=400, lam=0.1), start, alpha=1e-3, n_steps=5, engine="fortran")


@pytest.mark.slow
def test_paper_schedule_experiment_whole_run():
    """Row 4 over its 120,000 steps (10 of its runs): through the unstable start the two routes
    separate as far as the reference does from itself started one ulp away (both <= 0.1 here),
    then lambda_t decreases, PGD becomes stable and both reach the same limit: the final
    overlaps and excess risks agree to round-off (the contraction erases the transient)."""
    c = PAPER_EXPERIMENTS[3]
    start = Overlaps(**{k: v[:10] for k, v in initial_overlaps(c).as_dict().items()})
    nudged = (np.nextafter(start.kappa, 2.0),) + start.as_tuple()[1:]
    kw = dict(alpha=c.alpha, n_steps=c.n_steps, log_every=1000)
    ref, ker = _both(c.problem, start, **kw)
    self_gap = np.max(np.abs(overlap_pgd(c.problem, nudged, engine="numpy", **kw).kappa - ref.kappa), axis=1)
    gap = np.max(np.abs(ker.kappa - ref.kappa), axis=1)
    assert np.max(gap) <= 10 * max(np.max(self_gap), 8 * EPS * c.n_steps)
    tol = 8 * EPS * c.n_steps  # the stable-regime bound of the module docstring (measured: 4e-16)
    for name in OVERLAP_NAMES:
        assert np.max(np.abs(getattr(ref, name)[-1] - getattr(ker, name)[-1])) <= tol, name
    assert np.max(np.abs(ref.excess_risk[-1] - ker.excess_risk[-1])) <= 5 * (c.d + 200) * tol


def test_kernels_claim_passes_and_detects_a_wrong_kernel(monkeypatch):
    """``slr verify``'s kernels-equal-reference passes; a kernel route whose step size is off by a
    relative 1e-9 (differences ~1e-11 after 500 steps, far above 8 n eps = 9e-13) fails it."""
    from figures.verify import discover_claims

    (claim,) = [c for c in discover_claims() if c.claim_id == "kernels-equal-reference"]
    result = claim(quick=True, seed=0)
    assert result.status == "pass", (result.measured_text, result.details.get("traceback"))
    scale_pgd_step_size(monkeypatch, 1 + 1e-9)
    assert claim(quick=True, seed=0).status == "fail"
