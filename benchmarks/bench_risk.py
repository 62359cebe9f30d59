"""Throughput of the three routes to the population risk, on one core.

- closed form: ``theory.risk.risk_from_arrays`` on 1e6 random points (goal: >= 1e6 points/s),
  with a breakdown of where its time goes (zeta and its two branches, erf, exp, arithmetic);
- quadrature: ``theory.risk_quad.population_risk_quad``, points per second;
- Monte Carlo: ``numerics.montecarlo.population_risk.population_risk_mc``, sequences and tokens per second
  (span-reduced route and full-dimensional route).

Points are drawn as in tests/test_risk_routes.py: d in [2, 1e5], L in [1, 1000], lam in
[1e-3, 10], gamma in [1e-2, 10] log-uniform, eps in [0, 1], overlaps of random unit vectors.
Timings are the best of ``--repeat`` runs in process CPU time (one thread, so CPU time is the
cost; wall time on a shared machine would add the waits for the other processes).
Run from the repository root:  python benchmarks/bench_risk.py
"""

import os

# One core: set before numpy is imported (BLAS thread pools read these at load time).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import erf, owens_t  # noqa: E402

from numerics.montecarlo.population_risk import population_risk_mc  # noqa: E402
from theory import Overlaps, Problem  # noqa: E402
from theory.risk import risk_from_arrays  # noqa: E402
from theory.risk_quad import population_risk_quad  # noqa: E402
from theory.zeta import zeta, zeta_at_zero  # noqa: E402


def random_points(n, rng):
    """Arrays (d, L, gamma, eps, lam, kappa, nu, theta, eta, rho) of n random feasible points."""
    lu = lambda lo, hi: np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    d, L = np.round(lu(2, 1e5)), np.round(lu(1, 1000))
    gamma, lam, eps = lu(1e-2, 10), lu(1e-3, 10), rng.uniform(0, 1, n)
    k = rng.standard_normal((n, 4))
    v = rng.standard_normal((n, 4))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return d, L, gamma, eps, lam, k[:, 0], v[:, 1], v[:, 0], k[:, 1], np.sum(k * v, axis=1)


def best_time(f, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.process_time()
        f()
        best = min(best, time.process_time() - t0)
    return best


def bench_closed_form(n, repeat, rng):
    args = random_points(n, rng)
    d, L, gamma, eps, lam, kappa = args[:6]
    total = best_time(lambda: risk_from_arrays(*args), repeat)
    # The pieces of risk_from_arrays, timed alone on the same arrays.
    s = np.sqrt(d / 2)
    g = lam * gamma
    A = lam * s * kappa
    c2 = np.sqrt(1 + 2 * g * g)
    w = A / c2
    small = (g < 0.5) & (np.abs(w) < 3.0)          # the Gauss-Legendre branch of theory.zeta
    root = np.sqrt(1 + 4 * g * g)
    parts = {
        "zeta(A, g)": best_time(lambda: zeta(A, g), repeat),
        "of which owens_t on its branch": best_time(
            lambda: owens_t(np.sqrt(2) * w[~small], 1 / root[~small]), repeat),
        "of which Gauss-Legendre branch": best_time(lambda: zeta(A[small], g[small]), repeat),
        "zeta(0, lam) (closed form)": best_time(lambda: zeta_at_zero(lam), repeat),
        "erf (one call)": best_time(lambda: erf(w), repeat),
        "exp (one call)": best_time(lambda: np.exp(-w * w), repeat),
        "sqrt (one call)": best_time(lambda: np.sqrt(c2), repeat),
    }
    special = (parts["zeta(A, g)"] + parts["zeta(0, lam) (closed form)"]
               + 2 * parts["erf (one call)"] + 2 * parts["exp (one call)"])
    parts["everything else (elementwise arithmetic, temporaries)"] = max(total - special, 0.0)
    return n / total, total, parts, float(np.mean(small))


def bench_quadrature(n, repeat, rng):
    args = random_points(n, rng)
    cases = [(Problem(d=int(a[0]), L=int(a[1]), gamma=a[2], eps=a[3], lam=a[4]),
              Overlaps(kappa=a[5], nu=a[6], theta=a[7], eta=a[8], rho=a[9]))
             for a in zip(*args)]
    total = best_time(lambda: [population_risk_quad(p, o) for p, o in cases], repeat)
    return n / total


def bench_monte_carlo(n, repeat, full_dim, d=400, L=10):
    problem = Problem(d=d, L=L, eps=0.1, lam=0.5)
    overlaps = Overlaps(kappa=0.3, nu=0.2, theta=0.1, eta=-0.2, rho=0.15)
    total = best_time(lambda: population_risk_mc(problem, overlaps, n=n, rng=np.random.default_rng(0),
                                                 full_dim=full_dim), repeat)
    return n / total, n * L / total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10**6, help="closed-form points (1e6)")
    parser.add_argument("--quad-points", type=int, default=200, help="quadrature points (200)")
    parser.add_argument("--mc", type=int, default=10**6, help="Monte-Carlo sequences (1e6)")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs (5)")
    args = parser.parse_args()
    rng = np.random.default_rng(20250101)

    rate, total, parts, frac_small = bench_closed_form(args.points, args.repeat, rng)
    quad_rate = bench_quadrature(args.quad_points, max(1, args.repeat // 2), rng)
    mc_seq, mc_tok = bench_monte_carlo(args.mc, max(1, args.repeat // 2), full_dim=False)
    full_n = max(2, args.mc // 50)
    full_seq, full_tok = bench_monte_carlo(full_n, 1, full_dim=True)

    print(f"## bench_risk ({datetime.date.today().isoformat()}, {platform.processor() or platform.machine()}, "
          f"numpy {np.__version__}, 1 thread, CPU time, best of {args.repeat})")
    print()
    print(f"- closed form `risk_from_arrays`: **{rate:.3g} points/s** ({args.points:.0e} points in "
          f"{total:.3g} s; goal >= 1e6 points/s)")
    counts = {"of which owens_t on its branch": (1 - frac_small) * args.points,
              "of which Gauss-Legendre branch": frac_small * args.points}
    for name, t in parts.items():
        per = counts.get(name, args.points)
        indent = "    " if name.startswith("of which") else "  "
        print(f"{indent}- {name}: {t:.3g} s ({100 * t / total:.0f}% of the total; "
              f"{1e9 * t / max(per, 1):.3g} ns per point, {per:.2g} points)")
    print(f"  - points on the Gauss-Legendre branch of zeta: {100 * frac_small:.0f}%")
    print(f"- quadrature `population_risk_quad`: **{quad_rate:.3g} points/s** "
          f"({1e3 / quad_rate:.2g} ms per point, {args.quad_points} points)")
    print(f"- Monte Carlo `population_risk_mc` (d = 400, L = 10, span-reduced): **{mc_seq:.3g} "
          f"sequences/s** ({mc_tok:.3g} tokens/s, n = {args.mc:.0e})")
    print(f"- Monte Carlo, `full_dim=True` (d = 400, L = 10): {full_seq:.3g} sequences/s "
          f"({full_tok:.3g} tokens/s, n = {full_n:.0e})")


if __name__ == "__main__":
    main()
