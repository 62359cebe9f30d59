"""The exit time of online SGD from the window of radius R = 0.1 around the saddle against log d
(docs/math/highdim.md#the-exit-time-against-log-d).
Run: python benchmarks/bench_highdim_exit_slope.py [--d 1000,3162,10000] [--runs 400,250,120] [--tmax 8]

lambda = 1/s, c = 0.5, B = 1, eps = 0.1, from the initial law on M. Per d: the median exit time of
``--runs`` reduced SGD runs (logged every 0.01, bootstrap standard error), of ``escape_window``
(8,000 draws) and of the linearisation (``linear_exit_time``); then the slopes in log d (weighted
least squares, standard error from the medians') and 1/(2 mu). Prints CPU time.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics.highdim import (escape_window, linear_exit_time, log_d_slope, median_standard_error,
                              sgd_exit_times)
from theory import PAPER_GAMMA, PAPER_L, Problem

C, R = 0.5, 0.1


def _arg(name, default, cast):
    if name in sys.argv:
        return [cast(x) for x in sys.argv[sys.argv.index(name) + 1].split(",")]
    return default


def main():
    ds, runs, t_max = _arg("--d", [1000, 3162, 10000], int), _arg("--runs", [400, 250, 120], int), _arg("--tmax", [8.0], float)[0]
    rows = []
    for d, n in zip(ds, runs):
        problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=1.0 / np.sqrt(d / 2.0))
        rngs = np.random.default_rng([d, 20251201]).spawn(3)
        t0 = time.process_time()
        win = escape_window(problem, c=C, rng=rngs[0], n_samples=8000, exit_radius=R)
        w_med, w_se = float(np.median(win.exit_times)), median_standard_error(win.exit_times, rngs[2])
        t1 = time.process_time()
        times, on_m = sgd_exit_times(problem, c=C, n_runs=n, rng=rngs[1], exit_radius=R, t_max=t_max)
        med, se = float(np.median(times)), median_standard_error(times, rngs[2])
        lin = linear_exit_time(problem, c=C, exit_radius=R)
        rows.append((d, med, se, w_med, w_se, lin, win.rate))
        print(f"d = {d}: SGD ({n} runs) median exit {med:.3f} +- {se:.3f} (censored {np.mean(~np.isfinite(times)):.3f}, "
              f"off M {np.mean(~on_m):.3f}); window {w_med:.3f} +- {w_se:.3f} (off M {win.slow_fraction:.3f}); "
              f"linear {lin:.3f}; mu {win.rate:.4f}; CPU window {t1 - t0:.1f} s, SGD {time.process_time() - t1:.1f} s",
              flush=True)
    d, med, se, w_med, w_se, lin, mu = (np.array(c) for c in zip(*rows))
    for label, m, s in (("SGD", med, se), ("window", w_med, w_se), ("linear", lin, np.ones_like(lin))):
        b, b_se = log_d_slope(d, m, s)
        print(f"slope in log d, {label}: {b:.3f}" + (f" +- {b_se:.3f}" if label != "linear" else ""))
    print(f"1/(2 mu): {np.round(1 / (2 * mu), 3)}")


if __name__ == "__main__":
    main()
