"""One run's spread under online SGD at step c/d (docs/math/highdim.md#one-runs-fluctuations): the moment
closure's covariance with the Jacobian of the mean's whole drift against the run-to-run standard deviation
of the exact reduced simulator, and the covariance with the Jacobian of F alone rejected."""

from __future__ import annotations

import numpy as np

from numerics.montecarlo.statistics import bonferroni_z, power_z, sd_with_stderr

from ..checks import z_family_check
from ..framework import Check, claim

ORDER = 96
_FAMILY = 1e-3
_POWER = 0.99
# the stated accuracy of the prediction: its spread keeps a relative error of order c that does not vanish
# with d (the fast variance's dependence on the slow state, left out), measured 2-8% at c = 1 over
# d = 10^3-10^5 and up to 15% at c = 2, 23% at c = 4 (docs/math/highdim.md#the-covariance-with-the-jacobian-of-the-mean-drift);
# at this setting (d = 10^3, c = 1) 2-8%, so the claim is "within 15%"
_REL = 0.15
_SETTING = dict(d=1_000, lam_bar=2.0, c=1.0, batch_size=1, start=(0.2, 0.2, 0.0, 0.0, 0.0), t_end=1.0)
# full mode sized for power 0.99 against each of the two overestimates of the covariance with the Jacobian of F
# (not only the larger one, which the power condition below needs): at 1,500 runs its excess z was (7.61, 17.08)
# for (kappa, nu) (seed 0), z grows as sqrt(n), so kappa's reaches z_crit + z_0.99 = 3.29 + 2.33 at
# n = 1500 (5.62 / 7.61)^2 = 818 runs; there nu's is expected at 12.6 (underpowered with probability ~1e-12)
_RUNS = {True: 400, False: 820}


def spread_against_sgd(n_runs, rng):
    """Run-to-run standard deviation of kappa, nu at flow time 1 (delta-method standard error) and the
    closure's sqrt(Sigma_ii) with the Jacobian of the mean's drift and with that of F:
    (sd (2,), se (2,), predicted (2,), population-Jacobian (2,))."""
    from numerics import online_sgd_reduced
    from numerics.dynamics.ode import OdeOptions
    from numerics.highdim import moment_closure_flow
    from theory import PAPER_GAMMA, PAPER_L, Overlaps, Problem

    f = _SETTING
    d, c, B = f["d"], f["c"], f["batch_size"]
    problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=f["lam_bar"] / np.sqrt(d / 2.0))
    n = int(round(f["t_end"] * d / c))
    start = Overlaps(**{k: np.full(n_runs, x) for k, x in zip(("kappa", "nu", "theta", "eta", "rho"), f["start"])})
    run = online_sgd_reduced(problem, start, alpha=c / d, n_steps=n, batch_size=B, rng=rng, log_every=n)
    sd, se = sd_with_stderr(np.stack([run.kappa[-1], run.nu[-1]]), axis=1)
    # rtol 1e-3, atol 1e-7: both closures' sd within 1.4e-5 relative of rtol 1e-10, atol 1e-13 (measured at this
    # setting: 7.4e-6 with the mean's drift, 1.3e-5 with F's), 6e-4 of the runs' standard error (~2.5% of the sd
    # at 820 runs), at 90 right-hand sides each instead of 300 and 285 at rtol 1e-5, atol 1e-9
    ode = OdeOptions(method="LSODA", rtol=1e-3, atol=1e-7)
    pred = {}
    for jac in ("mean_drift", "population"):
        out = moment_closure_flow(problem, f["start"], c=c, batch_size=B, t_end=f["t_end"], t_eval=[f["t_end"]],
                                  ode=ode, covariance_jacobian=jac)
        pred[jac] = np.sqrt(np.diagonal(out.cov[:2, :2, -1]))
    return sd, se, pred["mean_drift"], pred["population"]


def excess_z(sd, se, predicted):
    """z-scores of the relative error beyond _REL: max(|sd - p| - _REL p, 0) / se (one per component)."""
    return np.maximum(np.abs(sd - predicted) - _REL * predicted, 0.0) / se


@claim("highdim-one-run-spread",
       "One run's spread under online SGD at step c/d: the moment closure whose covariance equation has the "
       "Jacobian of the mean's whole drift (F + alpha D + the fluctuation term) predicts the run-to-run standard "
       "deviation of kappa and nu to within 15%; with the Jacobian of F alone it overestimates it by 30-55%",
       cost=0.77)  # slr reproduce's cost at load ~1.8 (3efa497) scaled by the claim's own before/after, measured back to back
def highdim_one_run_spread(quick: bool, rng) -> Check:
    sd, se, new, old = spread_against_sgd(_RUNS[quick], rng)
    z, z_old = excess_z(sd, se, new), excess_z(sd, se, old)
    z_crit = bonferroni_z(_FAMILY, len(z))
    return z_family_check(
        method=f"numerics.online_sgd_reduced, {_RUNS[quick]} runs from (kappa, nu) = (0.2, 0.2) on M, d = 1000, "
               "lambda = 2/s, c = 1, B = 1, to flow time 1: the standard deviation of kappa and nu over runs "
               "(delta-method standard error) against sqrt(Sigma_ii) of numerics.highdim.moment_closure_flow "
               "(covariance_jacobian='mean_drift')",
        z_scores=z.tolist(), z_crit=z_crit,
        measured_text=(f"SGD sd ({sd[0]:.4f}, {sd[1]:.4f}), predicted ({new[0]:.4f}, {new[1]:.4f}), with the "
                       f"Jacobian of F ({old[0]:.4f}, {old[1]:.4f}): its excess z up to {np.max(z_old):.1f}"),
        derivation=f"one-sided z-tests of the error beyond {_REL:.0%} of the prediction, Bonferroni over {len(z)}, "
                   f"family-wise false-failure rate {_FAMILY}; power: the covariance with the Jacobian of F must "
                   f"be rejected (some excess z >= z_crit + z_{_POWER})",
        details={"z_population_jacobian": z_old.tolist(), "sgd_sd": sd.tolist(), "predicted": new.tolist()},
        failure="UNDERPOWERED" if np.max(z_old) < z_crit + power_z(_POWER) else None,
    )
