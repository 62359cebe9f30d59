"""Online SGD at step c/d against its deterministic predictions (docs/math/highdim.md#fluctuations-of-the-fast-overlap).
Run: python benchmarks/bench_highdim.py [--paper-only]

1. lambda = 2/s, c = 0.5, B = 1, start (kappa, nu) = (0.2, 0.2) on M, flow time 2, 200 runs, at
   d = 10^3 and 10^4: the largest error of the mean kappa, nu against the population flow, the
   effective ODE F + alpha D and the moment closure (the table of the docs page).
2. The paper's SGD setting (d = 80, B = 5, alpha = 1e-3 so c = 0.08, lambda_t = 2 / (1 + 1e-4 t),
   200,000 steps) from the fixed start (0.2, 0.2, 0, 0, 0), 100 runs: the same three errors along
   the whole run (101 logged times).
Prints CPU time of each part (1 BLAS thread).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics import PAPER_SGD, PaperSchedule
from numerics.highdim import compare_with_sgd
from theory import PAPER_GAMMA, PAPER_L, Problem

START = (0.2, 0.2, 0.0, 0.0, 0.0)


def report(label, comparison, seconds):
    errs = ", ".join(f"{k} {v:.4f}" for k, v in comparison.sup_error.items())
    se = float(np.max(comparison.sgd_stderr[:2]))
    print(f"{label}: max |mean SGD - prediction| over kappa, nu: {errs} "
          f"(largest SGD stderr {se:.5f}; {comparison.n_runs} runs; CPU {seconds:.0f} s)")


def convergence():
    for d in (1_000, 10_000):
        problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=2.0 / np.sqrt(d / 2.0))
        start = time.process_time()
        out = compare_with_sgd(problem, START, c=0.5, batch_size=1, t_end=2.0, n_runs=200,
                               rng=np.random.default_rng(d))
        report(f"d = {d}, lambda = 2/s, c = 0.5, B = 1", out, time.process_time() - start)


def paper():
    c = PAPER_SGD
    problem = Problem(d=c.d, L=c.L, gamma=c.gamma, eps=c.eps, lam=c.lam0)
    start = time.process_time()
    out = compare_with_sgd(problem, START, c=c.alpha * c.d, batch_size=c.batch_size,
                           t_end=c.alpha * c.n_steps, n_runs=100, rng=np.random.default_rng(80),
                           n_log=100, step_schedule=PaperSchedule(lam0=c.lam0, rate=c.schedule_rate))
    report("paper's SGD setting (d = 80, B = 5, alpha = 1e-3, schedule)", out, time.process_time() - start)
    pop, eff, clo = (out.sup_error[k] for k in ("population", "effective", "closure"))
    print(f"  the effective ODE is {pop / eff:.2f}x closer than the population flow; the closure {pop / clo:.2f}x")


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        if "--paper-only" not in sys.argv:
            convergence()
        paper()
