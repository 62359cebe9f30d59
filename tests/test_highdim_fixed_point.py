"""The drift of one run and the aligned fixed point of online SGD at step c/d
(docs/math/highdim.md#the-drift-of-one-run, docs/math/highdim.md#the-largest-step)."""

import numpy as np
import pytest

from numerics.highdim import (aligned_fixed_point, critical_step, fast_mode, fixed_point_branch, per_run_drift,
                              per_run_drift_on_m)
from theory import Problem
from theory.highdim import effective_drift

GAMMA = np.sqrt(0.5)
D = 1000
PROBLEM = Problem(d=D, L=10, gamma=GAMMA, eps=0.1, lam=1.0 / np.sqrt(D / 2.0))


def test_per_run_drift_keeps_M_and_adds_order_c():
    """On M the off-M components of G vanish (F and D are odd off M, the fast mode lies off M): only
    round-off of the cancelling sigma points, 1e-12 of |G|. G - (F + alpha D) is the fast-mode term,
    proportional to alpha Var ~ c at small c: halving c halves it, up to its relative O(c) part
    (alpha |mu_f| ~ 0.7 c here: the ratio is 2 (1 + O(0.35 c)) at c = 0.02)."""
    x = np.array([0.8, 0.9, 0.0, 0.0, 0.0])
    G = per_run_drift(PROBLEM, x, c=0.5, batch_size=1)
    assert np.all(np.abs(G[2:]) <= 1e-12 * np.max(np.abs(G)))
    extra = [per_run_drift(PROBLEM, x, c=c, batch_size=1) - effective_drift(PROBLEM, x, alpha=c / D, batch_size=1)
             for c in (0.02, 0.01)]
    ratio = extra[0][:2] / extra[1][:2]
    assert np.all(np.abs(ratio - 2.0) <= 2.0 * 0.35 * 0.02 * 2), ratio


@pytest.mark.parametrize("d, lam_bar, c, point", [(1000, 1.0, 0.5, (0.3, 0.4)), (1000, 1.0, 2.0, (0.95, 0.97)),
                                                  (10_000, 1.0, 0.5, (0.05, 0.07)), (100, 2.0, 0.5, (0.8, 0.85)),
                                                  (80, 2.0 * np.sqrt(40.0), 0.08, (0.5, 0.5))])
def test_per_run_drift_on_m_is_the_average_over_both_sigma_points(d, lam_bar, c, point):
    """On M the one-point (kappa, nu) drift equals the two-point average of per_run_drift (the mirror symmetry
    (theta, eta, rho) -> -(theta, eta, rho), docs/math/highdim.md#the-drift-of-one-run-on-m) up to the rounding of
    the two quadratures, 1e-12 of |G| as in the test above (measured: <= 4 ulps), at quadrature steps 0.2 and 0.4."""
    problem = Problem(d=d, L=10, gamma=GAMMA, eps=0.1, lam=lam_bar / np.sqrt(d / 2.0))
    for step in (0.2, 0.4):
        full = per_run_drift(problem, (*point, 0.0, 0.0, 0.0), c=c, batch_size=1, quadrature_step=step)[:2]
        one = per_run_drift_on_m(problem, point, c=c, batch_size=1, quadrature_step=step)
        assert one.shape == (2,) and np.all(np.abs(one - full) <= 1e-12 * np.max(np.abs(full))), (one, full)


def test_per_run_drift_on_m_averages_both_points_when_the_fast_mode_is_not_off_m(monkeypatch):
    """A fast mode with a (kappa, nu) part breaks the mirror pairing: both sigma points are then evaluated, the
    same bits as per_run_drift."""
    import dataclasses

    import numerics.highdim.per_run as per_run

    true_mode = per_run.fast_mode

    def tilted(*args, **kwargs):
        mode = true_mode(*args, **kwargs)
        w = mode.w + np.array([0.3, -0.2, 0.0, 0.0, 0.0])
        return dataclasses.replace(mode, w=w / np.linalg.norm(w))

    monkeypatch.setattr(per_run, "fast_mode", tilted)
    full = per_run_drift(PROBLEM, (0.8, 0.9, 0.0, 0.0, 0.0), c=0.5, batch_size=1)[:2]
    one = per_run_drift_on_m(PROBLEM, (0.8, 0.9), c=0.5, batch_size=1)
    assert np.array_equal(one, full)
    monkeypatch.setattr(per_run, "fast_mode", true_mode)
    assert not np.array_equal(per_run_drift_on_m(PROBLEM, (0.8, 0.9), c=0.5, batch_size=1), one)


def test_fast_mode_is_the_theta_rho_relaxation():
    """At an aligned point the fast rate is of order d (the term s^2 theta^2 of R) and its mode lies
    off M, mostly along theta and rho; its step factor alpha |mu_f| is c times a d-free number."""
    modes = [fast_mode(Problem(d=d, L=10, gamma=GAMMA, eps=0.1, lam=1.0 / np.sqrt(d / 2.0)),
                       (0.95, 0.95, 0.0, 0.0, 0.0), c=1.0, batch_size=1) for d in (1000, 10_000)]
    for m in modes:
        assert np.all(m.w[:2] == 0) and abs(m.w[2]) > 0.5 and abs(m.w[4]) > 0.5
    rate_ratio = modes[1].mu / modes[0].mu
    assert 9.0 < rate_ratio < 11.0, rate_ratio  # proportional to d up to the gate's O(1/s) dependence


def test_fixed_point_tends_to_the_population_alignment():
    """(k*, v*) is the population flow's aligned fixed point; the correction moves it by O(c): the
    quadratic through (c, 1 - kappa*) at c = 0.025, 0.05, 0.1 extrapolates to 0 at c = 0 (its
    intercept is the O(c^3) remainder, below 10% of 1 - kappa* at the smallest c)."""
    cs = (0.025, 0.05, 0.1)
    branch = fixed_point_branch(PROBLEM, cs, batch_size=1)
    assert len(branch) == 3 and all(fp.stable and fp.residual <= 1e-9 for fp in branch)
    for name in ("kappa", "nu"):
        gap = [1.0 - getattr(fp, name) for fp in branch]
        intercept = np.polyfit(cs, gap, 2)[-1]
        assert gap[0] > 0 and abs(intercept) <= 0.1 * gap[0], (name, gap, intercept)


@pytest.mark.parametrize("kwargs,name", [(dict(c=0.0), "c"), (dict(c=-1.0), "c"),
                                         (dict(c=1.0, batch_size=0), "batch_size"),
                                         (dict(c=1.0, start=(1.0, 0.5)), "start")])
def test_bad_input_names_the_parameter(kwargs, name):
    kwargs = {"batch_size": 1, **kwargs}
    with pytest.raises(ValueError, match=name):
        aligned_fixed_point(PROBLEM, **kwargs)
    with pytest.raises(ValueError, match="c_values"):
        fixed_point_branch(PROBLEM, (1.0, 0.5), batch_size=1)
    with pytest.raises(ValueError, match="d"):
        per_run_drift(Problem(d=3, L=10, gamma=GAMMA, eps=0.1, lam=0.5), (0.5,) * 2 + (0.0,) * 3, c=1.0,
                      batch_size=1)


@pytest.mark.slow
def test_critical_step_brackets_the_loss_of_stability():
    """The fixed point is stable just below c_crit and unstable just above it (the bisection's
    bracket, 3 times its tolerance either side)."""
    crit = critical_step(PROBLEM, batch_size=1, c_start=2.0, factor=2.0, c_tol=0.01)
    start = (crit.below.kappa, crit.below.nu)
    lo, hi = (aligned_fixed_point(PROBLEM, c=crit.c_crit * (1 + s * 0.03), batch_size=1, start=start)
              for s in (-1, 1))
    assert lo.stable and not hi.stable, (crit, lo.instability, hi.instability)


@pytest.mark.slow
def test_critical_step_scales_with_the_batch_size():
    """c_crit(B) / B lies in [c_crit(1) / (1 + eps), c_crit(1)] (docs/math/highdim.md#the-largest-step-against-the-batch-size):
    G depends on (c, B) through c / B except for the fast mode's discrete factor 2 / (2 - alpha |mu_f|) and the
    population-gradient part of E[N], which raise the noise terms at B = 5 by the relative eps evaluated at the
    fixed point where stability is lost; more noise lowers c_crit, to first order by at most that fraction.
    Both ends widened by the bisection's relative accuracy 1e-3 on each c_crit."""
    from theory.highdim import gradient_moments

    B, tol = 5, 1e-3
    one = critical_step(PROBLEM, batch_size=1, c_start=0.5, factor=1.5, c_tol=tol)
    five = critical_step(PROBLEM, batch_size=B, c_start=0.5 * B, factor=1.5, c_tol=tol)
    end = aligned_fixed_point(PROBLEM, c=five.c_crit, batch_size=B, start=(five.below.kappa, five.below.nu))
    a = end.fast_contraction
    m = gradient_moments(PROBLEM, (end.kappa, end.nu, 0.0, 0.0, 0.0), check=False)
    eps_pg = (B - 1) * max(g @ g / (s - g @ g) for g, s in ((m.grad_k, m.s_kk), (m.grad_v, m.s_vv)))
    eps = max((2.0 - a / B) / (2.0 - a) - 1.0, eps_pg)
    ratio = five.c_crit / (B * one.c_crit)
    assert 1.0 / (1.0 + eps) - 2 * tol <= ratio <= 1.0 + 2 * tol, (one.c_crit, five.c_crit, eps)
    assert eps < 0.1, eps  # the bound is tight enough to exclude c_crit free of B (ratio 1/B)


@pytest.mark.slow
def test_reduced_sgd_on_both_sides_of_the_critical_step_at_batch_5():
    """At B = 5 (d = 10^3, lambda = 1/s), 200 reduced SGD runs from the aligned fixed point at c_crit (the
    branch's end) to flow time 15 (1.5 relaxation times of the slowest mode, rate 0.10): at 0.8 c_crit the mean nu rises above the end's nu* (towards the stable fixed
    point there), at 1.25 c_crit it falls below it (alignment lost). One-sided z-tests, Bonferroni over the two
    at family-wise false-failure rate 1e-3."""
    from numerics import online_sgd_reduced
    from numerics.montecarlo.statistics import bonferroni_z
    from theory import Overlaps

    B, n_runs, t_end = 5, 200, 15.0
    crit = critical_step(PROBLEM, batch_size=B, c_start=2.5, factor=1.5, c_tol=1e-2)
    end = aligned_fixed_point(PROBLEM, c=crit.c_crit, batch_size=B, start=(crit.below.kappa, crit.below.nu))
    z = []
    for side, rng in zip((0.8, 1.25), np.random.default_rng(18).spawn(2)):
        c = side * crit.c_crit
        init = Overlaps(**{k: np.full(n_runs, x) for k, x in zip(("kappa", "nu", "theta", "eta", "rho"),
                                                                 (end.kappa, end.nu, 0.0, 0.0, 0.0))})
        n = int(round(t_end * D / c))
        nu = online_sgd_reduced(PROBLEM, init, alpha=c / D, n_steps=n, batch_size=B, rng=rng, log_every=n).nu[-1]
        z.append((nu.mean() - end.nu) / (nu.std(ddof=1) / np.sqrt(n_runs)))
    z_crit = bonferroni_z(2e-3, 2)  # one-sided at 1e-3 / 2 each
    assert z[0] > z_crit and z[1] < -z_crit, (crit.c_crit, end.nu, z)


def test_limit_step_benchmark_reads_the_fixed_points_own_jacobian():
    """benchmarks/bench_highdim_limit_step.py prints the slowest mode at the last stable fixed point: its rate is
    the fixed point's own growth rate, the same Jacobian (``stability_jacobian``, step scaled with d) to the bit.
    At d = 1e5 the scaled step is 1e-6; a Jacobian taken with the unscaled 1e-5 moves the rate by ~5e-12 (measured
    at d = 1e6, c = 2) and so fails the exact comparison."""
    import importlib.util
    from pathlib import Path

    from numerics.highdim import limit_fixed_point

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_highdim_limit_step.py"
    spec = importlib.util.spec_from_file_location("bench_highdim_limit_step", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    d = 10**5
    problem = Problem(d=d, L=10, gamma=GAMMA, eps=0.1, lam=1.0 / np.sqrt(d / 2.0))
    start = limit_fixed_point(2.0, lam_bar=1.0, batch_size=1, eps=0.1)
    fp = aligned_fixed_point(problem, c=2.0, batch_size=1, start=(start.kappa, start.nu))
    rate, vector = bench._slowest_mode(problem, fp)
    assert rate == fp.growth_rate and vector.shape == (5,)


def test_critical_step_returns_the_fixed_point_at_c_crit_and_reuses_the_bracket():
    """The root search reuses the fixed points at its bracket's ends and hands back the one it computed at c_crit:
    ``at_crit`` is ``aligned_fixed_point`` at c_crit from ``below`` to the bit, and the search asks for no fixed
    point twice (panel (d) of the figure highdim_sgd: d = 10^3, lambda = 1/s, from c = 2 by ratio 2, to 10%)."""
    import numerics.highdim.fixed_point as module

    problem = Problem(d=D, L=10, gamma=GAMMA, eps=0.1, lam=1.0 / np.sqrt(D / 2.0))
    start = fixed_point_branch(problem, [2.0], batch_size=1)[0]
    calls = []
    real = module.aligned_fixed_point

    def spy(*args, **kwargs):
        calls.append((kwargs["c"], tuple(kwargs["start"])))
        return real(*args, **kwargs)

    module.aligned_fixed_point = spy
    try:
        crit = critical_step(problem, batch_size=1, c_start=2.0, factor=2.0, c_tol=0.1, start=(start.kappa, start.nu))
    finally:
        module.aligned_fixed_point = real
    assert len(calls) == len(set(calls)), calls
    assert crit.kind == "slow mode" and crit.at_crit is not None and crit.at_crit.c == crit.c_crit
    # handed the branch's fixed point at c_start, the search does not solve there again: Newton's method started at a
    # root returns it to the bit, eigenvalues included
    calls.clear()
    module.aligned_fixed_point = spy
    try:
        with_first = critical_step(problem, batch_size=1, c_start=2.0, factor=2.0, c_tol=0.1, first=start)
    finally:
        module.aligned_fixed_point = real
    assert 2.0 not in [c for c, _ in calls]
    assert (with_first.c_crit, with_first.kind, with_first.below.kappa, with_first.below.nu) == \
        (crit.c_crit, crit.kind, crit.below.kappa, crit.below.nu)
    assert np.array_equal(with_first.at_crit.eigenvalues, crit.at_crit.eigenvalues)
    restart = aligned_fixed_point(problem, c=2.0, batch_size=1, start=(start.kappa, start.nu))
    assert (restart.kappa, restart.nu, restart.residual) == (start.kappa, start.nu, start.residual)
    assert np.array_equal(restart.eigenvalues, start.eigenvalues)
    with pytest.raises(ValueError, match="first="):
        critical_step(problem, batch_size=1, c_start=2.5, first=start)
    again = aligned_fixed_point(problem, c=crit.c_crit, batch_size=1, start=(crit.below.kappa, crit.below.nu))
    assert (again.kappa, again.nu) == (crit.at_crit.kappa, crit.at_crit.nu)
    assert np.array_equal(again.eigenvalues, crit.at_crit.eigenvalues)


def test_newton_keeps_its_jacobian_while_it_contracts():
    """The damped Newton iteration keeps a Jacobian while each step cuts max |f| at least 4-fold: on a smooth map with
    a known root it reaches |f| <= 1e-9 (the tolerance of aligned_fixed_point) from a continuation-like start in fewer
    evaluations than Newton's method with a fresh Jacobian at every step (4 evaluations each), and a start where the
    kept Jacobian stalls still converges (a fresh one is taken)."""
    import numerics.highdim.fixed_point as module

    root = np.array([0.6, 0.3])

    def f(a):
        calls.append(1)
        return np.array([np.tanh(a[0] - root[0]) + 0.3 * (a[1] - root[1]) ** 2,
                         (a[1] - root[1]) * (1.0 + a[0] ** 2) + 0.2 * np.sin(a[0] - root[0])])

    for start, fresh_newton_calls in (((0.7, 0.35), 3 * 5), ((0.1, -0.5), 5 * 5)):
        calls = []
        a, residual = module._newton(f, np.array(start))
        assert residual <= module._ROOT_TOL and np.max(np.abs(a - root)) <= 1e-8
        assert len(calls) < fresh_newton_calls, len(calls)
