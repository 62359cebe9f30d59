"""Softmax risk by the Laplace route: evaluations per second and accuracy, on one core.

Points as in tests/test_nonlinearity_risk.py: d log-uniform in [2, 1e4], L in {2, 10, 100},
lambda log-uniform in [0.05, 5], gamma in [0.3, 1.5], overlaps of random unit vectors (half on M).
For each point: CPU time of ``population_risk_sigma_quad(..., "softmax")`` (orders 12 and 16 with
the error estimate), of the oracle excess without the estimate (the rule used in lambda searches),
the returned abserr, and the actual error against a reference at 40 nodes per panel.
Run from the repository root:  python benchmarks/bench_nonlinearity.py
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import datetime  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import theory.nonlinearity.softmax_quad as sq  # noqa: E402
from theory import Overlaps, Problem  # noqa: E402
from theory.nonlinearity import population_risk_sigma_quad  # noqa: E402
from theory.nonlinearity.oracle import oracle_excess_sigma  # noqa: E402


def _points(rng, n):
    for i in range(n):
        d = int(round(np.exp(rng.uniform(np.log(2), np.log(1e4)))))
        problem = Problem(d=d, L=int(rng.choice([2, 10, 100])), gamma=float(rng.uniform(0.3, 1.5)),
                          eps=0.1, lam=float(np.exp(rng.uniform(np.log(0.05), np.log(5)))))
        k, v = (x / np.linalg.norm(x) for x in rng.standard_normal((2, 4)))
        if i % 2:
            yield problem, Overlaps(kappa=k[0], nu=v[1])
        else:
            yield problem, Overlaps(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=float(k @ v))


def main(n=40):
    rng = np.random.default_rng(20251130)
    times, ratios, rel, rel_err = [], [], [], []
    for problem, overlaps in _points(rng, n):
        t = time.process_time()
        q = population_risk_sigma_quad(problem, overlaps, "softmax")
        times.append(time.process_time() - t)
        ref = sq._evaluate(problem, overlaps, {"R": sq._risk_terms}, (40,), n_max=(2, 2))["R"][0] \
            + float(problem.eps) ** 2 + float(problem.gamma) ** 2
        ratios.append(abs(q.value - ref) / q.abserr)
        rel.append(abs(q.value - ref) / abs(ref))
        rel_err.append(q.abserr / abs(ref))
    t_or = []
    for d in (16, 128, 1024):
        t = time.process_time()
        oracle_excess_sigma(Problem(d=d, L=10, lam=5.0), "softmax", with_error=False)
        t_or.append(time.process_time() - t)
    times = np.array(times)
    print(f"## bench_nonlinearity: softmax risk by the Laplace route ({datetime.date.today()}, "
          f"{platform.machine()}, numpy {np.__version__}, 1 thread, CPU time)\n")
    print(f"- `population_risk_sigma_quad(..., 'softmax')` with error estimate: **{1 / np.mean(times):.1f} "
          f"evaluations/s** (mean {np.mean(times) * 1e3:.0f} ms, median {np.median(times) * 1e3:.0f} ms, "
          f"max {np.max(times) * 1e3:.0f} ms over {n} points)")
    print(f"- accuracy against 40 nodes per panel: max relative error {np.max(rel):.2g} (median "
          f"{np.median(rel):.2g}); the error estimate bounds it at every point (max |error| / abserr = "
          f"{np.max(ratios):.2g}); median relative abserr {np.median(rel_err):.2g}")
    print(f"- oracle excess, one rule (lambda searches), d = 16, 128, 1024 at lambda = 5: "
          f"{', '.join(f'{x * 1e3:.0f} ms' for x in t_or)}")


if __name__ == "__main__":
    main()
