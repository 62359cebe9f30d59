"""The exit of online SGD from the saddle's window against the window SDE with the noise covariance frozen
at the saddle and expanded about it (docs/math/highdim.md#the-state-dependence-of-the-window).
Run: python benchmarks/bench_highdim_window_expansion.py [--d 100,1000,10000] [--dt 0.0025] [--draws 4000]
[--sgd 1] [--second 0] [--c 0.5] [--batch 1] [--runs N]

lambda = 1/s, c = 0.5, B = 1, eps = 0, from the initial law on M. Per d:
1. (``--sgd 1``) reduced SGD runs (2,000 / 1,000 / 400 at d = 10^2 / 10^3 / 10^4, to flow time 6 / 8 / 9,
   logged every 0.01): the median exit time (bootstrap standard error) and the fraction off M at the exit
   radii |u| = 2.5 (R = 2.5 / sqrt(d)) and R = max(0.1, 2.5 / sqrt(d));
   ``--second 1`` adds an independent set at R = 0.1 by ``numerics.highdim.sgd_exit_times`` (1,000 / 400 / 200 runs);
2. ``numerics.highdim.escape_window`` (``--draws`` draws, step ``--dt``; "alpha" = SGD's step c/d, the
   discrete-time recursion) with C frozen at C_0 and expanded to order 1 and 2, at both radii.
``--c``, ``--batch``: another (c, B) (SGD runs seeded by (d, 3, int(10 c), B), ``--runs`` of them, to flow time 8).
Prints CPU time per line.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics import online_sgd_reduced
from numerics.dynamics.initial import sample_initial_overlaps
from numerics.highdim import escape_window, median_standard_error, sgd_exit_times
from theory import PAPER_GAMMA, PAPER_L, Problem

C = 0.5
RUNS = {100: (2000, 6.0, 1000), 1000: (1000, 8.0, 400), 10000: (400, 9.0, 200)}


def _arg(name, default, cast):
    if name in sys.argv:
        return [cast(x) for x in sys.argv[sys.argv.index(name) + 1].split(",")]
    return default


def _line(label, times, on_m, t0):
    f = float(np.mean(~on_m))
    se = median_standard_error(times, np.random.default_rng(1))
    print(f"  {label}: median exit {np.median(times):.3f} +- {se:.3f}; off M {f:.3f} +- "
          f"{np.sqrt(f * (1 - f) / on_m.size):.3f} (of {on_m.size} exited); CPU {time.process_time() - t0:.1f} s",
          flush=True)


def sgd_exits(problem, radii, n, t_max, c=C, batch_size=1):
    """Exit times and on-M flags (among the runs that exit) of one set of reduced SGD runs, per radius."""
    d, alpha = problem.d, c / problem.d
    every = max(1, int(round(0.01 / alpha)))
    seed = [d, 2, 20261201] if (c, batch_size) == (C, 1) else [d, 3, int(10 * c), batch_size]
    init_rng, run_rng = np.random.default_rng(np.random.SeedSequence(seed)).spawn(2)
    init = sample_initial_overlaps(d, n, init_rng, on_manifold=True)
    run = online_sgd_reduced(problem, init, alpha=alpha, n_steps=every * int(np.ceil(t_max / (every * alpha))),
                             batch_size=batch_size, rng=run_rng, log_every=every)
    on, off = np.hypot(np.asarray(run.kappa), np.asarray(run.nu)), np.hypot(np.asarray(run.theta), np.asarray(run.eta))
    out = {}
    for R in radii:
        hit = np.maximum(on, off) >= R
        first, left = np.argmax(hit, axis=0), hit.any(axis=0)
        times = np.where(left, np.asarray(run.time)[first], np.inf)
        out[R] = times, (on[first, np.arange(n)] >= off[first, np.arange(n)])[left]
    return out


def main():
    draws, sgd, second = _arg("--draws", [4000], int)[0], _arg("--sgd", [1], int)[0], _arg("--second", [0], int)[0]
    dts = _arg("--dt", ["0.0025"], str)
    c, batch = _arg("--c", [C], float)[0], _arg("--batch", [1], int)[0]
    for d in _arg("--d", [100, 1000, 10000], int):
        problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0, lam=1.0 / np.sqrt(d / 2.0))
        radii = sorted({2.5 / np.sqrt(d), max(0.1, 2.5 / np.sqrt(d))})
        n, t_max, n_second = RUNS.get(d, (400, 9.0, 200))
        if (c, batch) != (C, 1):
            n, t_max = _arg("--runs", [400], int)[0], 8.0
        print(f"d = {d}, c = {c:g}, B = {batch}, exit radii {np.round(radii, 4)}")
        if sgd:
            t0 = time.process_time()
            for R, (times, on_m) in sgd_exits(problem, radii, n, t_max, c, batch).items():
                _line(f"SGD, R = {R:.4f}, {n} runs", times, on_m, t0)
        if second:
            t0 = time.process_time()
            rng = np.random.default_rng(np.random.SeedSequence([d, 18, 20261201]))
            times, on_m = sgd_exit_times(problem, c=c, batch_size=batch, n_runs=n_second, rng=rng, exit_radius=radii[-1],
                                         t_max=t_max + 5.0)
            _line(f"SGD (second set), R = {radii[-1]:.4f}, {n_second} runs", times, on_m[np.isfinite(times)], t0)
        for dt_text in dts:
            dt = c / d if dt_text == "alpha" else float(dt_text)
            for R in radii:
                for order in (None, 1, 2):
                    t0 = time.process_time()
                    w = escape_window(problem, c=c, batch_size=batch, rng=np.random.default_rng(np.random.SeedSequence([d, 7, draws])),
                                      n_samples=draws, dt=dt, exit_radius=R, expansion_order=order)
                    _line(f"window, order {order}, dt {dt:g}, R = {R:.4f}", w.exit_times, w.on_m, t0)


if __name__ == "__main__":
    main()
