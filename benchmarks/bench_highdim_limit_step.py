"""The critical step against d at lambda = 1/s, and the limit's aligned fixed point
(docs/math/highdim.md#the-fixed-point-of-the-limit).
Run: python benchmarks/bench_highdim_limit_step.py [--d 1000,10000,100000,1000000] [--batch 1,5]

eps = 0.1, L = 10, gamma^2 = 1/2. Per (d, B): c_crit (``critical_step``, relative accuracy 1e-3), its kind, the
fixed point at the last continuation point below it and the slowest mode's eigenvector there (on or off M);
c_crit / sqrt(d) and the slope of log c_crit against log d between successive d; the pitchfork at the saddle that
ends the branch, c_pf / (B sqrt(d)) (``saddle_pitchfork_step``), its closed-form limit (``branch_end_constant``) and
the gap (c_pf - c_crit) / c_pf (docs/math/highdim.md#the-end-of-the-branch-at-c-of-order-sqrt-d). ``critical_step`` starts its
continuation by default from (0.99, 0.99) through c/2, c/4, ...; at d >= 1e5 the fixed point at small c lies
within 1e-5 of kappa = 1, where that start fails, so it starts at c_start = 2 B from the limit's fixed point
(``limit_fixed_point``; at c = 2 B it is interior). Prints CPU time.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics.highdim import critical_step, limit_fixed_point, saddle_pitchfork_step, stability_jacobian
from theory import PAPER_GAMMA, PAPER_L, Problem
from theory.highdim import branch_end_constant


def _arg(name, default):
    if name in sys.argv:
        return [int(float(x)) for x in sys.argv[sys.argv.index(name) + 1].split(",")]
    return default


def _slowest_mode(problem, fp):
    """The largest real part of dG/dx at the fixed point ``fp`` and |its eigenvector|, from the Jacobian whose
    eigenvalues ``aligned_fixed_point`` reports (``stability_jacobian``: the step scaled with d)."""
    x = np.array([fp.kappa, fp.nu, 0.0, 0.0, 0.0])
    values, vectors = np.linalg.eig(stability_jacobian(problem, x, c=fp.c, batch_size=fp.batch_size))
    i = int(np.argmax(values.real))
    return values[i].real, np.abs(vectors[:, i].real)


def main():
    ds, batches = _arg("--d", [10**3, 10**4, 10**5, 10**6]), _arg("--batch", [1, 5])
    t0 = time.process_time()
    for B in batches:
        start = limit_fixed_point(2.0 * B, lam_bar=1.0, batch_size=B, eps=0.1)
        previous = None
        for d in ds:
            problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=1.0 / np.sqrt(d / 2.0))
            crit = critical_step(problem, batch_size=B, c_start=2.0 * B, c_max=1e5, c_tol=1e-3,
                                 start=(start.kappa, start.nu))
            rate, vector = _slowest_mode(problem, crit.below)
            slope = "" if previous is None else f", slope {np.log(crit.c_crit / previous[1]) / np.log(d / previous[0]):.3f}"
            print(f"d = {d}, B = {B}: c_crit = {crit.c_crit:.3f} ({crit.kind}), c_crit / sqrt(d) = "
                  f"{crit.c_crit / np.sqrt(d):.4f}{slope}; below (c = {crit.below.c:.2f}): (kappa*, nu*) = "
                  f"({crit.below.kappa:.5f}, {crit.below.nu:.4f}), slowest rate {rate:.4f}, |eigenvector| "
                  f"{np.round(vector, 3).tolist()}; CPU {time.process_time() - t0:.1f} s", flush=True)
            pf = saddle_pitchfork_step(problem, batch_size=B)
            print(f"    c_pf / (B sqrt(d)) = {pf.constant:.6f} (d -> infinity: "
                  f"{branch_end_constant(lam_bar=1.0, eps=0.1).constant:.6f}), gap {1 - crit.c_crit / pf.c:.4f}", flush=True)
            previous = (d, crit.c_crit)
    print(f"CPU {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
