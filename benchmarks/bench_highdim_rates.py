"""How the error of the effective ODE and of the moment closure against mean online SGD depends on
c and d (docs/math/highdim.md#convergence-in-d-and-in-c).
Run: python benchmarks/bench_highdim_rates.py [--d 100,1000,10000] [--c 0.125,0.25,0.5,1] [--runs 200]
[--seed 2] [--B 1] [--predictions closure,averaged_closure] [--json out.json]; ``--runs`` one number, or one
per d (same order as ``--d``); runs seeded [seed, d, 1000 c] (B = 1) or [seed, d, 1000 c, B].

lambda = 2/s, minibatch B (default 1), start (kappa, nu) = (0.2, 0.2) on M, flow time 1 (d / c steps), 4 logged
times. For each (d, c): the signed error of the mean kappa and nu at the last logged time against
the predictions chosen by ``--predictions`` (default all four: the effective ODE F + (c/d) D, the moment
closure, the continuous-time closure without the discrete-time term,
docs/math/highdim.md#the-discrete-time-variance-of-the-fast-mode, and the closure with D and C averaged
over the fast mode), with the SGD standard error and the CPU time (1 BLAS thread). Then per prediction
and c the fit of the signed errors to a (d / 1000)^(-p)
(``numerics.montecarlo.rate_fits.power_law_fit``, 68% and 99.9% intervals).
One run's fluctuations (docs/math/highdim.md#one-runs-fluctuations): per (d, c) the run-to-run standard
deviation of kappa and nu at tau = 1 against the closure's sqrt(Sigma_ii), and per c the fitted exponent of
the standard deviation in d; per closure prediction its sqrt(Sigma_ii) and the z-score of SGD's standard
deviation against it (delta-method standard error; "mean_drift_closure": the covariance with the Jacobian
of the mean's whole drift, docs/math/highdim.md#the-covariance-with-the-jacobian-of-the-mean-drift). The size of the correction (docs/math/highdim.md#convergence-over-c-and-b):
per (d, c) the largest ratio over the logged times of |alpha D| and of the closure's whole correction
|alpha D + curvature term| to |F| in (kappa, nu), along the closure's mean.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from numerics.highdim import compare_with_sgd
from numerics.montecarlo.rate_fits import log_slope_fit, power_law_fit
from numerics.highdim.fluctuations import moment_closure_rhs, population_velocity
from theory import PAPER_GAMMA, PAPER_L, Problem
from theory.highdim import gradient_moments, second_order_drift

START = (0.2, 0.2, 0.0, 0.0, 0.0)
NAMES = ("effective", "closure", "continuous_closure", "averaged_closure", "mean_drift_closure")


def _arg(name, default, cast):
    if name in sys.argv:
        return [cast(x) for x in sys.argv[sys.argv.index(name) + 1].split(",")]
    return default


def correction_ratios(problem, out, c, batch_size, name="closure"):
    """Largest ratio over the logged times t > 0 of |alpha D| and of |alpha D + curvature term| to |F| in
    (kappa, nu), along the mean and covariance of the closure ``name`` (docs/math/highdim.md#convergence-over-c-and-b)."""
    alpha, iu = c / problem.d, np.triu_indices(5)
    r_d, r_all = 0.0, 0.0
    for j in range(1, out.t.size):
        x, cov = out.predictions[name][:, j], out.covariances[name][:, :, j]
        F = population_velocity(problem, x)[0]
        D = alpha * second_order_drift(gradient_moments(problem, tuple(x), check=False), tuple(x), batch_size)
        dx = moment_closure_rhs(problem, np.concatenate([x, cov[iu]]), alpha=alpha, batch_size=batch_size)[:5]
        r_d = max(r_d, np.linalg.norm(D[:2]) / np.linalg.norm(F[:2]))
        r_all = max(r_all, np.linalg.norm(dx[:2] - F[:2]) / np.linalg.norm(F[:2]))
    return r_d, r_all


def measure(ds, cs, runs, seed, batch_size, names):
    rows = {}
    for d, runs in zip(ds, runs if len(runs) == len(ds) else runs * len(ds)):
        problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=2.0 / np.sqrt(d / 2.0))
        for c in cs:
            start = time.process_time()
            key = [seed, d, int(1000 * c)] + ([] if batch_size == 1 else [batch_size])
            out = compare_with_sgd(problem, START, c=c, batch_size=batch_size, t_end=1.0, n_runs=runs,
                                   rng=np.random.default_rng(key), predictions=names)
            cpu = time.process_time() - start
            err = {k: out.sgd_mean[:2, -1] - y[:2, -1] for k, y in out.predictions.items()}
            closure = "closure" if "closure" in names else names[-1]
            rows[d, c] = dict(
                error={k: e.tolist() for k, e in err.items()}, stderr=out.sgd_stderr[:2, -1].tolist(),
                sd=out.sgd_sd[:2, -1].tolist(), sd_stderr=out.sgd_sd_stderr[:2, -1].tolist(),
                sd_closure=np.sqrt(np.diagonal(out.covariances[closure][:, :, -1]))[:2].tolist(),
                sd_predicted={k: np.sqrt(np.diagonal(v[:, :, -1]))[:2].tolist() for k, v in out.covariances.items()},
                ratios=correction_ratios(problem, out, c, batch_size, closure), runs=runs, cpu=cpu)
            r = rows[d, c]
            text = ", ".join(f"{k} {e[0]:+.5f} {e[1]:+.5f}" for k, e in err.items())
            print(f"d = {d:>6}, c = {c:<5}, B = {batch_size}: error at t = 1 (kappa, nu): {text} (SGD stderr "
                  f"{r['stderr'][0]:.5f} {r['stderr'][1]:.5f}); sd {r['sd'][0]:.5f} {r['sd'][1]:.5f} "
                  f"(+- {r['sd_stderr'][0]:.5f} {r['sd_stderr'][1]:.5f}), {closure} sd {r['sd_closure'][0]:.5f} "
                  f"{r['sd_closure'][1]:.5f}; max |alpha D|/|F| {r['ratios'][0]:.3f}, |correction|/|F| "
                  f"{r['ratios'][1]:.3f}; {runs} runs; CPU {cpu:.0f} s", flush=True)
    return rows


def fits(rows, ds, cs, names):
    fitted = {}
    for name in names:
        for c in cs:
            e = np.array([rows[d, c]["error"][name] for d in ds])
            se = np.array([rows[d, c]["stderr"] for d in ds])
            try:
                f68, f999 = (power_law_fit(ds, e, se, x0=1000.0, rate=r) for r in (0.3173, 1e-3))
            except ValueError as err:
                print(f"{name:9} c = {c:<5}: {err}")
                continue
            fitted[f"{name} c={c}"] = (f68.p, f68.low, f68.high, f999.low, f999.high, f68.chi2_min, f68.dof,
                                       f68.chi2_zero)
            print(f"{name:9} c = {c:<5}: error ~ d^-p, p = {f68.p:.2f} [{f68.low:.2f}, {f68.high:.2f}] "
                  f"(99.9%: [{f999.low:.2f}, {f999.high:.2f}]), chi2 {f68.chi2_min:.1f} on {f68.dof} dof "
                  f"(p = 0: {f68.chi2_zero:.1f})")
    for c in cs:
        for i, comp in enumerate(("kappa", "nu")):
            sd = np.array([rows[d, c]["sd"][i] for d in ds])
            se = np.array([rows[d, c]["sd_stderr"][i] for d in ds])
            q, qse = log_slope_fit(ds, sd, se)
            ratio = sd / np.array([rows[d, c]["sd_closure"][i] for d in ds])
            fitted[f"sd {comp} c={c}"] = (q, qse, ratio.tolist())
            print(f"sd of {comp:5} c = {c:<5}: ~ d^q, q = {q:.3f} +- {qse:.3f}; sd / closure sd per d: "
                  + ", ".join(f"{x:.3f}" for x in ratio))
            for name in rows[ds[0], c]["sd_predicted"]:
                pred = np.array([rows[d, c]["sd_predicted"][name][i] for d in ds])
                z = (sd - pred) / se
                fitted[f"sd z {name} {comp} c={c}"] = z.tolist()
                print(f"   {name}: predicted sd per d " + ", ".join(f"{x:.5f}" for x in pred)
                      + "; z = (SGD - predicted) / se: " + ", ".join(f"{x:+.1f}" for x in z))
    return fitted


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    ds = _arg("--d", [100, 1_000, 10_000], int)
    cs = _arg("--c", [0.125, 0.25, 0.5, 1.0], float)
    runs, seed = _arg("--runs", [200], int), _arg("--seed", [2], int)[0]
    batch_size = _arg("--B", [1], int)[0]
    names = tuple(_arg("--predictions", list(NAMES), str))
    if len(runs) not in (1, len(ds)):
        raise SystemExit(f"--runs: one number or one per d ({len(ds)}), got {len(runs)}")
    with threadpool_limits(limits=1):
        rows = measure(ds, cs, runs, seed, batch_size, names)
        fitted = fits(rows, ds, cs, names)
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump({"rows": {f"{d} {c}": r for (d, c), r in rows.items()}, "fits": fitted,
                       "B": batch_size, "seed": seed}, f, indent=1)
