"""Speed of online SGD: the exact reduced simulator, the full one, and the paper's SGD experiment.

- reduced simulator (``numerics.sgd.reduced.online_sgd_reduced``): steps per second in process
  CPU time on one core, at d = 80 (the paper's) and d = 10^6, for 1, 15 and 30 runs at once;
- full simulator (``numerics.sgd.full.online_sgd_full``) at d = 80 for comparison, compiled and NumPy routes;
- the paper's SGD experiment (``numerics.sgd.experiment.PAPER_SGD``: 30 runs, 200,000 steps,
  test set 1,000 logged every 500 steps) on 2 local processes: wall time (goal < 60 s on 2 cores)
  and the final logged quantities. The machine's load average is printed alongside: on a shared
  machine the wall time includes waiting for the other processes.
Run from the repository root:  python benchmarks/bench_sgd.py   (--quick: short smoke run)
"""

import os

# One BLAS thread per process: set before numpy is imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import datetime  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from numerics.dynamics.initial import sample_initial_overlaps, sample_initial_vectors  # noqa: E402
from numerics.dynamics.schedules import PaperSchedule  # noqa: E402
from numerics.sgd.experiment import PAPER_SGD, run_sgd_experiment  # noqa: E402
from numerics.sgd.full import online_sgd_full  # noqa: E402
from numerics.sgd.reduced import online_sgd_reduced  # noqa: E402
from numerics.dynamics.schedules import ScheduledProblem  # noqa: E402


def steps_per_second(d, n_runs, n_steps, full=False, test_size=0, engine="kernel"):
    rng = np.random.default_rng(0)
    problem = ScheduledProblem(d=d, L=10, gamma=np.sqrt(0.5), eps=0.1, lam=PaperSchedule(lam0=2.0))
    kw = dict(alpha=1e-3 if d <= 1000 else 1e-6, n_steps=n_steps, batch_size=5, rng=rng,
              log_every=500, test_size=test_size)
    t0 = time.process_time()
    if full:
        online_sgd_full(problem, *sample_initial_vectors(d, n_runs, rng), engine=engine, **kw)
    else:
        online_sgd_reduced(problem, sample_initial_overlaps(d, n_runs, rng), **kw)
    return n_steps / (time.process_time() - t0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    args = parser.parse_args()
    n = 2000 if args.quick else 20000
    print(f"# bench_sgd  {datetime.date.today()}  load average {os.getloadavg()}")
    print("reduced simulator, process CPU time on one core (paper settings: L=10, B=5, schedule):")
    for d in (80, 10**6):
        for n_runs in (1, 15, 30):
            rate = steps_per_second(d, n_runs, n)
            print(f"  d={d:>7}  runs={n_runs:>2}  {rate:8.0f} steps/s  ({rate * n_runs:9.0f} run-steps/s)")
    rate = steps_per_second(80, 15, n, test_size=1000)
    print(f"  d=     80  runs=15  {rate:8.0f} steps/s  with the test set of 1000 every 500 steps")
    for engine in ("kernel", "numpy"):
        rate = steps_per_second(80, 30, max(n // 20, 100), full=True, engine=engine)
        print(f"full simulator ({engine}), d=80, runs=30: {rate:.0f} steps/s "
              f"({1e9 / (rate * 30 * (5 * 10 * 80 + 5)):.1f} ns per coordinate)")

    config = PAPER_SGD if not args.quick else dataclasses.replace(PAPER_SGD, n_steps=20000)
    load = os.getloadavg()
    t0 = time.perf_counter()
    result = run_sgd_experiment(config, executor=2)
    wall = time.perf_counter() - t0
    print(f"paper SGD experiment ({config.n_runs} runs, {config.n_steps} steps, 2 processes): "
          f"{wall:.1f} s wall  (load average before {load[0]:.1f}, after {os.getloadavg()[0]:.1f})")
    tr = result.trajectory
    for q in ("excess_risk", "test_excess_risk", "abs_kappa", "abs_nu", "distance_to_manifold"):
        mean, lo, hi = result.band(q)
        print(f"  final {q:<21} mean {mean[-1]:.4g}  95% band [{lo[-1]:.4g}, {hi[-1]:.4g}]")
    print(f"  runs with |kappa| > 0.9 and |nu| > 0.9 at the end: "
          f"{int(np.sum((np.abs(tr.kappa[-1]) > 0.9) & (np.abs(tr.nu[-1]) > 0.9)))} of {tr.n_runs}")


if __name__ == "__main__":
    main()
