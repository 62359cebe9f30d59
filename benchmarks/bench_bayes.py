"""Timings of the Bayes-risk routes and the baselines (docs/math/baselines.md#bayes-risk). Run: python benchmarks/bench_bayes.py

Prints: bayes_risk_quad time and value against d; bayes_risk_mc throughput and the sample size for
a 1% relative stderr; oracle_best_lambda, attention_linear_crossover and ols_risk_mc timings.
"""

from __future__ import annotations

import math
import time

import numpy as np

from numerics.montecarlo.bayes_risk import bayes_risk_mc
from numerics.montecarlo.geometry import random_orthonormal
from numerics.montecarlo.ols import ols_risk_mc
from theory.baselines import attention_linear_crossover, oracle_best_lambda
from theory.bayes import bayes_risk_quad
from theory.parameters import Task


def timed(fun, *args, **kwargs):
    start = time.perf_counter()
    out = fun(*args, **kwargs)
    return out, time.perf_counter() - start


def main():
    rng = np.random.default_rng(20250101)
    gamma = math.sqrt(0.5)
    print("bayes_risk_quad, L = 10, gamma^2 = 1/2")
    for d in (2, 10, 100, 1000, 10000):
        q, t = timed(bayes_risk_quad, Task(d=d, L=10, gamma=gamma))
        print(f"  d={d:>6}  {t:7.3f} s  B={q.value:.6e}  abserr={q.abserr:.1e}")
    print("bayes_risk_quad, d = 20, gamma^2 = 1/2, against L")
    for L in (2, 10, 100, 1000):
        q, t = timed(bayes_risk_quad, Task(d=20, L=L, gamma=gamma))
        print(f"  L={L:>6}  {t:7.3f} s  B={q.value:.6e}")
    print("bayes_risk_mc, L = 10, gamma^2 = 1/2, n = 200000")
    for d in (2, 10, 30, 10**6):
        est, t = timed(bayes_risk_mc, Task(d=d, L=10, gamma=gamma), 200_000, rng)
        rel = est.stderr / est.mean if est.mean > 0 else math.inf
        n_1pc = est.n * (rel / 0.01) ** 2
        print(f"  d={d:>7}  {t:6.2f} s ({est.n / t:,.0f} seq/s)  mean={est.mean:.4e}  rel.se={rel:.2e}"
              f"  n for 1% ~ {n_1pc:.2e}")
    _, t = timed(lambda: [oracle_best_lambda(Task(d=d, L=10)) for d in (2, 100, 10**4, 10**8)])
    print(f"oracle_best_lambda: {t / 4 * 1e3:.1f} ms per call")
    _, t = timed(attention_linear_crossover, 10, 2.0)
    print(f"attention_linear_crossover(L=10, gamma=2): {t:.2f} s")
    k_star, v_star = random_orthonormal(20, 2, rng)
    _, t = timed(ols_risk_mc, Task(d=20, L=5, gamma=gamma, eps=0.3), k_star, v_star,
                 100_000, 100_000, rng)
    print(f"ols_risk_mc(d=20, L=5, n_train=n_test=1e5): {t:.2f} s")


if __name__ == "__main__":
    main()
