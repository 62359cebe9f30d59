"""The escape of online SGD from the saddle: where the window SDE and the law of the first-alignment
time miss the exact reduced simulator (docs/math/highdim.md#two-unstable-modes-under-sgd).
Run: python benchmarks/bench_highdim_escape_law.py [--d 100,1000] [--window 150 (0: skip)] [--runs 400]
[--delta 0.2] [--order 2 (the window's expansion about the saddle: none, 1, 2)]

lambda = 1/s, c = 0.5, B = 1, eps = 0, from the initial law on M. Per d:
1. the median exit time of the window SDE as ``numerics.highdim.escape_window`` runs it (alpha D
   linearised at the saddle, noise covariance C_0 of the saddle; 4,000 draws), against the same
   Euler-Maruyama scheme with the drift F + alpha D(x) and the noise covariance C(x) of the current
   state (a gradient-moment quadrature per draw and step, ``--window`` draws), and against the
   noise kept at C_0 but D(x) of the state: which linearisation makes the window leave early;
2. ``--runs`` reduced SGD runs to flow time 16: their median exit time, the z-scores of the fraction
   aligned (min(|kappa|, |nu|) >= 1 - delta, logged every 0.01) by the quantiles 10%, 25%, 50% of
   ``numerics.highdim.sgd_escape_law`` (binomial variance of the runs plus that of the 4,000 draws),
   and the residual of each on-M run's alignment time against the law's map from its own exit,
   tau_exit + tau_after(R r) + log(R / |<r, x_exit>|) / mu (mean, standard error).
``--order`` 1 or 2: the window of the law (and of step 1's first line) with C and alpha D expanded about
the saddle to that order (docs/math/highdim.md#the-state-dependence-of-the-window). Prints CPU time.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from numerics import online_sgd_reduced
from numerics.dynamics.initial import sample_initial_overlaps
from numerics.highdim import escape_window, increment_covariance, sgd_escape_law
from numerics.highdim.fluctuations import population_velocity
from theory import PAPER_GAMMA, PAPER_L, Problem
from theory.highdim import gradient_moments, second_order_drift

C, DT, T_END, LEVELS = 0.5, 0.01, 16.0, np.array([0.1, 0.25, 0.5])


def _arg(name, default, cast):
    if name in sys.argv:
        return [cast(x) for x in sys.argv[sys.argv.index(name) + 1].split(",")]
    return default


def state_window(problem, radius, n, rng, state_noise=True):
    """Exit times of the Euler-Maruyama window with F + alpha D(x) and noise C(x) (or C_0)."""
    d, alpha = problem.d, C / problem.d
    o = sample_initial_overlaps(d, n, rng, on_manifold=True)
    x = np.stack([o.kappa, o.nu, o.theta, o.eta, o.rho], axis=1)
    zero = (0.0,) * 5
    C0 = increment_covariance(gradient_moments(problem, zero, check=False), zero)
    t_exit, tau = np.full(n, np.inf), 0.0
    while np.isinf(t_exit).any() and tau < 50.0:
        tau += DT
        for i in np.flatnonzero(np.isinf(t_exit)):
            xi = tuple(x[i])
            m = gradient_moments(problem, xi, check=False)
            w, U = np.linalg.eigh(increment_covariance(m, xi) if state_noise else C0)
            x[i] = (x[i] + DT * (population_velocity(problem, x[i][None])[0] + alpha * second_order_drift(m, xi, 1))
                    + (U * np.sqrt(np.clip(w, 0.0, None) * alpha * DT)) @ rng.standard_normal(5))
            if max(np.hypot(x[i, 0], x[i, 1]), np.hypot(x[i, 2], x[i, 3])) >= radius:
                t_exit[i] = tau
    return t_exit


def sgd_against_law(problem, law, n_runs, delta, rng):
    """(median exit time, quantile z-scores, residual mean, its standard error) of reduced SGD."""
    d = problem.d
    every = int(round(DT * d / C))
    init = sample_initial_overlaps(d, n_runs, rng, on_manifold=True)
    run = online_sgd_reduced(problem, init, alpha=C / d, n_steps=every * int(round(T_END / DT)), batch_size=1,
                             rng=rng, log_every=every)
    t, K, N = np.asarray(run.time), np.asarray(run.kappa), np.asarray(run.nu)
    on, off = np.hypot(K, N), np.hypot(np.asarray(run.theta), np.asarray(run.eta))
    first, cols = np.argmax(np.maximum(on, off) >= law.exit_radius, axis=0), np.arange(n_runs)
    ok = np.minimum(np.abs(K), np.abs(N)) >= 1.0 - delta
    aligned = np.where(ok.any(axis=0), t[np.argmax(ok, axis=0)], np.inf)
    frac = np.array([np.mean(aligned <= q) for q in law.quantile(LEVELS)])
    z = (frac - LEVELS) / np.sqrt(LEVELS * (1 - LEVELS) * (1 / n_runs + 1 / len(law.times)))
    amp = np.abs(K[first, cols] * law.direction[0] + N[first, cols] * law.direction[1])
    own = t[first] + law.tau_after + np.log(law.exit_radius / amp) / law.rate
    sel = (on[first, cols] >= off[first, cols]) & np.isfinite(aligned)
    res = aligned[sel] - own[sel]
    late = int((on[first, cols] >= off[first, cols]).sum() - sel.sum())
    if late:
        print(f"  warning: {late} on-M runs not aligned by {T_END}")
    return float(np.median(t[first])), z, float(res.mean()), float(res.std(ddof=1) / np.sqrt(res.size))


def main():
    n_window, n_runs = _arg("--window", [150], int)[0], _arg("--runs", [400], int)[0]
    delta = _arg("--delta", [0.2], float)[0]
    order = _arg("--order", [None], lambda v: None if v == "none" else int(v))[0]
    for d in _arg("--d", [100, 1000], int):
        problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0, lam=1.0 / np.sqrt(d / 2.0))
        rngs = [np.random.default_rng(s) for s in np.random.SeedSequence([d, 20251201]).spawn(5)]
        t0 = time.process_time()
        win = escape_window(problem, c=C, rng=rngs[0], n_samples=4000, dt=DT, expansion_order=order)
        print(f"d = {d}: window as escape_window (4,000 draws, expansion order {order}): median exit {np.median(win.exit_times):.3f}")
        variants = (("F + alpha D(x), C(x)", True, rngs[1]), ("F + alpha D(x), C_0", False, rngs[2]))
        for label, noise, rng in variants if n_window > 0 else ():
            ex = state_window(problem, win.exit_radius, n_window, rng, noise)
            # standard error of a median: sqrt(pi / 2) sd / sqrt(n) for a near-normal law
            print(f"  window with {label} ({n_window} draws): median exit {np.median(ex):.3f} "
                  f"(+- {np.sqrt(np.pi / 2) * ex.std() / np.sqrt(n_window):.3f})")
        if d >= 1000:
            law = sgd_escape_law(problem, c=C, rng=rngs[3], n_samples=4000, delta=delta, expansion_order=order)
            med, z, mean, se = sgd_against_law(problem, law, n_runs, delta, rngs[4])
            print(f"  law (delta = {delta:g}): quantiles {np.round(law.quantile(LEVELS), 2)}; SGD ({n_runs} runs) "
                  f"median exit {med:.3f}; z of the fraction aligned by them {np.round(z, 2)}; residual of the "
                  f"on-M runs against the law's map from their own exit {mean:+.3f} +- {se:.3f}")
        print(f"  CPU {time.process_time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
