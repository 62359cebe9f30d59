"""Where a run-step of the reduced online-SGD kernel goes, at the figure training_online_sgd's configuration.

The configuration of ``numerics.sgd.experiment.PAPER_SGD`` (d = 80, L = 10, B = 5: 50 tokens per step, the
lambda schedule, alpha = 1e-3), 30 runs. Process CPU time per run-step (best of ``--repeat``) of:

- the compiled step alone (``kernels.sgd_step.sgd_reduced_runs`` on 30 runs, the noise drawn before), erf and softmax
  members, on the lambdas of steps ``--start`` to ``--start`` + ``--steps`` of the schedule (at the start, lambda
  1-2 and about half the gates at or above 1, where ``erf_block`` takes its tail formula; late in the run, e.g.
  ``--start 150000``, lambda below 1 and few such gates: time both, the step's cost depends on the gates' values);
- its parts in compiled loops of the same sizes: the 118 token-stream normals (``sfc64.sfc64_normal``), the 50 gates
  (``erf_poly``, and ``erf_block`` after ``exp_block`` as the kernel takes them) and the 50 exp(-x^2), the noise
  draws (``kernels.sgd_noise.noise_draws``, B + 3 numbers);
- the fresh test risk (``kernels.fresh_risk_step.fresh_risk_runs``: 1,000 samples per run at each of 200 logged
  steps), per run-step of the 200,000-step run;
- ``erf_poly.erf_table()`` in a fresh process (what every worker pays once);
- the whole figure's compute (``online_sgd_reduced`` as the figure runs it, with ``--whole``).

Run from the repository root:  python benchmarks/bench_sgd_step.py [--steps N] [--repeat K] [--whole]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from bench_risk import best_time  # noqa: E402  (benchmarks/ is the script's folder)


def load():
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def best_cpu(fn, repeat):
    fn()  # compile / warm
    return best_time(fn, repeat)


def setup(R, n, start=0):
    """The kernel's inputs at training_online_sgd's configuration: R runs, n steps from step ``start`` of the
    lambda schedule, noise drawn ahead."""
    from numerics.dynamics.initial import sample_initial_overlaps
    from numerics.kernels.erf_poly import erf_table
    from numerics.kernels.sgd_noise import noise_draws
    from numerics.sgd.experiment import PAPER_SGD as c
    from numerics.sgd.frame import cholesky_coordinates
    from numerics.sgd.trajectory import lambda_path, run_streams

    KV0 = cholesky_coordinates(sample_initial_overlaps(c.d, R, np.random.default_rng(0)))
    S0 = run_streams(np.random.default_rng(1), R, 0, True)[0]
    lam = np.ascontiguousarray(lambda_path(c.problem, start + n)[start:start + n])
    draws = np.empty((R, n, c.batch_size)), np.empty((R, n)), np.empty((R, n)), np.empty((R, n))
    noise_draws(S0.copy(), c.batch_size, c.d - 4, float(c.eps), *draws)
    return c, erf_table(), KV0, S0, lam, draws


def kernel_cost(R, n, repeat, member="erf", start=0):
    """us per run-step of the compiled step of ``member`` (erf or softmax) from step ``start`` of the schedule, and
    of the noise draws."""
    from numerics.kernels.sgd_noise import noise_draws
    from numerics.kernels.sgd_step import ERF, SOFTMAX, sgd_reduced_runs

    c, _, KV0, S0, lam, (noise, a11, n21, a22) = setup(R, n, start)
    B, alpha = c.batch_size, float(c.alpha)
    rows, snaps = np.full(n, -1), np.empty((0, R, 2, 4))

    def kernel():
        sgd_reduced_runs(KV0.copy(), S0.copy(), float(c.gamma), math.sqrt(c.d / 2.0), noise, -alpha * a11,
                         -alpha * n21, -alpha * a22, lam, alpha, 2.0 / B, c.L, rows, snaps,
                         {"erf": ERF, "softmax": SOFTMAX}[member])

    def draws():
        noise_draws(S0.copy(), B, c.d - 4, float(c.eps), noise.copy(), a11.copy(), n21.copy(), a22.copy())

    return best_cpu(kernel, repeat) / (R * n) * 1e6, best_cpu(draws, repeat) / (R * n) * 1e6


def parts_cost(R, n, repeat):
    """us per run-step of the step's 118 token normals, 50 erf_poly, 50 exp(-x^2) (libm's, or ``exp_block``
    vectorised), in compiled loops."""
    import numba

    from numerics.kernels.erf_poly import erf_block, erf_poly, erf_table, exp_block
    from numerics.kernels.sfc64 import sfc64_normal

    @numba.njit
    def normals(S, m, out):
        for r in range(S.shape[0]):
            a, b, cc, w = S[r, 0, 0], S[r, 0, 1], S[r, 0, 2], S[r, 0, 3]
            for j in range(m):
                for i in range(out.size):
                    out[i], a, b, cc, w = sfc64_normal(a, b, cc, w)

    @numba.njit
    def gates(xs, table, out, m, which):
        for j in range(m):
            for i in range(xs.size):
                if which != 1:
                    out[0, i] = erf_poly(xs[i], table)
                if which != 0:
                    out[1, i] = math.exp(-(xs[i] * xs[i]))

    @numba.njit
    def exps(xs, out, m, K):
        for j in range(m):
            for i in range(xs.size):
                out[1, i] = -(xs[i] * xs[i])
            exp_block(out[1], K)

    @numba.njit
    def erfs(xs, out, m, K, G):
        for j in range(m):
            for i in range(xs.size):
                out[0, i], out[1, i] = xs[i], -(xs[i] * xs[i])
            exp_block(out[1], K)
            erf_block(out[0], out[1], K, G)

    c, table, _, S0, _, _ = setup(R, 1)
    out, xs = np.empty((2, 50)), 2.0 * np.random.default_rng(2).standard_normal(50)  # lambda p, lambda ~ 2
    cost = {"118 token normals": best_cpu(lambda: normals(S0, n, np.empty(118)), repeat)}
    for which, name in ((0, "50 erf_poly"), (1, "50 exp(-x^2) (libm)"), (2, "both in one loop")):
        cost[name] = best_cpu(lambda: gates(xs, table, out, R * n, which), repeat)
    K = np.empty((2, 50), np.int64)
    cost["50 exp(-x^2) (exp_block)"] = best_cpu(lambda: exps(xs, out, R * n, K), repeat)
    cost["50 exp(-x^2) and erf (exp_block, erf_block: the kernel's)"] = best_cpu(lambda: erfs(xs, out, R * n, K, np.empty((2, 57))), repeat)
    return {k: v / (R * n) * 1e6 for k, v in cost.items()}


def fresh_risk_cost(R, repeat):
    """ms per logged step of the fresh test risk (1,000 samples per run)."""
    from numerics.kernels.fresh_risk_step import fresh_risk_runs

    c, table, KV0, S0, _, _ = setup(R, 1)
    St, rho, out = S0[:, 0].copy(), np.full(R, 0.3), np.empty(R)
    fn = lambda: [fresh_risk_runs(St, KV0, rho, c.test_size, float(c.d), c.L, float(c.gamma), float(c.eps), 1.5,
                                  table, out) for _ in range(10)]
    return best_cpu(fn, repeat) / 10 * 1e3


def whole_cost(R):
    """s CPU of online_sgd_reduced as training_online_sgd runs it (200,000 steps, 200 logged test sets)."""
    from numerics.dynamics.initial import sample_initial_overlaps
    from numerics.sgd.experiment import PAPER_SGD as c
    from numerics.sgd.reduced import online_sgd_reduced

    start = sample_initial_overlaps(c.d, R, np.random.default_rng(0))
    t0 = time.process_time()
    online_sgd_reduced(c.problem, start, alpha=c.alpha, n_steps=c.n_steps, batch_size=c.batch_size,
                       rng=np.random.default_rng(1), log_every=c.n_steps // 200, test_size=c.test_size)
    return time.process_time() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--start", type=int, default=0, help="the compiled step on the lambdas from this step on")
    parser.add_argument("--whole", action="store_true", help="also the whole 30 x 200,000-step computation")
    args = parser.parse_args()
    R, n = args.runs, args.steps
    print(f"# bench_sgd_step {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} {R} runs x {n} steps from step "
          f"{args.start} [{load()}]")
    kernel, draws = kernel_cost(R, n, args.repeat, start=args.start)
    print(f"compiled step (sgd_reduced_runs): {kernel:.3f} us per run-step; noise draws (B + 3 numbers, "
          f"noise_draws): {draws:.3f} us")
    print(f"compiled step, softmax member: {kernel_cost(R, n, args.repeat, 'softmax', args.start)[0]:.3f} us per "
          "run-step")
    for name, us in parts_cost(R, n, args.repeat).items():
        print(f"  {name}, compiled loop: {us:.3f} us per run-step")
    per_log = fresh_risk_cost(R, args.repeat)
    print(f"fresh test risk, 1,000 samples x {R} runs: {per_log:.2f} ms per logged step = "
          f"{per_log * 1e-3 * 200 / (R * 200_000) * 1e6:.3f} us per run-step at 200 logs per 200,000 steps")
    code = ("import time; from numerics.kernels import erf_poly; t = time.process_time(); erf_poly.erf_table(); "
            "print(time.process_time() - t)")
    t_table = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
    print(f"erf_table() in a fresh process: {t_table * 1e3:.2f} ms")
    if args.whole:
        t = whole_cost(R)
        print(f"whole online_sgd_reduced, {R} runs x 200,000 steps: {t:.2f} s CPU = {t / (R * 2e5) * 1e6:.3f} us "
              "per run-step")
    print(f"[{load()}]")


if __name__ == "__main__":
    main()
