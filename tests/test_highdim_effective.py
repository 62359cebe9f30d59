"""The effective ODE of online SGD at step c/d (docs/math/highdim.md): gradient moments by
quadrature against the closed form and Monte Carlo, the drift against sympy, the c -> 0 limit,
bad input."""

import importlib

import numpy as np
import pytest
from scipy.stats import norm

from numerics import OdeOptions, ScheduledProblem, flow_velocity, overlap_flow
from numerics.highdim import effective_flow, gradient_moments_mc
from theory import PAPER_GAMMA, PAPER_L, Overlaps, Problem, Task
from theory.highdim import (GradientMoments, effective_drift, frame_coordinates, gradient_moments,
                            population_drift, second_order_drift)
from theory.risk import risk_from_arrays, risk_grad_from_arrays

STATES = [(0.3, 0.2, 0.1, -0.2, 0.15), (0.6, -0.4, 0.2, 0.1, -0.3), (0.9, 0.95, 0.0, 0.0, 0.0)]
EPS = np.finfo(float).eps
# Round-off of the quadrature: sums over ~1e4 nodes (pairwise: ~log2(1e4) = 14 eps each) of
# products of ~10 factors, then ~20 terms combined: 1e3 eps relative, plus the quadrature's abserr.
RTOL_QUAD = 1e3 * EPS


@pytest.mark.parametrize("d,lam", [(4, 0.5), (100, 0.5), (400, 2.0), (10**4, 0.1)])
@pytest.mark.parametrize("state", STATES)
def test_first_moments_are_the_closed_form_flow_and_risk(d, lam, state):
    m = gradient_moments(Problem(d=d, eps=0.1, lam=lam), state)
    grads = risk_grad_from_arrays(d, PAPER_L, PAPER_GAMMA, 0.1, lam, *state)
    flow = np.array(flow_velocity(*state, *grads), dtype=float)
    scale = np.max(np.abs(flow)) + np.max(np.abs(grads))
    assert np.max(np.abs(population_drift(m, state) - flow)) <= RTOL_QUAD * scale + m.abserr
    risk = risk_from_arrays(d, PAPER_L, PAPER_GAMMA, 0.1, lam, *state)
    assert abs(m.risk - risk) <= RTOL_QUAD * risk + m.abserr


def test_second_moments_against_monte_carlo_with_power():
    """z-tests of the twelve moments at two states (explicit d-vectors, d = 20), family-wise
    false-failure rate 1e-3 (Bonferroni, two-sided); power: a trace dimension d - 3 instead of
    d - 4 in S_kk, S_vv (the size of a wrong count of frame dimensions) is detected with
    probability >= 0.99 at the sample size used."""
    cases = [((0.3, 0.2, 0.1, -0.2, 0.15), 0.5), ((0.6, -0.4, 0.2, 0.1, -0.3), 1.5)]
    z_crit = norm.isf(1e-3 / (2 * 12 * len(cases)))
    d = 20
    for i, (state, lam) in enumerate(cases):
        problem = Problem(d=d, eps=0.3, lam=lam)
        q = gradient_moments(problem, state)
        mc = gradient_moments_mc(problem, state, n=60_000, rng=np.random.default_rng([18, i]))
        z = (mc.mean - q.as_vector()) / mc.stderr
        assert np.max(np.abs(z)) <= z_crit, z
        wrong = GradientMoments(q.grad_k, q.grad_v, q.s_kk * (d - 3) / (d - 4),
                                q.s_vv * (d - 3) / (d - 4), q.s_kv, q.risk, 0.0).as_vector()
        shift = np.abs(wrong - q.as_vector())[8:10] / mc.stderr[8:10]
        assert np.all(shift >= z_crit + norm.ppf(0.99)), shift


def _one_gradient_moments(state, gk, gv):
    k4, v4 = frame_coordinates(*state)
    k, v = np.r_[k4, 0, 0], np.r_[v4, 0, 0]
    pk = gk - (gk @ k) * k
    pv = gv - (gv @ v) * v
    return pk, pv


def test_drift_is_the_symbolic_expansion_of_the_step():
    """For fixed gradients the order-1 and order-2 coefficients of the exact step (sympy) are F and
    D; for the minibatch mean of B draws from a finite set of per-sample gradients, the exact
    average of the order-2 coefficient over all B-tuples is D with G = mean and S = mean of
    squares (the minibatch formula). Agreement to round-off (64 eps of the terms)."""
    from itertools import product

    from theory.symbolic.highdim import step_expansion_numeric

    f = step_expansion_numeric()
    rng = np.random.default_rng(5)
    for state in STATES[:2]:
        k4, v4 = frame_coordinates(*state)
        h = rng.standard_normal((3, 2, 6))  # three per-sample (g_k, g_v)
        projected = [_one_gradient_moments(state, *hi) for hi in h]
        pk = np.array([p[0] for p in projected])
        pv = np.array([p[1] for p in projected])
        for B in (1, 2):
            tuples = list(product(range(3), repeat=B))
            firsts, seconds = zip(*(f(*k4[:3], *v4, *h[list(t), 0].mean(0), *h[list(t), 1].mean(0))
                                    for t in tuples))
            m = GradientMoments(pk.mean(0)[:4], pv.mean(0)[:4], np.mean(np.sum(pk * pk, 1)),
                                np.mean(np.sum(pv * pv, 1)), np.mean(np.sum(pk * pv, 1)), 0.0, 0.0)
            # the 6-dim gradients live beyond the 4-dim frame: rebuild |G|^2 from the full vectors
            G = GradientMoments(pk.mean(0), pv.mean(0), m.s_kk, m.s_vv, m.s_kv, 0.0, 0.0)
            tol = 64 * EPS * (1 + np.max(np.abs(h)) ** 2)
            assert np.allclose(np.mean(firsts, axis=0), population_drift(m, state), rtol=0, atol=tol)
            assert np.allclose(np.mean(seconds, axis=0), second_order_drift(G, state, B), rtol=0, atol=tol)


def test_second_order_term_is_the_step_error():
    """The exact step of explicit vectors minus (x + alpha F + alpha^2 D) is O(alpha^3): halving
    alpha divides it by 8 (fitted log2 ratio within 3 +- 0.2; the O(alpha^4) term moves it by
    ~alpha)."""
    rng = np.random.default_rng(6)
    state = STATES[0]
    k4, v4 = frame_coordinates(*state)
    k, v = np.r_[k4, 0, 0], np.r_[v4, 0, 0]
    gk, gv = rng.standard_normal((2, 6))
    pk, pv = _one_gradient_moments(state, gk, gv)
    m = GradientMoments(pk, pv, pk @ pk, pv @ pv, pk @ pv, 0.0, 0.0)
    errs = []
    for alpha in (1e-2, 5e-3):
        kn = (k - alpha * pk) / np.linalg.norm(k - alpha * pk)
        vn = (v - alpha * pv) / np.linalg.norm(v - alpha * pv)
        exact = np.array([kn[0], vn[1], vn[0], kn[1], kn @ vn])
        approx = (np.array(state) + alpha * population_drift(m, state)
                  + alpha**2 * second_order_drift(m, state, 1))
        errs.append(np.max(np.abs(exact - approx)))
    assert abs(np.log2(errs[0] / errs[1]) - 3.0) <= 0.2


def test_c_to_zero_is_the_population_flow():
    """c = 1e-12: alpha D is negligible; both ODEs integrated with LSODA at rtol 1e-10.
    Tolerance: 10 x the sum of the two integration errors, each estimated by the population
    flow's change when rtol goes from 1e-10 to 1e-12 (same method and tolerances on the same ODE
    up to the alpha D term), plus that term, alpha max|D| t_end with the max over 5 points of the
    path (at c = 1e-9 the measured gap, ~9e-9, is this term: D ~ 10^3 at d = 100)."""
    problem = Problem(d=100, eps=0.1, lam=0.5)
    start = (0.3, 0.2, 0.0, 0.0, 0.0)
    t_end, c = 2.0, 1e-12
    eff = effective_flow(problem, start, c=c, batch_size=1, t_end=t_end,
                         ode=OdeOptions(rtol=1e-10, atol=1e-12))
    ov = Overlaps(**dict(zip(("kappa", "nu", "theta", "eta", "rho"), start)))
    ref = overlap_flow(problem, ov, t_end=t_end, ode=OdeOptions(rtol=1e-10, atol=1e-12))
    fine = overlap_flow(problem, ov, t_end=t_end, ode=OdeOptions(rtol=1e-12, atol=1e-12)).y[:, -1]
    path = ref.sol(np.linspace(0.0, t_end, 5)).T
    d_max = max(np.max(np.abs(second_order_drift(gradient_moments(problem, x), x, 1)))
                for x in path)
    tol = 10 * 2 * np.max(np.abs(ref.y[:, -1] - fine)) + c / 100 * d_max * t_end
    assert np.max(np.abs(eff.y[:, -1] - ref.y[:, -1])) <= max(tol, 1e-12)


def test_correction_pulls_towards_zero_and_schedules_are_supported():
    """c > 0 shrinks kappa and nu against the population flow (D_kappa, D_nu < 0 for kappa, nu > 0);
    a constant schedule callable gives the scalar lambda's trajectory."""
    state = (0.3, 0.2, 0.0, 0.0, 0.0)
    problem = Problem(d=100, eps=0.1, lam=0.5)
    m = gradient_moments(problem, state)
    D = second_order_drift(m, state, 5)
    assert D[0] < 0 and D[1] < 0
    a = effective_flow(problem, state, c=0.05, batch_size=5, t_end=0.2)
    sched = ScheduledProblem(d=100, eps=0.1, lam=lambda t: 0.5)
    b = effective_flow(sched, state, c=0.05, batch_size=5, t_end=0.2)
    assert np.allclose(a.y[:, -1], b.y[:, -1], rtol=0, atol=1e-12)
    assert np.allclose(effective_drift(problem, state, alpha=0.0, batch_size=1),
                       population_drift(m, state), rtol=0, atol=1e-12)


def test_drift_outside_the_feasible_set_is_taken_at_the_nearest_feasible_state(monkeypatch):
    """The integrator may step outside the feasible set by its tolerance; there the quadrature's frame
    (clamped square roots) extends the drift unstably: at (kappa, nu) = (0.3, 1.1) on M it pushes nu
    further out (+0.61) where the drift at the nearest feasible state (0.27, 1) pulls it back (-0.20)
    (docs/math/highdim.md#quadrature). The right-hand side handed to solve_ivp is captured and
    evaluated there: it must be the drift at ``nearest_feasible`` (same arithmetic: equal bit for bit)
    and point back into the set; inside the set it is the drift itself."""
    from theory.feasible import nearest_feasible

    module = importlib.import_module("numerics.highdim.effective_flow")  # the module, not the function
    captured = {}
    real = module.solve_ivp

    def spy(fun, *args, **kwargs):
        captured["rhs"] = fun
        return real(fun, *args, **kwargs)

    monkeypatch.setattr(module, "solve_ivp", spy)
    problem = Problem(d=80, eps=0.1, lam=0.5)
    alpha, B = 0.05 / 80, 5
    effective_flow(problem, (0.3, 0.2, 0.0, 0.0, 0.0), c=0.05, batch_size=B, t_end=1e-3)
    outside, inside = np.array([0.3, 1.1, 0.0, 0.0, 0.0]), np.array(STATES[0])
    out = captured["rhs"](0.0, outside)
    assert np.array_equal(out, effective_drift(problem, nearest_feasible(*outside), alpha=alpha,
                                               batch_size=B))
    assert out[1] < 0
    assert np.array_equal(captured["rhs"](0.0, inside),
                          effective_drift(problem, inside, alpha=alpha, batch_size=B))


@pytest.mark.parametrize("kwargs,name", [(dict(c=0.0), "c"), (dict(c=-1.0), "c"),
                                         (dict(batch_size=0), "batch_size"),
                                         (dict(problem_d=3), "d")])
def test_bad_input_names_the_parameter(kwargs, name):
    problem = Problem(d=kwargs.pop("problem_d", 100), eps=0.1, lam=0.5)
    args = dict(c=0.1, batch_size=1, t_end=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        effective_flow(problem, (0.3, 0.2, 0.0, 0.0, 0.0), **args)
    if name == "d":
        with pytest.raises(ValueError, match="d=3"):
            gradient_moments(Problem(d=3, eps=0.1, lam=0.5), (0.3, 0.2, 0.0, 0.0, 0.0))
        with pytest.raises(ValueError, match="d=3"):
            gradient_moments_mc(Problem(d=3, eps=0.1, lam=0.5), (0.3, 0.2, 0.0, 0.0, 0.0), n=10,
                                rng=np.random.default_rng(0))


def test_moments_need_a_problem_with_one_lambda():
    state = (0.3, 0.2, 0.0, 0.0, 0.0)
    for bad, where in [(ScheduledProblem(d=100, lam=lambda t: 0.5), "problem.lam"),
                       (Problem(d=100, lam=np.array([0.5, 0.6])), "problem.lam"),
                       (Task(d=100), "problem.lam"), ((100, 10), "problem=")]:
        with pytest.raises(ValueError, match=where):
            gradient_moments(bad, state)


def test_one_step_increment_of_the_reduced_simulator():
    """Mean one-step increment / alpha of the reduced SGD step against F + alpha D at lambda = 2/s,
    d = 10^4 (kappa, nu; Bonferroni over 2, family rate 1e-3), and the correction alpha D_nu is
    detected (>= z_crit + z_0.99 standard errors)."""
    from numerics.highdim import one_step_increment_mc

    d, lam, state, c = 10_000, 2.0 / np.sqrt(5_000.0), (0.2, 0.2, 0.0, 0.0, 0.0), 0.5
    problem = Problem(d=d, eps=0.1, lam=lam)
    est = one_step_increment_mc(problem, state, c=c, batch_size=1, n_runs=200_000,
                                rng=np.random.default_rng(181))
    eff = effective_drift(problem, state, alpha=c / d, batch_size=1)
    pop = effective_drift(problem, state, alpha=0.0, batch_size=1)
    z_crit = norm.isf(1e-3 / 4)
    assert np.all(np.abs((est.mean - eff)[:2] / est.stderr[:2]) <= z_crit)
    assert abs(eff[1] - pop[1]) / est.stderr[1] >= z_crit + norm.ppf(0.99)


def test_drift_of_one_run_has_a_d_free_limit_at_lambda_bar_over_s():
    """docs/math/highdim.md#the-limit-d-to-infinity-at-lambda-bar-over-s: at lambda = 2/s, c = 1, B = 1, on M at
    (kappa, nu) = (0.3, 0.5), the (kappa, nu) components of F, of F + alpha D and of the drift of one run G,
    and mu_f / d, converge as d -> infinity like 1/d: the differences between successive decades
    d = 10^4, ..., 10^7 fall by a factor 10 (fitted slope of log |difference| against log d equal to -1 within
    0.02: the next order changes the ratio of successive differences by O(10/d) <= 1e-3 here, and the
    quadrature's error, ~1e-13, is 1e-7 of the smallest difference), while mu_f itself grows like d: the
    5-overlap ODE has no d-free limit, the slow drift on M has one."""
    from numerics.highdim import fast_mode, per_run_drift
    from numerics.highdim.fluctuations import population_velocity
    from theory.highdim import effective_drift

    x = np.array([0.3, 0.5, 0.0, 0.0, 0.0])
    ds = [10**4, 10**5, 10**6, 10**7]
    rows = []
    for d in ds:
        problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=2.0 / np.sqrt(d / 2.0))
        mode = fast_mode(problem, x, c=1.0, batch_size=1)
        rows.append(np.concatenate([population_velocity(problem, x)[0, :2],
                                    effective_drift(problem, x, alpha=1.0 / d, batch_size=1)[:2],
                                    per_run_drift(problem, x, c=1.0, batch_size=1)[:2], [mode.mu / d]]))
    rows = np.array(rows)
    diffs = np.abs(np.diff(rows, axis=0))                    # (3, 7)
    mid = np.sqrt(np.array(ds[:-1]) * np.array(ds[1:]))
    for j in range(rows.shape[1]):
        slope = np.polyfit(np.log(mid), np.log(diffs[:, j]), 1)[0]
        assert abs(slope + 1.0) <= 0.02, (j, slope, diffs[:, j])


def test_integration_failure_raises(monkeypatch):
    """A right-hand side that turns to NaN past tau = 0.05: LSODA reports success over NaN states, so the effective
    flow checks the trajectory and raises RuntimeError naming where and with which method, instead of returning it."""
    module = importlib.import_module("numerics.highdim.effective_flow")  # the module, not the function
    real = module.effective_drift

    def drift(task, x, *, alpha, batch_size, step):
        out = real(task, x, alpha=alpha, batch_size=batch_size, step=step)
        return out if np.isclose(task.lam, 0.5) else out * np.nan

    monkeypatch.setattr(module, "effective_drift", drift)
    problem = ScheduledProblem(d=100, eps=0.1, lam=lambda t: 0.5 if t < 0.05 else 0.6)
    with pytest.raises(RuntimeError, match="effective-ODE integration failed at t=.*method='LSODA'"):
        effective_flow(problem, (0.3, 0.2, 0.0, 0.0, 0.0), c=0.1, batch_size=1, t_end=0.2)


@pytest.mark.parametrize("lam", [0.3, 0.8, 1.4, 2.0])
def test_paper_setting_drift_on_the_trapezoid_step_0_4(lam):
    """The effective drift of the paper's SGD setting (d = 80, B = 5, alpha = 1e-3) on the trapezoid step 0.4, which
    the figures' effective ODEs take, is within 1e-7 of step 0.1 along the schedule's lambda in [0.3, 2]
    (docs/math/highdim.md#the-papers-sgd-setting: measured <= 6.9e-8; step 0.8 is off by more, so the bound binds)."""
    problem = Problem(d=80, eps=0.1, lam=lam)
    for state in STATES + [(0.5, 0.5, 0.0, 0.0, 0.0)]:
        fine = effective_drift(problem, state, alpha=1e-3, batch_size=5, step=0.1)
        assert np.max(np.abs(effective_drift(problem, state, alpha=1e-3, batch_size=5, step=0.4) - fine)) <= 1e-7


def test_effective_flow_rejects_a_bad_quadrature_step():
    with pytest.raises(ValueError, match="quadrature_step"):
        effective_flow(Problem(d=100, eps=0.1, lam=0.5), STATES[0], c=0.5, batch_size=1, t_end=1.0, quadrature_step=0.0)
