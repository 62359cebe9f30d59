"""The largest step of online SGD at step alpha = c/d (docs/math/highdim.md#the-largest-step): the
aligned fixed point of the drift of one run, its loss of stability at c_crit, and the exact reduced
simulator on both sides of it."""

from __future__ import annotations

import numpy as np

from numerics.montecarlo.statistics import bonferroni_z

from ..checks import z_family_check
from ..framework import Check, claim

ORDER = 97
_FAMILY = 1e-3
_D = 1_000
_LAM_BAR = 1.0                   # lambda = lambda_bar / s
_SIDES = (0.8, 1.25)             # c / c_crit below and above the critical step
_C_FIXED = 2.0                   # the fixed point checked quantitatively (fast-mode shift ~ 0.3 in kappa)
_C_TOL = 0.1                     # c_crit to 10%: 0.8 (1.1) < 1 < 1.25 (0.9), the sides stay on their sides
_RUNS = {True: 60, False: 200}
_T = {True: 25.0, False: 40.0}   # flow time: > 2.5 relaxation times of the slowest mode (rate >= 0.11)


def _final(problem, start, c, n_runs, t_end, rng):
    """Final kappa, nu, theta of ``n_runs`` reduced SGD runs at step c/d from ``start`` on M."""
    from numerics import online_sgd_reduced
    from theory import Overlaps

    init = Overlaps(**{k: np.full(n_runs, x) for k, x in zip(("kappa", "nu", "theta", "eta", "rho"),
                                                            (*start, 0.0, 0.0, 0.0))})
    n = int(round(t_end * _D / c))
    run = online_sgd_reduced(problem, init, alpha=c / _D, n_steps=n, batch_size=1, rng=rng, log_every=n)
    return {k: getattr(run, k)[-1] for k in ("kappa", "nu", "theta")}


def step_rows(n_runs, t_end, rng):
    """c_crit, the fixed points at c = 2 and at c_crit, and the final overlaps of reduced SGD: at c = 2
    from its fixed point, at 0.8 and 1.25 c_crit from (0.9, 0.9) on M."""
    from numerics.highdim import aligned_fixed_point, critical_step, fixed_point_branch
    from theory import PAPER_GAMMA, PAPER_L, Problem

    problem = Problem(d=_D, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=_LAM_BAR / np.sqrt(_D / 2.0))
    crit = critical_step(problem, batch_size=1, c_start=0.5, factor=4.0, c_tol=_C_TOL)
    fixed = fixed_point_branch(problem, [_C_FIXED], batch_size=1)[0]
    end = aligned_fixed_point(problem, c=crit.c_crit, batch_size=1, start=(crit.below.kappa, crit.below.nu))
    streams = rng.spawn(3)
    at_fixed = _final(problem, (fixed.kappa, fixed.nu), _C_FIXED, n_runs, t_end, streams[0])
    sides = [_final(problem, (0.9, 0.9), f * crit.c_crit, n_runs, t_end, r) for f, r in zip(_SIDES, streams[1:])]
    return crit, fixed, end, at_fixed, sides


def _z(x, expected):
    return (float(np.mean(x)) - expected) / (float(np.std(x, ddof=1)) / np.sqrt(len(x)))


@claim("highdim-largest-step",
       "Online SGD at step c/d keeps an aligned stable state up to a critical c: the fixed point of the drift "
       "of one run (the fast theta-fluctuation averaged in discrete time) is where the runs settle, with the "
       "predicted s^2 Var(theta); at 0.8 c_crit the runs stay aligned, at 1.25 c_crit nu falls below every "
       "aligned fixed point")
def highdim_largest_step(quick: bool, rng) -> Check:
    crit, fp, end, at_fixed, (stay, lost) = step_rows(_RUNS[quick], _T[quick], rng)
    s2 = _D / 2.0
    z = [_z(at_fixed["kappa"], fp.kappa), _z(at_fixed["nu"], fp.nu),
         _z(s2 * at_fixed["theta"] ** 2, fp.s2_theta_variance)]
    m = len(z) + 2
    z_crit = bonferroni_z(_FAMILY, m)
    # one-sided: nu decreases along the branch, so its end (c_crit) is the smallest nu of an aligned state
    z_sides = [_z(stay["nu"], end.nu), _z(lost["nu"], end.nu)]
    sides_ok = z_sides[0] > z_crit and z_sides[1] < -z_crit
    return z_family_check(
        method=f"numerics.highdim.critical_step (d = {_D}, lambda = 1/s, B = 1, to {_C_TOL:.0%}) and "
               f"numerics.online_sgd_reduced, {_RUNS[quick]} runs to flow time {_T[quick]:g}: at c = {_C_FIXED:g} "
               "from the predicted fixed point, final kappa, nu, s^2 theta^2 against "
               "numerics.highdim.aligned_fixed_point; at 0.8 and 1.25 c_crit from (0.9, 0.9) on M, final nu "
               "against the branch's end",
        z_scores=z, z_crit=z_crit,
        measured_text=(f"c_crit = {crit.c_crit:.2f} ({crit.kind}); at c = {_C_FIXED:g}: predicted (kappa*, nu*) = "
                       f"({fp.kappa:.4f}, {fp.nu:.4f}), s^2 Var(theta) = {fp.s2_theta_variance:.3f}; measured "
                       f"({np.mean(at_fixed['kappa']):.4f}, {np.mean(at_fixed['nu']):.4f}), "
                       f"{s2 * np.mean(at_fixed['theta'] ** 2):.3f}; mean nu at 0.8 / 1.25 "
                       f"c_crit: {np.mean(stay['nu']):.3f} / {np.mean(lost['nu']):.3f}, branch's end {end.nu:.3f} "
                       f"(z = {z_sides[0]:.1f} / {z_sides[1]:.1f})"),
        derivation=f"Bonferroni over {m} z-tests (kappa, nu, s^2 theta^2 at c = {_C_FIXED:g}, two-sided; nu at 0.8 "
                   f"and 1.25 c_crit above / below the branch's end, one-sided), family-wise false-failure rate "
                   f"{_FAMILY}; the stationary mean over runs differs from one run's fixed point by O(c/d)",
        details={"z_sides": z_sides, "c_crit": crit.c_crit, "kind": crit.kind,
                 "fixed_point": [fp.kappa, fp.nu, fp.s2_theta_variance], "branch_end_nu": end.nu},
        failure=None if sides_ok else "WRONG SIDE",
    )
