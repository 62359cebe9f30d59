"""How the error of the effective ODE and of the moment closure against mean online SGD depends on
c and d (docs/math/highdim.md#convergence-in-d-and-in-c).
Run: python benchmarks/bench_highdim_rates.py [--d 100,1000,10000] [--c 0.125,0.25,0.5,1] [--runs 200]
[--seed 2]; ``--runs`` one number, or one per d (same order as ``--d``); runs seeded [seed, d, 1000 c].

lambda = 2/s, B = 1, start (kappa, nu) = (0.2, 0.2) on M, flow time 1 (d / c steps), 4 logged
times. For each (d, c): the signed error of the mean kappa and nu at the last logged time against
the effective ODE F + (c/d) D, the moment closure, the continuous-time closure (without the
discrete-time term, docs/math/highdim.md#the-discrete-time-variance-of-the-fast-mode) and the closure
with D and C averaged over the fast mode, with the SGD standard error; then per d the
weighted least-squares slope of log|error| against log c (its standard error from the delta method,
se(log|e|) = se(e)/|e|, when |e| > 3 se), and per c the slope against log d. Prints CPU time
(1 BLAS thread). Then per prediction and c the fit of the signed errors to a (d / 1000)^(-p).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics.highdim import compare_with_sgd
from theory import PAPER_GAMMA, PAPER_L, Problem

START = (0.2, 0.2, 0.0, 0.0, 0.0)
NAMES = ("effective", "closure", "continuous_closure", "averaged_closure")


def _arg(name, default, cast):
    if name in sys.argv:
        return [cast(x) for x in sys.argv[sys.argv.index(name) + 1].split(",")]
    return default


def slope(x, e, se):
    """Weighted least squares of log|e| on log x: (slope, its standard error) over the points
    with |e| > 3 se, or (nan, nan) if fewer than 2."""
    keep = np.abs(e) > 3 * se
    if keep.sum() < 2:
        return float("nan"), float("nan")
    X, y, w = np.log(x[keep]), np.log(np.abs(e[keep])), (np.abs(e[keep]) / se[keep]) ** 2
    A = np.column_stack([np.ones_like(X), X])
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    beta = cov @ A.T @ (w * y)
    return float(beta[1]), float(np.sqrt(cov[1, 1]))


def power_fit(ds, e, se):
    """Weighted least squares of the signed errors e (n_d, 2) of kappa and nu on a_i (d / 1000)^(-p),
    one amplitude per overlap and a shared p, by profiling chi^2 over p on a grid: (p, low, high,
    chi2_min, dof, chi2 at p = 0), [low, high] the interval where chi^2 <= chi2_min + 1 (a 68%
    interval for one parameter)."""
    x0, grid = np.asarray(ds, dtype=float) / 1000.0, np.linspace(-0.5, 3.0, 3501)
    w = 1.0 / np.asarray(se) ** 2
    chi = []
    for p in grid:
        x = x0 ** (-p)
        a = np.sum(w * x[:, None] * e, axis=0) / np.sum(w * x[:, None] ** 2, axis=0)
        chi.append(float(np.sum(w * (e - a * x[:, None]) ** 2)))
    chi = np.array(chi)
    k, ok = int(np.argmin(chi)), grid[chi <= chi.min() + 1.0]
    return grid[k], ok.min(), ok.max(), chi[k], e.size - 3, chi[np.argmin(np.abs(grid))]


def measure(ds, cs, runs, seed):
    rows = {}
    for d, runs in zip(ds, runs if len(runs) == len(ds) else runs * len(ds)):
        problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=2.0 / np.sqrt(d / 2.0))
        for c in cs:
            start = time.process_time()
            out = compare_with_sgd(problem, START, c=c, batch_size=1, t_end=1.0, n_runs=runs,
                                   rng=np.random.default_rng([seed, d, int(1000 * c)]),
                                   predictions=NAMES)
            err = {k: out.sgd_mean[:2, -1] - y[:2, -1] for k, y in out.predictions.items()}
            rows[d, c] = (err, out.sgd_stderr[:2, -1])
            text = ", ".join(f"{k} {e[0]:+.5f} {e[1]:+.5f}" for k, e in err.items())
            print(f"d = {d:>6}, c = {c:<5}: error at t = 1 (kappa, nu): {text} (SGD stderr "
                  f"{out.sgd_stderr[0, -1]:.5f} {out.sgd_stderr[1, -1]:.5f}; {runs} runs; "
                  f"CPU {time.process_time() - start:.0f} s)", flush=True)
    return rows


def fits(rows, ds, cs):
    for name in NAMES:
        for i, comp in enumerate(("kappa", "nu")):
            for d in ds:
                e = np.array([rows[d, c][0][name][i] for c in cs])
                se = np.array([rows[d, c][1][i] for c in cs])
                p, pse = slope(np.array(cs), e, se)
                print(f"{name:9} {comp:5} d = {d:>6}: slope of log|error| in log c = {p:.2f} +- {pse:.2f}")
            for c in cs:
                e = np.array([rows[d, c][0][name][i] for d in ds])
                se = np.array([rows[d, c][1][i] for d in ds])
                p, pse = slope(np.array(ds, dtype=float), e, se)
                print(f"{name:9} {comp:5} c = {c:<5}: slope of log|error| in log d = {p:.2f} +- {pse:.2f}")
        for c in cs:
            e = np.array([rows[d, c][0][name] for d in ds])
            se = np.array([rows[d, c][1] for d in ds])
            p, low, high, chi2, dof, chi0 = power_fit(ds, e, se)
            print(f"{name:9} c = {c:<5}: error ~ d^-p, p = {p:.2f} [{low:.2f}, {high:.2f}], chi2 {chi2:.1f} "
                  f"on {dof} dof (p = 0: {chi0:.1f})")


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    ds = _arg("--d", [100, 1_000, 10_000], int)
    cs = _arg("--c", [0.125, 0.25, 0.5, 1.0], float)
    runs, seed = _arg("--runs", [200], int), _arg("--seed", [2], int)[0]
    if len(runs) not in (1, len(ds)):
        raise SystemExit(f"--runs: one number or one per d ({len(ds)}), got {len(runs)}")
    with threadpool_limits(limits=1):
        fits(measure(ds, cs, runs, seed), ds, cs)
