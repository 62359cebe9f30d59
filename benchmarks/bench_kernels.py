"""Per-step cost of the compiled kernels against the NumPy reference routes, and the project's
end-to-end times, side by side in one run, each with the machine's load.

- PGD (``numerics.dynamics.pgd.overlap_pgd``, d = 400, L = 10, gamma^2 = 1/2): one run and 30 runs, constant
  lambda = 0.1 (alpha = 4e-3) and the paper's schedule lambda_t = 1/(1 + 1e-4 t);
- reduced online SGD (``numerics.sgd.reduced.online_sgd_reduced``, the paper's settings d = 80,
  L = 10, B = 5, schedule from lambda = 2, alpha = 1e-3, no test set): one run and 30 runs, 5,000
  steps logged every 500 (the logged risks are evaluated after the run, in one call), and 20,000
  steps logged at the end only (the steps alone); the same for the softmax member
  (``numerics.nonlinearity.sgd``);
- full online SGD (``numerics.sgd.full.online_sgd_full``, d = 80, L = 10, B = 5, lambda = 1, alpha = 0.01): the
  claim sgd-reduced-equals-full-in-law's shape, 2,000 runs of 30 steps logged at every step, per coordinate drawn
  (B L d + B per run-step);
- span-reduced Monte-Carlo risk (``numerics.montecarlo.population_risk.population_risk_mc``, d = 400, L = 10);
- the authors' compiled PGD step, ~80 us per run-step, as quoted in issue 15 (not measured here);
- ``--reproduce``: cold ``slr reproduce`` (empty output folder) wall and CPU time of the child,
  then ``slr verify`` in the same folder (figures cached: the claims that read a figure's data
  load it);
- ``--pytest``: the README's test command ``python -m pytest -n 2``: wall and CPU time;
- ``--sgd-profile``: where a reduced-SGD run-step goes (the compiled step itself; the token normals
  drawn by NumPy per block size and by numba in the compiled loop; the NumPy-drawn noise; erf and
  exp per value), whole runs of the paper's experiment as the figure training_online_sgd runs them
  (200,000 steps, its logging and test set; one run and 30) and the cost of many short runs (the
  sgd_vs_flow figure's 2048 runs of 125 steps, where the per-run costs dominate).
Costs are process CPU time per run-step (best of ``--repeat``), after one warm-up call (which
loads or compiles the kernels). On a shared machine CPU time is inflated by contention for the
cores' caches and shared units, so the load average before and after each item is printed.
Run from the repository root:  python benchmarks/bench_kernels.py [--reproduce] [--pytest] [--sgd-profile]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from numerics import (PaperSchedule, ScheduledProblem, online_sgd_reduced, overlap_pgd, population_risk_mc,  # noqa: E402
                      sample_initial_overlaps)
from theory import Overlaps, Problem  # noqa: E402

AUTHORS_PGD_US = 80.0  # the authors' compiled PGD step, per run-step, as quoted in issue 15


def load():
    return "load %.1f/%.1f/%.1f" % os.getloadavg()


def cpu_per_unit(fn, units, repeat):
    fn()  # warm-up: loads (or compiles) the kernel
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best / units * 1e6


def pgd_case(n_runs, lam, steps, engine):
    start = sample_initial_overlaps(400, n_runs, np.random.default_rng(0))
    problem = ScheduledProblem(d=400, lam=lam)
    return lambda: overlap_pgd(problem, start, alpha=4e-3, n_steps=steps, log_every=1000, engine=engine)


def sgd_case(n_runs, steps, engine, log_every=500):
    problem = ScheduledProblem(d=80, L=10, gamma=np.sqrt(0.5), eps=0.1, lam=PaperSchedule(lam0=2.0))
    start = sample_initial_overlaps(80, n_runs, np.random.default_rng(0))
    return lambda: online_sgd_reduced(problem, start, alpha=1e-3, n_steps=steps, batch_size=5,
                                      rng=np.random.default_rng(1), log_every=log_every, engine=engine)


def sgd_softmax_case(n_runs, steps, engine):
    from numerics.nonlinearity.sgd import online_sgd_reduced_sigma

    problem = ScheduledProblem(d=80, L=10, gamma=np.sqrt(0.5), eps=0.1, lam=PaperSchedule(lam0=2.0))
    start = sample_initial_overlaps(80, n_runs, np.random.default_rng(0))
    return lambda: online_sgd_reduced_sigma(problem, start, "softmax", alpha=1e-3, n_steps=steps, batch_size=5,
                                            rng=np.random.default_rng(1), log_every=500, engine=engine)


def mc_case(n, engine):
    problem = Problem(d=400, L=10, gamma=np.sqrt(0.5), eps=0.1, lam=0.1)
    point = Overlaps(kappa=0.3, nu=0.6, theta=0.1, eta=-0.1, rho=-0.03)
    return lambda: population_risk_mc(problem, point, n=n, rng=np.random.default_rng(2), engine=engine)


def full_sgd_case(n_runs, steps, engine):
    from numerics.dynamics.initial import sample_initial_vectors
    from numerics.sgd.full import online_sgd_full

    vectors = sample_initial_vectors(80, n_runs, np.random.default_rng(0))
    problem = Problem(d=80, L=10, eps=0.1, lam=1.0)
    return lambda: online_sgd_full(problem, *vectors, alpha=0.01, n_steps=steps, batch_size=5,
                                   rng=np.random.default_rng(1), log_every=1, engine=engine)


def per_step_table(repeat, quick):
    scale = 10 if quick else 1
    cases = [("PGD, lambda = 0.1", lambda n, e: pgd_case(n, 0.1, 20_000 // scale, e), 20_000 // scale),
             ("PGD, paper schedule", lambda n, e: pgd_case(n, PaperSchedule(lam0=1.0), 20_000 // scale, e),
              20_000 // scale),
             ("reduced SGD, paper settings", lambda n, e: sgd_case(n, 5_000 // scale, e), 5_000 // scale),
             ("reduced SGD, paper settings, logged at the end only (the steps alone)",
              lambda n, e: sgd_case(n, 20_000 // scale, e, log_every=20_000 // scale), 20_000 // scale),
             ("reduced SGD, softmax member, paper settings", lambda n, e: sgd_softmax_case(n, 5_000 // scale, e),
              5_000 // scale)]
    print(f"Per run-step, process CPU time, best of {repeat} (us); authors' PGD: ~{AUTHORS_PGD_US:.0f} us "
          "(quoted, not measured)")
    for name, make, steps in cases:
        for n_runs in (1, 30):
            before = load()
            kw = {e: cpu_per_unit(make(n_runs, e), n_runs * steps, repeat) for e in ("kernel", "numpy")}
            print(f"- {name}, {n_runs} run(s): kernel {kw['kernel']:.2f} us, NumPy {kw['numpy']:.1f} us "
                  f"({kw['numpy'] / kw['kernel']:.0f}x) [{before} -> {load()}]", flush=True)
    n_runs, steps, before = 2000 // scale, 30, load()
    coordinates = n_runs * steps * (5 * 10 * 80 + 5)
    kw = {e: cpu_per_unit(full_sgd_case(n_runs, steps, e), coordinates, repeat) * 1e3 for e in ("kernel", "numpy")}
    print(f"- full SGD, d = 80, {n_runs} runs x {steps} steps, per coordinate: kernel {kw['kernel']:.1f} ns, NumPy "
          f"{kw['numpy']:.1f} ns ({kw['numpy'] / kw['kernel']:.1f}x) [{before} -> {load()}]", flush=True)
    n = 200_000 // scale
    before = load()
    kw = {e: cpu_per_unit(mc_case(n, e), n, repeat) * 1e3 for e in ("kernel", "numpy")}
    print(f"- Monte-Carlo risk, span route, per sequence: kernel {kw['kernel']:.0f} ns, NumPy "
          f"{kw['numpy']:.0f} ns ({kw['numpy'] / kw['kernel']:.1f}x) [{before} -> {load()}]", flush=True)


def sgd_step_cost(repeat, steps):
    """The compiled reduced-SGD step called directly on one run (paper settings, both members), and the
    NumPy draws of its targets' noise and Bartlett variables (as ``numerics.sgd.reduced`` draws them)."""
    import math

    from numerics.kernels.sfc64 import sfc64_state
    from numerics.kernels.sgd_step import ERF, SOFTMAX, sgd_reduced_kernel
    from numerics.sgd.trajectory import child_streams

    streams = child_streams(np.random.default_rng(0), 4)

    def draw_noise():  # eps xi, sqrt(chi2(d - 4)), n21, sqrt(chi2(d - 5)) of each step, d = 80, B = 5
        extra = streams[1].standard_normal((steps, 6))
        return (0.1 * extra[:, :5], np.sqrt(streams[2].chisquare(76, steps)), extra[:, 5],
                np.sqrt(streams[3].chisquare(75, steps)))

    noise, a11, n21, a22 = draw_noise()
    KV = np.array([[0.6, 0.0, 0.8, 0.0], [0.36, 0.48, 0.6, 0.52]])
    lam, rows = np.linspace(2.0, 1.8, steps), np.full(steps, -1)
    for code, name in ((ERF, "erf"), (SOFTMAX, "softmax")):
        us = cpu_per_unit(lambda: sgd_reduced_kernel(KV.copy(), sfc64_state(streams[0]), math.sqrt(0.5), math.sqrt(40.0), noise,
                                                     -1e-3 * a11, -1e-3 * n21, -1e-3 * a22, lam, 1e-3, 0.4, 10,
                                                     rows, np.empty((0, 2, 4)), code), steps, repeat)
        print(f"- the compiled step ({name} member), tokens drawn in it: {us:.2f} us")
    us = cpu_per_unit(draw_noise, steps, repeat)
    print(f"- NumPy draws the targets' noise and the Bartlett variables (B + 3 = 8 numbers): {us:.2f} us")


def sgd_profile(repeat):
    """Where a reduced-SGD run-step goes (paper settings, one run): the whole compiled step (the kernel
    called directly on one run's token generator, 20,000 steps); the 4 B + 2 B (L - 1) + 8 = 118 token-stream normals per
    step drawn by NumPy in blocks of steps (the reference route), by numba's Generator.standard_normal and by the
    kernels' ``sfc64_normal`` inside a compiled loop (same numbers); the targets' noise and the Bartlett variables drawn by NumPy
    (as ``numerics.sgd.reduced`` draws them, B + 3 numbers per step); erf (the kernels' erf_poly, libm's)
    and exp(-x^2) per value. The step's other arithmetic (projections, sums, the 6-dim step) is the remainder."""
    import math

    import numba

    from numerics.kernels.erf_poly import erf_poly, erf_table
    from numerics.kernels.sfc64 import sfc64_normal, sfc64_state

    @numba.njit
    def draw_in_kernel(gen, out):
        for i in range(out.size):
            out.flat[i] = gen.standard_normal()

    @numba.njit
    def draw_from_state(state, out):
        a, b, c, w = state[0], state[1], state[2], state[3]
        for i in range(out.size):
            out.flat[i], a, b, c, w = sfc64_normal(a, b, c, w)

    @numba.njit
    def erf_loop(xs, out, table, poly):
        for i in range(xs.size):
            out[i] = erf_poly(xs[i], table) if poly else math.erf(xs[i])

    @numba.njit
    def exp_loop(xs, out):
        for i in range(xs.size):
            out[i] = math.exp(-(xs[i] * xs[i]))

    gen, steps, table = np.random.Generator(np.random.SFC64(0)), 20_000, erf_table()
    print(f"Reduced SGD, paper settings, per run-step (best of {repeat}) [{load()}]:")
    sgd_step_cost(repeat, steps)
    for floats in (2**13, 2**17, 2**21):
        n = floats // 126  # 118 token-stream normals + B + 3 = 126 numbers per step
        out = np.empty((n, 118))
        us = cpu_per_unit(lambda: gen.standard_normal(out=out), n, repeat)
        print(f"- NumPy draws the 118 token-stream normals, blocks of {floats} floats ({n} steps): {us:.2f} us")
    out = np.empty((steps, 118))
    print(f"- numba's Generator.standard_normal draws them in a compiled loop: "
          f"{cpu_per_unit(lambda: draw_in_kernel(gen, out), steps, repeat):.2f} us")
    state = sfc64_state(gen)
    print(f"- the kernels' sfc64_normal (the same numbers, SFC64 state in registers) in a compiled loop: "
          f"{cpu_per_unit(lambda: draw_from_state(state, out), steps, repeat):.2f} us")
    xs, res = np.random.default_rng(0).standard_normal(10**6) * 2.0, np.empty(10**6)
    for poly, name in ((True, "erf_poly"), (False, "libm erf")):
        ns = cpu_per_unit(lambda: erf_loop(xs, res, table, poly), xs.size, repeat) * 1e3
        print(f"- {name}: {ns:.1f} ns per value, x ~ N(0, 4) ({50 * ns / 1e3:.2f} us for the step's 50 gates)")
    ns = cpu_per_unit(lambda: exp_loop(xs, res), xs.size, repeat) * 1e3
    print(f"- libm exp(-x^2): {ns:.1f} ns per value ({50 * ns / 1e3:.2f} us for the step's 50 gate derivatives)")
    print(f"  [{load()}]", flush=True)


def sgd_paper_runs(repeat):
    """Per run-step cost of whole runs of the paper's SGD experiment as the figure training_online_sgd runs them
    (``numerics.sgd.experiment.PAPER_SGD``: d = 80, L = 10, B = 5, the lambda schedule, 200,000 steps logged every
    1,000, a fresh test set of 1,000 samples per logged step), kernel route: everything a run-step costs (the steps,
    the NumPy-drawn targets' noise and Bartlett variables, the blocks, the logged risks), one run and 30 runs."""
    from numerics.sgd.experiment import PAPER_SGD as c

    problem = c.problem
    for n_runs, test_size in ((1, 0), (1, c.test_size), (30, c.test_size)):
        start = sample_initial_overlaps(c.d, n_runs, np.random.default_rng(0))
        fn = lambda: online_sgd_reduced(problem, start, alpha=c.alpha, n_steps=c.n_steps, batch_size=c.batch_size,
                                        rng=np.random.default_rng(1), log_every=c.n_steps // 200, test_size=test_size)
        before = load()
        print(f"- whole run-step, paper's experiment, {n_runs} run(s), 200,000 steps logged every 1,000, test set "
              f"{test_size}: {cpu_per_unit(fn, n_runs * c.n_steps, repeat):.2f} us [{before} -> {load()}]", flush=True)


def sgd_many_runs(repeat):
    """Per run-step cost of many short runs (the sgd_vs_flow figure's setting: d = 10, L = 2, B = 5,
    lambda = 1, alpha = 8e-3, 125 steps, 2048 runs, one log at the end): the per-run costs (streams,
    noise draws, kernel calls) against the steps' own."""
    problem = Problem(d=10, L=2, gamma=np.sqrt(0.5), eps=0.1, lam=1.0)
    start = sample_initial_overlaps(10, 2048, np.random.default_rng(0))
    for engine in ("kernel", "numpy"):
        fn = lambda: online_sgd_reduced(problem, start, alpha=8e-3, n_steps=125, batch_size=5,
                                        rng=np.random.default_rng(1), log_every=125, engine=engine)
        before = load()
        print(f"- reduced SGD, 2048 runs x 125 steps (sgd_vs_flow setting), {engine}: "
              f"{cpu_per_unit(fn, 2048 * 125, repeat):.2f} us per run-step [{before} -> {load()}]", flush=True)


def timed_child(cmd, label):
    before = load()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    print(f"- {label}: {wall:.1f} s wall, {cpu:.1f} s CPU (exit {proc.returncode}; {tail!r}) "
          f"[{before} -> {load()}]", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10x fewer steps")
    parser.add_argument("--reproduce", action="store_true", help="time a cold `slr reproduce`")
    parser.add_argument("--pytest", action="store_true", help="time the default test suite")
    parser.add_argument("--sgd-profile", action="store_true", help="where a reduced-SGD run-step goes")
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
          f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} cores, {load()}")
    if args.sgd_profile:
        sgd_profile(args.repeat)
        sgd_paper_runs(args.repeat)
        sgd_many_runs(args.repeat)
    per_step_table(args.repeat, args.quick)
    if args.reproduce:
        with tempfile.TemporaryDirectory() as out:
            slr = "import sys; from figures.cli import main; sys.exit(main(sys.argv[1:]))"
            timed_child([sys.executable, "-c", slr, "reproduce", "--out", out], "cold slr reproduce")
            timed_child([sys.executable, "-c", slr, "verify", "--out", out], "slr verify, figures cached")
    if args.pytest:
        timed_child([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider"], "default pytest")


if __name__ == "__main__":
    main()
