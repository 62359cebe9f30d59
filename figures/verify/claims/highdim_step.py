"""The largest step of online SGD at step alpha = c/d (docs/math/highdim.md#the-largest-step): the
aligned fixed point of the drift of one run, its loss of stability at c_crit, and the exact reduced
simulator on both sides of it."""

from __future__ import annotations

import types

import numpy as np

from numerics.montecarlo.statistics import bonferroni_z

from ..checks import z_family_check
from ..framework import Check, claim

ORDER = 97
_FAMILY = 1e-3
_C_TOL = 0.1  # c_crit to 10% (the figure's crit_tol): 0.8 (1.1) < 1 < 1.25 (0.9), the sides stay on their sides


def _z(x, expected):
    return (float(np.mean(x)) - expected) / (float(np.std(x, ddof=1)) / np.sqrt(len(x)))


@claim("highdim-largest-step",
       "Online SGD at step c/d keeps an aligned stable state up to a critical c: the fixed point of the drift "
       "of one run (the fast theta-fluctuation averaged in discrete time) is where the runs settle, with the "
       "predicted s^2 Var(theta); at 0.8 c_crit the runs stay aligned, at 1.25 c_crit nu falls below every "
       "aligned fixed point",
       figure="highdim_sgd", cost=0.23)  # measured in slr verify of the high-dimensional claims (2 workers, full mode, load ~8)
def highdim_largest_step(quick: bool, rng, figure) -> Check:
    # The figure's panel (d): c_crit, the fixed points at c = 2 and at c_crit, and the final overlaps of its
    # reduced SGD runs (rows: c = 2 from the fixed point, 0.8 and 1.25 c_crit from (0.9, 0.9) on M).
    p, data = figure.params, figure.data
    if p["crit_tol"] != _C_TOL or list(p["step_sides"]) != [0.8, 1.25]:
        raise RuntimeError(f"figure highdim_sgd: crit_tol={p['crit_tol']!r}, step_sides={p['step_sides']!r}; the claim "
                           f"needs {_C_TOL} and [0.8, 1.25]")
    c_crit, kind, (fp_kappa, fp_nu, fp_s2) = float(data["c_crit"]), str(data["c_crit_kind"]), data["fixed_point"]
    end_nu = float(data["crit_end"][1])
    (k2, n2, t2), stay, lost = data["step_runs_final"]
    at_fixed, stay, lost = {"kappa": k2, "nu": n2, "theta": t2}, {"nu": stay[1]}, {"nu": lost[1]}
    fp = types.SimpleNamespace(kappa=float(fp_kappa), nu=float(fp_nu), s2_theta_variance=float(fp_s2))
    crit, end = types.SimpleNamespace(c_crit=c_crit, kind=kind), types.SimpleNamespace(nu=end_nu)
    s2, n_runs, t_end, c_fixed = p["step_d"] / 2.0, p["step_runs"], p["step_t"], p["step_c_fixed"]
    z = [_z(at_fixed["kappa"], fp.kappa), _z(at_fixed["nu"], fp.nu),
         _z(s2 * at_fixed["theta"] ** 2, fp.s2_theta_variance)]
    m = len(z) + 2
    z_crit = bonferroni_z(_FAMILY, m)
    # one-sided: nu decreases along the branch, so its end (c_crit) is the smallest nu of an aligned state
    z_sides = [_z(stay["nu"], end.nu), _z(lost["nu"], end.nu)]
    sides_ok = z_sides[0] > z_crit and z_sides[1] < -z_crit
    return z_family_check(
        method=f"figure highdim_sgd, panel (d): numerics.highdim.critical_step (d = {p['step_d']}, lambda = 1/s, B = 1, "
               f"to {_C_TOL:.0%}) and numerics.online_sgd_reduced, {n_runs} runs to flow time {t_end:g}: at c = {c_fixed:g} "
               "from the predicted fixed point, final kappa, nu, s^2 theta^2 against "
               "numerics.highdim.aligned_fixed_point; at 0.8 and 1.25 c_crit from (0.9, 0.9) on M, final nu "
               "against the branch's end",
        z_scores=z, z_crit=z_crit,
        measured_text=(f"c_crit = {crit.c_crit:.2f} ({crit.kind}); at c = {c_fixed:g}: predicted (kappa*, nu*) = "
                       f"({fp.kappa:.4f}, {fp.nu:.4f}), s^2 Var(theta) = {fp.s2_theta_variance:.3f}; measured "
                       f"({np.mean(at_fixed['kappa']):.4f}, {np.mean(at_fixed['nu']):.4f}), "
                       f"{s2 * np.mean(at_fixed['theta'] ** 2):.3f}; mean nu at 0.8 / 1.25 "
                       f"c_crit: {np.mean(stay['nu']):.3f} / {np.mean(lost['nu']):.3f}, branch's end {end.nu:.3f} "
                       f"(z = {z_sides[0]:.1f} / {z_sides[1]:.1f})"),
        derivation=f"Bonferroni over {m} z-tests (kappa, nu, s^2 theta^2 at c = {c_fixed:g}, two-sided; nu at 0.8 "
                   f"and 1.25 c_crit above / below the branch's end, one-sided), family-wise false-failure rate "
                   f"{_FAMILY}; the stationary mean over runs differs from one run's fixed point by O(c/d)",
        details={"z_sides": z_sides, "c_crit": crit.c_crit, "kind": crit.kind,
                 "fixed_point": [fp.kappa, fp.nu, fp.s2_theta_variance], "branch_end_nu": end.nu},
        failure=None if sides_ok else "WRONG SIDE",
    )
