"""The exit time of online SGD from a window of fixed radius R around the saddle (0, 0), and its slope
in log d (docs/math/highdim.md#the-exit-time-against-log-d).

Near the saddle the on-M coordinate xi = <r, (kappa, nu)> grows like e^{mu tau} from an amplitude of
scale sigma, sigma^2 = 1/d + alpha Q / (2 B mu) (docs/math/highdim.md#escape-from-the-saddle), so the
first time |x| reaches a fixed R is tau = log(R / |xi_eff|) / mu with |xi_eff| half-normal of scale
sigma. At alpha = c/d both terms of sigma^2 scale like 1/d: the median exit time is

    tau_med(d) = log(R / (z_med sigma(d))) / mu,   z_med = 0.6745 (the half-normal median),

whose slope in log d is 1/(2 mu) when mu is free of d (lambda = lambda_bar / s). The exit is read
like ``escape_window``'s: the first logged time with max(|(kappa, nu)|, |(theta, eta)|) >= R.
"""

from __future__ import annotations

import numpy as np

from ..dynamics.initial import sample_initial_overlaps
from ..montecarlo.rate_fits import weighted_slope
from .effective_flow import check_highdim_settings
from .escape import half_normal_ppf, saddle_escape

__all__ = ["linear_exit_time", "sgd_exit_times", "median_standard_error", "log_d_slope"]


def linear_exit_time(problem, *, c, batch_size=1, exit_radius, q=0.5) -> float:
    """The q-quantile of the exit time from radius ``exit_radius`` predicted by the linearisation at
    the saddle (module docstring): log(R / (sigma z_{1-q})) / mu, z the half-normal quantile (a large
    |xi| leaves early)."""
    R = float(exit_radius)
    if not R > 0.0:
        raise ValueError(f"exit_radius={exit_radius!r} is not allowed: need R > 0")
    if not 0.0 < q < 1.0:
        raise ValueError(f"q={q!r} is not allowed: need 0 < q < 1")
    mu, _, sigma = saddle_escape(problem, c=c, batch_size=batch_size)
    return float(np.log(R / (sigma * half_normal_ppf(1.0 - q))) / mu)


def sgd_exit_times(problem, *, c, batch_size=1, n_runs, rng, exit_radius, t_max, log_dt=0.01):
    """(exit times, on M): ``n_runs`` runs of the exact reduced simulator at step c/d from the initial
    law on M (``rng``: the initial overlaps from one child, the runs from the other), logged every
    ``log_dt`` of flow time up to ``t_max``; the exit time is the first logged time with
    max(|(kappa, nu)|, |(theta, eta)|) >= ``exit_radius`` (inf if none), ``on_m`` whether |(kappa, nu)|
    is the larger there."""
    from ..sgd.reduced import online_sgd_reduced

    d, _, _, _, alpha = check_highdim_settings(problem, c, batch_size)
    for name, value in (("exit_radius", exit_radius), ("t_max", t_max), ("log_dt", log_dt)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name}={value!r} is not allowed: need a finite number > 0")
    every = max(1, int(round(log_dt / alpha)))
    init_rng, run_rng = rng.spawn(2)
    init = sample_initial_overlaps(d, n_runs, init_rng, on_manifold=True)
    run = online_sgd_reduced(problem, init, alpha=alpha, n_steps=every * int(np.ceil(t_max / (every * alpha))),
                             batch_size=batch_size, rng=run_rng, log_every=every)
    on = np.hypot(np.asarray(run.kappa), np.asarray(run.nu))
    off = np.hypot(np.asarray(run.theta), np.asarray(run.eta))
    out = np.maximum(on, off) >= exit_radius
    first, cols = np.argmax(out, axis=0), np.arange(n_runs)
    left = out.any(axis=0)
    times = np.where(left, np.asarray(run.time)[first], np.inf)
    return times, left & (on[first, cols] >= off[first, cols])


def median_standard_error(times, rng, n_boot=2000) -> float:
    """Bootstrap standard error of the sample median of ``times`` (inf allowed below half of them:
    the median is then finite in every resample that keeps it so; ValueError if the median is inf)."""
    times = np.asarray(times, dtype=float)
    if not np.isfinite(np.median(times)):
        raise ValueError(f"times: {int(np.sum(~np.isfinite(times)))} of {times.size} are not finite, "
                         "so the median is not; need fewer than half censored")
    idx = rng.integers(0, times.size, size=(n_boot, times.size))
    meds = np.median(times[idx], axis=1)
    return float(np.std(meds[np.isfinite(meds)], ddof=1))


def log_d_slope(d, medians, stderr):
    """(slope, its standard error): weighted least squares of ``medians`` on a + b log d, weights
    1 / stderr^2 (the medians at different d are independent); ``numerics.montecarlo.weighted_slope``."""
    d, stderr = np.asarray(d, dtype=float), np.asarray(stderr, dtype=float)
    if not (np.all(d > 0) and np.unique(d).size >= 2):
        raise ValueError(f"d={d!r} is not allowed: need d > 0 and at least two distinct values")
    if not np.all(stderr > 0):
        raise ValueError(f"stderr={stderr!r} is not allowed: need every standard error > 0")
    return weighted_slope(np.log(d), medians, stderr)
