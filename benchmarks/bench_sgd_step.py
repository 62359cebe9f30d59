"""Where a run-step of the reduced online-SGD kernel goes, at the figure training_online_sgd's configuration.

The configuration of ``numerics.sgd.experiment.PAPER_SGD`` (d = 80, L = 10, B = 5: 50 tokens per step, the
lambda schedule, alpha = 1e-3), 30 runs. Process CPU time per run-step (best of ``--repeat``) of:

- the compiled step alone (``kernels.sgd_step.sgd_reduced_runs`` on 30 runs, the noise drawn before);
- its parts in compiled loops of the same sizes: the 118 token-stream normals (``sfc64.sfc64_normal``), the 50 gates
  (``erf_poly``) and the 50 exp(-x^2), the noise draws (``kernels.sgd_noise.noise_draws``, B + 3 numbers);
- the fresh test risk (``kernels.fresh_risk_step.fresh_risk_runs``: 1,000 samples per run at each of 200 logged
  steps), per run-step of the 200,000-step run;
- ``erf_poly.erf_table()`` on a fresh process (what every worker pays once);
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


def load():
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def best_cpu(fn, repeat):
    fn()  # compile / warm
    best = math.inf
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--whole", action="store_true", help="also the whole 30 x 200,000-step computation")
    args = parser.parse_args()

    import numba

    from numerics.dynamics.initial import sample_initial_overlaps
    from numerics.kernels.erf_poly import erf_poly, erf_table
    from numerics.kernels.fresh_risk_step import fresh_risk_runs
    from numerics.kernels.sfc64 import sfc64_normal
    from numerics.kernels.sgd_noise import noise_draws
    from numerics.kernels.sgd_step import ERF, sgd_reduced_runs
    from numerics.sgd.experiment import PAPER_SGD as c
    from numerics.sgd.frame import cholesky_coordinates
    from numerics.sgd.reduced import online_sgd_reduced
    from numerics.sgd.trajectory import lambda_path, run_streams

    R, n, B, L = args.runs, args.steps, c.batch_size, c.L
    gamma, mean, alpha = float(c.gamma), math.sqrt(c.d / 2.0), float(c.alpha)
    table = erf_table()
    KV0 = cholesky_coordinates(sample_initial_overlaps(c.d, R, np.random.default_rng(0)))
    S0 = run_streams(np.random.default_rng(1), R, 0, True)[0]
    lam = np.ascontiguousarray(lambda_path(c.problem, n)[:n])
    noise, a11, n21, a22 = np.empty((R, n, B)), np.empty((R, n)), np.empty((R, n)), np.empty((R, n))
    noise_draws(S0.copy(), B, c.d - 4, float(c.eps), noise, a11, n21, a22)
    rows, snaps = np.full(n, -1), np.empty((0, R, 2, 4))
    run_steps = R * n
    print(f"# bench_sgd_step {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} {R} runs x {n} steps, "
          f"numba {numba.__version__} [{load()}]")

    def kernel():
        sgd_reduced_runs(KV0.copy(), S0.copy(), gamma, mean, noise, -alpha * a11, -alpha * n21, -alpha * a22, lam,
                         alpha, 2.0 / B, L, rows, snaps, ERF, table)

    t_kernel = best_cpu(kernel, args.repeat) / run_steps * 1e6
    print(f"compiled step (sgd_reduced_runs), per run-step: {t_kernel:.3f} us")

    def noise_only():
        noise_draws(S0.copy(), B, c.d - 4, float(c.eps), noise.copy(), a11.copy(), n21.copy(), a22.copy())

    t_noise = best_cpu(noise_only, args.repeat) / run_steps * 1e6
    print(f"  noise draws (noise_draws, B + 3 numbers): {t_noise:.3f} us")

    per_step = 4 * B + 2 * B * (L - 1) + 8

    @numba.njit
    def normals(S, m, out):
        acc = 0.0
        for r in range(S.shape[0]):
            a, b, cc, w = S[r, 0, 0], S[r, 0, 1], S[r, 0, 2], S[r, 0, 3]
            for j in range(m):
                for i in range(out.size):
                    out[i], a, b, cc, w = sfc64_normal(a, b, cc, w)
                acc += out[0]
        return acc

    buf = np.empty(per_step)
    t_norm = best_cpu(lambda: normals(S0, n, buf), args.repeat) / run_steps * 1e6
    print(f"  {per_step} token-stream normals (sfc64_normal): {t_norm:.3f} us")

    @numba.njit
    def gates(xs, table, out, m):
        for j in range(m):
            for i in range(xs.size):
                lp = xs[i]
                out[0, i] = erf_poly(lp, table)
                out[1, i] = math.exp(-(lp * lp))
        return out[0, 0]

    @numba.njit
    def erfs(xs, table, out, m):
        for j in range(m):
            for i in range(xs.size):
                out[0, i] = erf_poly(xs[i], table)
        return out[0, 0]

    @numba.njit
    def exps(xs, out, m):
        for j in range(m):
            for i in range(xs.size):
                out[1, i] = math.exp(-(xs[i] * xs[i]))
        return out[1, 0]

    xs = 2.0 * np.random.default_rng(2).standard_normal(B * L)  # lambda p, lambda ~ 2, p ~ N(0, 1) roughly
    out = np.empty((2, B * L))
    t_erf = best_cpu(lambda: erfs(xs, table, out, run_steps), args.repeat) / run_steps * 1e6
    t_exp = best_cpu(lambda: exps(xs, out, run_steps), args.repeat) / run_steps * 1e6
    t_gate = best_cpu(lambda: gates(xs, table, out, run_steps), args.repeat) / run_steps * 1e6
    print(f"  {B * L} erf_poly: {t_erf:.3f} us; {B * L} exp(-x^2): {t_exp:.3f} us; both in one loop: {t_gate:.3f} us")
    print(f"  rest (coefficients, sums, frame step, loop; by difference): "
          f"{t_kernel - t_noise - t_norm - t_gate:.3f} us")

    # fresh test risk: 1,000 samples per run at each of 200 logged steps of a 200,000-step run
    KVf, rho = np.ascontiguousarray(KV0), np.ascontiguousarray(np.full(R, 0.3))
    St = S0[:, 0].copy()
    outr = np.empty(R)
    reps = 10
    t_fresh = best_cpu(lambda: [fresh_risk_runs(St, KVf, rho, c.test_size, float(c.d), L, gamma, float(c.eps), 1.5,
                                                table, outr) for _ in range(reps)], args.repeat)
    per_log = t_fresh / reps
    print(f"fresh test risk, 1,000 samples x {R} runs per logged step: {per_log * 1e3:.1f} ms; "
          f"200 logs per 200,000 steps: {per_log * 200 / (R * c.n_steps) * 1e6:.3f} us per run-step")

    code = "import time; t=time.process_time(); from numerics.kernels.erf_poly import erf_table; erf_table(); " \
           "print(time.process_time()-t)"
    t_table = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
    print(f"erf_table() in a fresh process (import included): {t_table * 1e3:.1f} ms")

    if args.whole:
        start = sample_initial_overlaps(c.d, R, np.random.default_rng(0))
        fn = lambda: online_sgd_reduced(c.problem, start, alpha=c.alpha, n_steps=c.n_steps, batch_size=B,
                                        rng=np.random.default_rng(1), log_every=c.n_steps // 200,
                                        test_size=c.test_size)
        t0 = time.process_time()
        fn()
        t_whole = time.process_time() - t0
        print(f"whole online_sgd_reduced, {R} runs x {c.n_steps} steps, test set {c.test_size} every 1,000: "
              f"{t_whole:.2f} s CPU = {t_whole / (R * c.n_steps) * 1e6:.3f} us per run-step")
    print(f"[{load()}]")


if __name__ == "__main__":
    main()
