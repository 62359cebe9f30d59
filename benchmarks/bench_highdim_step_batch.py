"""The largest step of online SGD against the minibatch B (docs/math/highdim.md#the-largest-step-against-the-batch-size).
Run: python benchmarks/bench_highdim_step_batch.py [--batch 1,2,5] [--runs 200]

d = 10^3, lambda = 1/s, eps = 0.1. Per B: c_crit (``critical_step``, relative accuracy 1e-3), c_crit / B, the
fast mode's step factor a = alpha |mu_f| at the branch's end and the relative excess of the noise terms over
those at (c / B, 1), eps = max((2 - a / B) / (2 - a) - 1, (B - 1) |P G|^2 / (S - |P G|^2)). For the largest B:
``--runs`` reduced SGD runs at 0.8 and 1.25 c_crit from the branch's end and from (0.9, 0.9) on M, the mean nu
(standard error) and the share with nu > 0.1 at flow times 5, 15, 40. Prints CPU time.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics import online_sgd_reduced
from numerics.highdim import aligned_fixed_point, critical_step
from theory import PAPER_GAMMA, PAPER_L, Overlaps, Problem
from theory.highdim import gradient_moments

D = 1000


def _arg(name, default, cast):
    if name in sys.argv:
        return [cast(x) for x in sys.argv[sys.argv.index(name) + 1].split(",")]
    return default


def main():
    problem = Problem(d=D, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=1.0 / np.sqrt(D / 2.0))
    batches, n_runs = _arg("--batch", [1, 2, 5], int), _arg("--runs", [200], int)[0]
    t0 = time.process_time()
    for B in batches:
        crit = critical_step(problem, batch_size=B, c_start=0.5 * B, factor=1.5, c_tol=1e-3)
        end = aligned_fixed_point(problem, c=crit.c_crit, batch_size=B, start=(crit.below.kappa, crit.below.nu))
        a, m = end.fast_contraction, gradient_moments(problem, (end.kappa, end.nu, 0.0, 0.0, 0.0), check=False)
        eps_pg = (B - 1) * max(g @ g / (s - g @ g) for g, s in ((m.grad_k, m.s_kk), (m.grad_v, m.s_vv)))
        print(f"B = {B}: c_crit = {crit.c_crit:.3f} ({crit.kind}), c_crit / B = {crit.c_crit / B:.3f}; end "
              f"(kappa*, nu*) = ({end.kappa:.4f}, {end.nu:.4f}), alpha |mu_f| = {a:.3f}, eps = "
              f"{(2 - a / B) / (2 - a) - 1:.4f} (fast), {eps_pg:.4f} (population gradient); CPU "
              f"{time.process_time() - t0:.1f} s", flush=True)
    for side, rng in zip((0.8, 1.25), np.random.default_rng(18).spawn(2)):
        c = side * crit.c_crit
        for start, r in zip(((end.kappa, end.nu), (0.9, 0.9)), rng.spawn(2)):
            init = Overlaps(**{k: np.full(n_runs, x) for k, x in zip(("kappa", "nu", "theta", "eta", "rho"),
                                                                    (*start, 0.0, 0.0, 0.0))})
            every = int(round(5.0 * D / c))
            run = online_sgd_reduced(problem, init, alpha=c / D, n_steps=8 * every, batch_size=B, rng=r,
                                     log_every=every)
            for i in (1, 3, 8):
                nu = run.nu[i]
                print(f"  B = {B}, {side} c_crit = {c:.2f} from ({start[0]:.3f}, {start[1]:.3f}), tau = {run.time[i]:.0f}: "
                      f"mean nu {nu.mean():.4f} +- {nu.std(ddof=1) / np.sqrt(n_runs):.4f}, share nu > 0.1 "
                      f"{np.mean(nu > 0.1):.2f}")
    print(f"CPU {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
