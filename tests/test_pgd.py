"""Exact PGD in overlap coordinates vs the reference PGD on vectors (docs/math/dynamics.md#pgd-step-in-overlaps; paper Definition 1)."""

import dataclasses

import numpy as np
import pytest
from scipy.special import erf

from numerics.dynamics.experiments import (PAPER_EXPERIMENTS, experiments_first_aligned, run_population_experiment,
                                          run_population_experiments, summarize_alignment)
from numerics.montecarlo.geometry import overlaps_from_vectors, vectors_from_overlaps
from numerics.dynamics.initial import sample_initial_overlaps, sample_initial_vectors
from numerics.dynamics.risk_partials import lambda_constants, partials, zeta_lean
from numerics.dynamics.overlap_steps import pgd_step
from numerics.dynamics.alignment import first_aligned_steps
from numerics.dynamics.pgd import lambda_table, overlap_pgd, pgd_route_gap_bound
from numerics.dynamics.pgd_vectors import vector_pgd
from numerics.dynamics.schedules import PaperSchedule
from theory.parameters import OVERLAP_NAMES, Overlaps
from theory.risk import risk_grad_from_arrays
from theory.zeta import ZETA_MAX_RELATIVE_ERROR, zeta
from numerics.dynamics.schedules import ScheduledProblem
from theory.parameters import Problem

EPS = np.finfo(float).eps
GAMMA = np.sqrt(0.5)


def _max_diff(a, b):
    return max(np.max(np.abs(getattr(a, n) - getattr(b, n))) for n in OVERLAP_NAMES)


def test_zeta_lean_matches_theory():
    """Same closed form (GL route for every g) vs theory.zeta (Owen's T for g >= 1/2): both are
    within ZETA_MAX_RELATIVE_ERROR of the exact value, so they differ by at most twice that."""
    t = np.r_[0.0, np.logspace(-8, 3, 200)]
    for g in np.logspace(-4, 2, 40):
        c = lambda_constants(2.0, 10.0, 1.0, g)  # gamma = 1 so g = lam
        a = t / np.sqrt(1 + 2 * g * g)
        lean = zeta_lean(a * a, erf(a), c.gl_x2, c.gl_w)
        np.testing.assert_allclose(lean, zeta(t, g), rtol=2 * ZETA_MAX_RELATIVE_ERROR, atol=0)


@pytest.mark.parametrize("lam", [0.05, 0.1, 0.9, 3.0])
@pytest.mark.parametrize("d", [5, 400])
def test_lean_partials_match_theory(lam, d, rng):
    """Same formula, regrouped: each partial agrees to within 2 zeta errors (the zeta term) plus
    a few ulps per term of reassociation (<= 10 terms of size <= max|R_x|): 2e-14 + 32 eps."""
    o = sample_initial_overlaps(d, 2000, rng)
    c = lambda_constants(float(d), 10.0, GAMMA, np.full(2000, lam))
    ours = partials(c, *o.as_tuple())
    ref = risk_grad_from_arrays(float(d), 10.0, GAMMA, 0.0, lam, *o.as_tuple())
    for x, y in zip(ours, ref):
        assert np.max(np.abs(x - y)) <= (2 * ZETA_MAX_RELATIVE_ERROR + 32 * EPS) * np.max(np.abs(y))


def test_one_step_matches_vectors(rng):
    """pgd_step at random feasible points vs one explicit vector step built in R^6."""
    for _ in range(20):
        o = sample_initial_overlaps(6, 1, rng)
        point = Overlaps(**{k: float(v[0]) for k, v in o.as_dict().items()})
        k, v, ks, vs = vectors_from_overlaps(point, 6, rng)
        lam, alpha = 0.4, 0.01
        one = vector_pgd(Problem(d=6, lam=lam), k, v, ks, vs, alpha=alpha, n_steps=1).log
        grads = risk_grad_from_arrays(6.0, 10.0, GAMMA, 0.0, lam, *point.as_tuple())
        new = pgd_step(alpha, *point.as_tuple(), *grads)
        # one step: a few roundings on unit-size quantities on each side
        assert np.max(np.abs(np.array(new) - np.array(one.state_at(-1))[:, 0])) < 32 * EPS


def _equivalence_runs(d, rng):
    """Runs in the regimes of the paper's rows 1-3 and a schedule, where PGD is stable."""
    configs = [(0.1, 4e-3, False), (0.1, 4e-3, True), (0.9, 1e-3, False),
               (PaperSchedule(lam0=0.5), 2e-3, False)]
    lam, alpha, parts = [], [], []
    for lam_i, alpha_i, on_m in configs:
        parts.append(sample_initial_vectors(d, 2, rng, on_manifold=on_m))
        lam += [lam_i] * 2
        alpha += [alpha_i] * 2
    vecs = [np.concatenate([p[i] for p in parts]) for i in range(4)]
    return vecs, lam, np.array(alpha)


@pytest.mark.slow
@pytest.mark.parametrize("d", [20, 400])
def test_overlap_pgd_equals_vector_pgd(d, rng):
    """1e4 steps: the routes drift apart by at most eps per step (``pgd_route_gap_bound``, the
    bound the claim definition1-overlap-vs-vector uses; paper Definition 1: the recursion is exact for every d).
    The vector route here is the NumPy reference (partials from theory.risk). Slow (~10 s CPU, its 1e4
    NumPy steps): by default the claim
    definition1-overlap-vs-vector in quick mode (the session's quick verification, tests/test_verify.py)
    runs the compiled vector route against the overlap route from the same 8 starts of the four regimes at d = 20 and 400 for 1e3 steps
    against the same bound, and tests/test_claims_dynamics.py shows it fails on a wrong step."""
    vecs, lam, alpha = _equivalence_runs(d, rng)
    steps = 10_000
    ref = vector_pgd(ScheduledProblem(d=d, lam=lam), *vecs, alpha=alpha, n_steps=steps, log_every=1000,
                     engine="numpy").log
    ours = overlap_pgd(ScheduledProblem(d=d, lam=lam), overlaps_from_vectors(*vecs), alpha=alpha, n_steps=steps,
                       log_every=1000)
    np.testing.assert_array_equal(ours.steps, ref.steps)
    assert _max_diff(ours, ref) <= pgd_route_gap_bound(steps)
    np.testing.assert_allclose(ours.excess_risk, ref.excess_risk, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ours.lam, ref.lam)


def test_step_size_instability_is_the_map_not_the_code():
    """lambda = 1, d = 400, alpha = 4e-3 (the schedule's start): the two routes separate
    exponentially after ~500 steps because the PGD map itself has a Jacobian eigenvalue < -1
    there (a period-2 instability off M: alpha times the curvature exceeds 2). Measured on the
    overlap map along three runs (central differences, error ~1e-7, far below the margin)."""
    start = sample_initial_overlaps(400, 3, np.random.default_rng(11))
    log = overlap_pgd(Problem(d=400, lam=1.0), start, alpha=4e-3, n_steps=1000, log_every=50)
    step = lambda y: np.array(pgd_step(4e-3, *y, *risk_grad_from_arrays(400.0, 10.0, GAMMA, 0.0, 1.0, *y)))
    h, lowest = 1e-7, np.inf
    for i in range(len(log.steps)):
        for x in np.array(log.state_at(i)).T:
            jac = np.column_stack([(step(x + h * e) - step(x - h * e)) / (2 * h) for e in np.eye(5)])
            lowest = min(lowest, np.min(np.linalg.eigvals(jac).real))
    assert lowest < -1.1


def test_manifold_is_exactly_invariant(rng):
    o = sample_initial_overlaps(400, 10, rng, on_manifold=True)
    for lam, alpha in [(0.1, 4e-3), (0.9, 1e-3), (PaperSchedule(lam0=1.0), 4e-3)]:
        log = overlap_pgd(ScheduledProblem(d=400, lam=lam), o, alpha=alpha, n_steps=2000, log_every=500)
        assert np.all(log.theta == 0) and np.all(log.eta == 0) and np.all(log.rho == 0)


def test_resume_and_schedule_forms_are_identical(rng):
    o = sample_initial_overlaps(50, 4, rng)
    sched = PaperSchedule(lam0=0.7, rate=1e-3)
    whole = overlap_pgd(ScheduledProblem(d=50, lam=sched), o, alpha=2e-3, n_steps=700, log_every=100)
    first = overlap_pgd(ScheduledProblem(d=50, lam=sched), o, alpha=2e-3, n_steps=300, log_every=100)
    second = overlap_pgd(ScheduledProblem(d=50, lam=sched), first.state_at(-1), alpha=2e-3, n_steps=400,
                         log_every=100, start_step=300)
    joined = first.followed_by(second)
    np.testing.assert_array_equal(joined.steps, whole.steps)
    assert _max_diff(joined, whole) == 0
    callable_form = overlap_pgd(ScheduledProblem(d=50, lam=lambda t: 0.7 / (1 + 1e-3 * np.asarray(t))), o,
                                alpha=2e-3, n_steps=700, log_every=100)
    per_run = overlap_pgd(ScheduledProblem(d=50, lam=[sched] * 4), o, alpha=2e-3, n_steps=700, log_every=100)
    assert _max_diff(callable_form, whole) == 0 and _max_diff(per_run, whole) == 0
    np.testing.assert_allclose(whole.lam[:, 0], sched(whole.steps), rtol=EPS)


def test_logging_layout(rng):
    o = sample_initial_overlaps(20, 3, rng)
    log = overlap_pgd(Problem(d=20, lam=0.3), o, alpha=1e-2, n_steps=250, log_every=100)
    np.testing.assert_array_equal(log.steps, [0, 100, 200, 250])
    assert log.kappa.shape == log.excess_risk.shape == (4, 3)
    np.testing.assert_array_equal(log.kappa[0], o.kappa)
    np.testing.assert_allclose(log.distance_to_manifold, np.sqrt(log.theta**2 + log.eta**2 + log.rho**2))
    assert np.all(log.abs_kappa >= 0) and log.select_runs([1]).kappa.shape == (4, 1)


def test_batched_experiments_equal_single_runs():
    """Vectorising over experiments does not change any run (stable regimes, shortened)."""
    configs = [dataclasses.replace(c, n_steps=s, n_runs=3)
               for c, s in zip(PAPER_EXPERIMENTS[:3], (300, 500, 400))]
    together = run_population_experiments(configs, log_every=100)
    for c, res in zip(configs, together):
        alone = run_population_experiment(c, log_every=100)
        np.testing.assert_array_equal(res.log.steps, alone.log.steps)
        assert _max_diff(res.log, alone.log) == 0
        assert res.log.steps[-1] == c.n_steps


def test_first_aligned_steps_are_those_of_the_logged_runs():
    """The runs continued from their iterate, segment by segment, only until aligned: the same first aligned
    steps as the logs of one overlap_pgd call (summarize_alignment), bit for bit: runs that align in the first
    segment, later, and never (n_steps not a multiple of log_every); a schedule and constant lambdas side by
    side; segments that are not multiples of log_every (rounded up)."""
    configs = [dataclasses.replace(PAPER_EXPERIMENTS[0], n_runs=12, n_steps=12_003, seed=5),
               dataclasses.replace(PAPER_EXPERIMENTS[1], n_runs=12, n_steps=12_003, seed=6),
               dataclasses.replace(PAPER_EXPERIMENTS[3], n_runs=6, n_steps=12_003, seed=7),
               dataclasses.replace(PAPER_EXPERIMENTS[0], d=100, lam=0.1, alpha=0.02, n_runs=6, n_steps=2_000, seed=8)]
    expected = [summarize_alignment(r, delta=0.05).first_aligned_step
                for r in run_population_experiments(configs, log_every=7)]
    steps = np.concatenate(expected)
    assert np.any((steps >= 0) & (steps < 1000)) and np.any(steps > 1000) and np.any(steps < 0)
    for got, want in zip(experiments_first_aligned(configs, delta=0.05, log_every=7), expected):
        np.testing.assert_array_equal(got, want)
    c = configs[0]
    start = run_population_experiments([c], log_every=7)[0].initial
    for segment in (1, 50, 20_000):
        got = first_aligned_steps(c.problem, start, alpha=c.alpha, n_steps=c.n_steps, delta=0.05, log_every=7,
                                  segment=segment)
        np.testing.assert_array_equal(got, expected[0])
    with pytest.raises(ValueError, match="delta"):
        first_aligned_steps(c.problem, start, alpha=c.alpha, n_steps=10, delta=1.0)
    with pytest.raises(ValueError, match="segment"):
        first_aligned_steps(c.problem, start, alpha=c.alpha, n_steps=10, delta=0.5, segment=0)


def test_first_aligned_steps_test_the_mapped_overlaps(monkeypatch):
    """first_aligned_steps maps by nearest_feasible only the entries aligned before the map, and decides as the
    map of every entry (overlap_pgd's logs): with a route that logs an infeasible entry at the threshold
    (|k|^2 = 1.1525 > 1, scaled below it), a feasible one above it and one below it, only the second aligns."""
    import numerics.dynamics.pgd as pgd_module
    from theory.feasible import nearest_feasible

    entries = np.array([[0.95, 0.95, 0.5, 0.5, 0.0], [0.97, 0.97, 0.0, 0.0, 0.0], [0.5, 0.99, 0.1, 0.0, 0.0]])

    def logged(state, logs, *args):
        logs[:, :5] = entries.T[None]
        return np.asarray(state)

    monkeypatch.setitem(pgd_module._ROUTES, "kernel", logged)
    c = PAPER_EXPERIMENTS[0]
    start = Overlaps(**{name: np.zeros(3) for name in OVERLAP_NAMES})
    got = first_aligned_steps(c.problem, start, alpha=c.alpha, n_steps=20, delta=0.05, log_every=10)
    kappa, nu, *_ = nearest_feasible(*entries.T)
    np.testing.assert_array_equal(got, np.where(np.minimum(np.abs(kappa), np.abs(nu)) >= 0.95, 0, -1))
    np.testing.assert_array_equal(got, [-1, 0, -1])


@pytest.mark.parametrize("bad, name", [
    (dict(n_steps=-1), "n_steps"), (dict(n_steps=1.5), "n_steps"), (dict(log_every=0), "log_every"),
    (dict(alpha=0.0), "alpha"), (dict(alpha=np.nan), "alpha"), (dict(d=0), "d"),
    (dict(lam=-1.0), "lam"), (dict(lam=lambda t: 0.0 * t), "lam"), (dict(lam=[0.1, 0.2]), "lam"),
])
def test_bad_input(bad, name):
    o = Overlaps(kappa=np.zeros(3), nu=np.zeros(3))
    args = dict(d=10, lam=0.1, alpha=0.01, n_steps=5) | bad
    problem = {k: args.pop(k) for k in ("d", "lam")}
    with pytest.raises(ValueError, match=name):
        overlap_pgd(ScheduledProblem(**problem), o, **args)


def test_nonfinite_iterate_raises():
    o = Overlaps(kappa=np.array([0.1]), nu=np.array([0.1]), theta=np.array([0.1]))
    with pytest.raises(FloatingPointError, match="alpha"):
        overlap_pgd(Problem(d=400, lam=1.0), o, alpha=1e200, n_steps=3, log_every=1)


def test_lambda_table_shapes():
    tab = lambda_table([0.1, PaperSchedule(lam0=1.0)], 10, 13, 2)
    np.testing.assert_allclose(tab, [[0.1, 1 / 1.001], [0.1, 1 / 1.0011], [0.1, 1 / 1.0012]], rtol=EPS)


def test_logged_states_stay_feasible_in_the_paper_settings(monkeypatch):
    """lambda = 0.9, alpha = 1e-3 (runs heading to k = +-v*, a rank-deficient Gram matrix): without
    the projection of numerics.dynamics.pgd, most runs end with a smallest Gram eigenvalue ~ -5e-14 at
    step 20,000, beyond Overlaps' tolerance 64 eps. Now every logged state is feasible; the
    projection did act (the drift is real) and moved no overlap by more than 1e-12 (the drift of
    2e4 steps of a few ulps each: <= 2e4 * 16 eps = 7e-11 in the worst case, ~1e-13 measured)."""
    import numerics.dynamics.pgd as pgd_module
    from theory.feasible import nearest_feasible
    from theory.parameters import gram_matrix

    changes = []

    def spy(*state):
        out = nearest_feasible(*state)
        changes.append(max(float(np.max(np.abs(a - b))) for a, b in zip(out, state)))
        return out
    monkeypatch.setattr(pgd_module, "nearest_feasible", spy)
    config = dataclasses.replace(PAPER_EXPERIMENTS[2], n_runs=64, n_steps=20_000)
    start = sample_initial_overlaps(config.d, config.n_runs, np.random.default_rng(3))
    log = overlap_pgd(config.problem, start, alpha=config.alpha, n_steps=config.n_steps, log_every=2000)
    eig = np.linalg.eigvalsh(gram_matrix(*(getattr(log, n) for n in OVERLAP_NAMES)))[..., 0]
    assert np.min(eig) >= -64 * EPS
    assert log.final.kappa.shape == (64,)           # validated Overlaps: no ValueError
    assert 0 < max(changes) <= 1e-12
