"""The drift of one run and the aligned fixed point of online SGD at step c/d
(docs/math/highdim.md#the-drift-of-one-run, docs/math/highdim.md#the-largest-step)."""

import numpy as np
import pytest

from numerics.highdim import aligned_fixed_point, critical_step, fast_mode, fixed_point_branch, per_run_drift
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
