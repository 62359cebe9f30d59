"""Timing of the paper's four population experiments (docs/math/dynamics.md#the-papers-experiments, rows 1-4, 30 runs each, exact overlap
PGD), run together in one vectorised loop. Run: python benchmarks/bench_dynamics.py [--summary]

Prints wall and CPU time (goal: < 30 s in total on 2 cores), the per-step cost, the split between
the gradient (numerics.dynamics.risk_partials) and the update (numerics.dynamics.overlap_steps), and the alignment
summaries; with --summary also the measurements beyond Theorem 5 (numerics.dynamics.stalls).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics.dynamics.stalls import beyond_theorem_summary
from numerics.dynamics.experiments import PAPER_EXPERIMENTS, run_population_experiments, summarize_alignment
from numerics.dynamics.initial import sample_initial_overlaps
from numerics.dynamics.risk_partials import lambda_constants, partials
from numerics.dynamics.overlap_steps import pgd_step


def per_call(fun, n=3000):
    start = time.process_time()
    for _ in range(n):
        fun()
    return (time.process_time() - start) / n


def main():
    n_runs = sum(c.n_runs for c in PAPER_EXPERIMENTS)
    steps = sorted({c.n_steps for c in PAPER_EXPERIMENTS})
    loop_steps = steps[-1]
    wall, cpu = time.perf_counter(), time.process_time()
    results = run_population_experiments(PAPER_EXPERIMENTS, log_every=100)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"four population experiments ({n_runs} runs, {sum(c.n_steps * c.n_runs for c in PAPER_EXPERIMENTS):.3g} "
          f"run-steps, {loop_steps} vectorised steps): wall {wall:.1f} s, CPU {cpu:.1f} s "
          f"({1e6 * cpu / loop_steps:.0f} us CPU per vectorised step)")
    state = sample_initial_overlaps(400, n_runs, np.random.default_rng(0)).as_tuple()
    consts = lambda_constants(400.0, 10.0, np.sqrt(0.5), np.full((1, n_runs), 0.1)).at(0)
    grads = partials(consts, *state)
    t_grad = per_call(lambda: partials(consts, *state))
    t_map = per_call(lambda: pgd_step(4e-3, *state, *grads))
    print(f"  per step on {n_runs} runs: gradient {1e6 * t_grad:.0f} us, update {1e6 * t_map:.0f} us (CPU)")
    for r in results:
        s = summarize_alignment(r)
        print(f"  {s.name:22s} aligned {s.n_aligned:2d}/{s.n_runs} (delta = 0.05), first aligned step "
              f"median {np.median(s.first_aligned_step[s.aligned]) if s.n_aligned else float('nan'):.0f}; "
              f"final excess risk {s.final_excess_risk_mean:.5f} +- {s.final_excess_risk_stderr:.1e} "
              f"(oracle {s.oracle_excess_risk:.5f})")
    if "--summary" in sys.argv:
        for line in beyond_theorem_summary(results).lines():
            print("  " + line)


if __name__ == "__main__":
    main()
