"""Figure: online SGD at step alpha = c/d in high dimension (docs/math/highdim.md).

(a), (b) Mean kappa(tau), nu(tau) of the exact reduced simulator (``numerics.sgd.reduced``) at
d = 10^2, 10^3, 10^4 in flow time tau = alpha x steps, against the effective ODE F + (c/d) D
(``numerics.highdim.effective_flow``) and the population flow F, through
``numerics.highdim.compare_with_sgd``. Setting of docs/math/highdim.md#convergence-in-d-and-in-c:
lambda = 2/s (s = sqrt(d/2): gate arguments free of d), c = 0.5, B = 1, start (0.2, 0.2) on M,
flow time 1. The ODE is the mean drift only: it misses the O(c) fluctuation effect of the fast
overlap (docs/math/highdim.md#fluctuations-of-the-fast-overlap), which is visible here.
(c) First-alignment time (min(|kappa|, |nu|) >= 1 - delta, delta = 0.2) of reduced SGD from the initial law on M
(``sample_initial_overlaps(on_manifold=True)``) against log d, lambda = 1/s, c = 0.5, B = 1, each run only until it
aligns (``online_sgd_reduced(until=...)``), with the law predicted by ``numerics.highdim.sgd_escape_law`` (both
unstable modes of the saddle, docs/math/highdim.md#two-unstable-modes-under-sgd): the quartiles of the times of the
runs aligned by ``t_max`` and the share not aligned by then (mostly the runs that leave the saddle off M and never
align), the same two statistics for the SGD runs and the predicted draws.
(d) The aligned fixed point (kappa*, nu*) of the drift of one run against c (``numerics.highdim.fixed_point_branch``;
d = 10^3, lambda = 1/s, B = 1), its stability, the grid interval where it is lost, c_crit
(``numerics.highdim.critical_step``), and the final mean overlaps of reduced SGD at c = 2 from its fixed point and
at 0.8 and 1.25 c_crit from (0.9, 0.9) on M: the data of the claim ``highdim-largest-step``, read from this figure.
Randomness: one child of the recipe's Generator per run group (``Generator.spawn``).
Cost from a cold cache: see COST and benchmarks/RESULTS.md ("figure highdim_sgd").
"""

from __future__ import annotations

import numpy as np

NAME = "highdim_sgd"
TITLE = "Online SGD at step c/d: effective ODE across d, escape time against log d, the fixed point against c"
CAPTION = ("Online SGD at step c/d (exact reduced simulator): (a, b) mean overlaps against the effective ODE "
           "and the population flow at d = 10^2, 10^3, 10^4; (c) first-alignment time against d with the "
           "law of the escape along both unstable modes; (d) the aligned fixed point of one run against c and SGD on both sides of c_crit.")
COST = 9.2  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
SEED = 20250118

# quick: a smoke run (delta = 0.5 shortens the integration of the drift of one run, the law's main cost)
_SIZES = {True: {"path_d": [100, 1000], "path_runs": 16, "path_t": 0.25, "escape_d": [1000],
                 "escape_runs": 16, "escape_draws": 500, "delta": 0.5, "t_max": 14.0, "branch_c": [1.0],
                 "step_runs": 60, "step_t": 12.0},
          False: {"path_d": [100, 1000, 10_000], "path_runs": 64, "path_t": 1.0, "escape_d": [1000, 3162, 10_000],
                  "escape_runs": 24, "escape_draws": 2000, "delta": 0.2, "t_max": 16.0,
                  "branch_c": [0.5, 1.0, 2.0, 3.0, 4.5, 6.0, 7.5, 8.0],
                  "step_runs": 200, "step_t": 12.0}}
# step_t 12: the claim highdim-largest-step is decided by flow time 6 (docs/math/highdim.md#the-largest-step)
_Z95 = 1.959963984540054
_STEP_QUADRATURE = 0.4  # (d), (a, b)'s effective ODE: half the nodes of 0.2 (docs/math/highdim.md#the-largest-step)


def params(quick: bool) -> dict:
    from theory import PAPER_GAMMA, PAPER_L

    return {"L": int(PAPER_L), "gamma": float(PAPER_GAMMA), "eps": 0.1, "batch_size": 1,
            "path_c": 0.5, "path_lam_bar": 2.0, "path_start": [0.2, 0.2, 0.0, 0.0, 0.0], "path_log": 20,
            "escape_c": 0.5, "escape_lam_bar": 1.0, "escape_log_dt": 0.05,
            "step_d": 1000, "step_lam_bar": 1.0, "step_start": [0.9, 0.9], "step_c_fixed": 2.0,
            "step_sides": [0.8, 1.25], "crit_c_start": 2.0, "crit_factor": 2.0, "crit_tol": 0.1, **_SIZES[quick]}


def _problem(p, d, lam_bar):
    from theory import Problem

    return Problem(d=d, L=p["L"], gamma=p["gamma"], eps=p["eps"], lam=lam_bar / np.sqrt(d / 2.0))


def _paths(p, rngs):
    from numerics.dynamics.ode import OdeOptions
    from numerics.highdim import compare_with_sgd
    out, ode = {}, OdeOptions(method="LSODA", rtol=1e-6, atol=1e-9)  # only drawn (SEs ~1e-3): <= 4e-7 from rtol 1e-8
    for i, (d, rng) in enumerate(zip(p["path_d"], rngs)):
        cmp = compare_with_sgd(_problem(p, d, p["path_lam_bar"]), p["path_start"], c=p["path_c"],
                               batch_size=p["batch_size"], t_end=p["path_t"], n_runs=p["path_runs"], rng=rng,
                               n_log=p["path_log"], predictions=("population", "effective"), ode=ode, quadrature_step=_STEP_QUADRATURE)
        out.update({f"path_t_{i}": cmp.t, f"path_mean_{i}": cmp.sgd_mean[:2], f"path_se_{i}": cmp.sgd_stderr[:2],
                    f"path_population_{i}": cmp.predictions["population"][:2],
                    f"path_effective_{i}": cmp.predictions["effective"][:2]})
    return out


def first_alignment(run, delta):
    """Per run: the first logged flow time with min(|kappa|, |nu|) >= 1 - delta, inf if none."""
    ok = np.minimum(np.abs(run.kappa), np.abs(run.nu)) >= 1.0 - delta
    return np.where(ok.any(axis=0), run.time[np.argmax(ok, axis=0)], np.inf)


def aligned_summary(times, t_max, q):
    """(quantiles q of the times <= t_max, share of the times > t_max): the statistics of panel (c),
    the same for SGD runs (inf: not aligned by t_max) and for draws of the predicted law."""
    times = np.asarray(times, dtype=float)
    done = times[times <= t_max]
    quantiles = np.quantile(done, q, method="inverted_cdf") if done.size else np.full(len(q), np.nan)
    return quantiles, float(np.mean(times > t_max))


def _escape(p, rngs):
    from numerics.sgd.reduced import online_sgd_reduced
    from numerics.dynamics.initial import sample_initial_overlaps
    from numerics.highdim import sgd_escape_law

    q = np.array([0.25, 0.5, 0.75])
    times, predicted, measured, late, rates = [], [], [], [], []
    for d, rng in zip(p["escape_d"], rngs):
        problem, alpha = _problem(p, d, p["escape_lam_bar"]), p["escape_c"] / d
        init_rng, run_rng, law_rng = rng.spawn(3)
        law = sgd_escape_law(problem, c=p["escape_c"], batch_size=p["batch_size"], rng=law_rng,
                             n_samples=p["escape_draws"], delta=p["delta"], t_max=p["t_max"])
        init = sample_initial_overlaps(d, p["escape_runs"], init_rng, on_manifold=True)
        run = online_sgd_reduced(problem, init, alpha=alpha, n_steps=int(round(p["t_max"] / alpha)), rng=run_rng,
                                 batch_size=p["batch_size"], log_every=max(1, int(round(p["escape_log_dt"] / alpha))),
                                 until=lambda o: np.minimum(np.abs(o["kappa"]), np.abs(o["nu"])) >= 1 - p["delta"])
        times.append(first_alignment(run, p["delta"]))
        (pq, pl), (mq, ml) = aligned_summary(law.times, p["t_max"], q), aligned_summary(times[-1], p["t_max"], q)
        predicted.append(pq)
        measured.append(mq)
        late.append((pl, law.slow_fraction, ml))
        rates.append((law.rate, law.rate_off))
    return {"escape_quantiles": q, "escape_times": np.array(times), "escape_predicted": np.array(predicted),
            "escape_measured": np.array(measured), "escape_late": np.array(late), "escape_rate": np.array(rates)}


def _sgd_final(problem, p, c, start, rng):
    """Final (kappa, nu, theta) of step_runs reduced SGD runs at step c/d from ``start`` on M, flow time step_t."""
    from numerics.sgd.reduced import online_sgd_reduced
    from theory.parameters import OVERLAP_NAMES, Overlaps

    init = Overlaps(**{k: np.full(p["step_runs"], x) for k, x in zip(OVERLAP_NAMES, (*start, 0.0, 0.0, 0.0))})
    n = int(round(p["step_t"] * p["step_d"] / c))
    run = online_sgd_reduced(problem, init, alpha=c / p["step_d"], n_steps=n, batch_size=p["batch_size"], rng=rng, log_every=n)
    return np.stack([run.kappa[-1], run.nu[-1], run.theta[-1]])


def _step(p, rngs):
    """Panel (d) and the claim highdim-largest-step: the branch on the grid branch_c, c_crit (critical_step to crit_tol),
    the fixed points at step_c_fixed and c_crit, reduced SGD at step_c_fixed and at step_sides x c_crit."""
    from numerics.highdim import aligned_fixed_point, critical_step, fixed_point_branch

    B, q = p["batch_size"], {"quadrature_step": _STEP_QUADRATURE}
    problem = _problem(p, p["step_d"], p["step_lam_bar"])
    branch = fixed_point_branch(problem, p["branch_c"], batch_size=B, **q)
    out = {f"branch_{k}": np.array([getattr(f, k) for f in branch]) for k in ("c", "kappa", "nu", "stable", "instability")}
    # c_crit lies between the last stable point and the next grid c (unstable, or where the branch is lost)
    last = int(np.flatnonzero(out["branch_stable"])[-1]) if out["branch_stable"].any() else -1
    upper = p["branch_c"][last + 1] if last + 1 < len(p["branch_c"]) else np.inf
    out["c_crit_bracket"] = np.array([p["branch_c"][last] if last >= 0 else 0.0, upper])
    on_grid = [f for f in branch if f.c == p["step_c_fixed"]]  # the fixed point at step_c_fixed: the branch's if on it
    fixed = on_grid[0] if on_grid else fixed_point_branch(problem, [p["step_c_fixed"]], batch_size=B, **q)[0]
    crit = critical_step(problem, batch_size=B, c_start=p["crit_c_start"], factor=p["crit_factor"], c_tol=p["crit_tol"],
                         first=next((f for f in branch if f.c == p["crit_c_start"]), None), **q)  # the branch's point
    end = crit.at_crit or aligned_fixed_point(problem, c=crit.c_crit, batch_size=B, start=(crit.below.kappa, crit.below.nu), **q)
    out.update({"c_crit": np.array(crit.c_crit), "c_crit_kind": np.array(crit.kind),
                "fixed_point": np.array([fixed.kappa, fixed.nu, fixed.s2_theta_variance]),
                "crit_end": np.array([end.kappa, end.nu])})
    runs = [(p["step_c_fixed"], (fixed.kappa, fixed.nu))] + [(f * crit.c_crit, p["step_start"]) for f in p["step_sides"]]
    finals = [_sgd_final(problem, p, c, start, rng) for (c, start), rng in zip(runs, rngs)]
    out["step_c"], out["step_runs_final"] = np.array([c for c, _ in runs]), np.array(finals)  # (3, kappa/nu/theta, runs)
    x = out["step_runs_final"][:, :2]
    out["step_final"] = np.stack([x.mean(axis=2), x.std(axis=2, ddof=1) / np.sqrt(x.shape[2])], axis=1)
    return out


def compute(p: dict, rng: np.random.Generator, progress) -> dict:
    streams = rng.spawn(len(p["path_d"]) + len(p["escape_d"]) + 1 + len(p["step_sides"]))
    a, b = len(p["path_d"]), len(p["path_d"]) + len(p["escape_d"])
    out = {}
    with progress(total=3, desc="SGD at step c/d") as bar:
        out.update(_paths(p, streams[:a]))
        bar.update()
        out.update(_escape(p, streams[a:b]))
        bar.update()
        out.update(_step(p, streams[b:]))
        bar.update()
    return out


def _draw_escape(ax, data, p):
    """Panel (c): quartiles of the aligned runs' times, predicted (band, line) and SGD (points, ticks),
    and the shares not aligned by t_max in the legend."""
    from matplotlib.ticker import NullFormatter

    from ..style import PALETTE

    d = np.array(p["escape_d"], dtype=float)
    pred, meas, times, late = (data[k] for k in ("escape_predicted", "escape_measured", "escape_times", "escape_late"))
    ax.fill_between(d, pred[:, 0], pred[:, 2], color=PALETTE["quadrature"], alpha=0.25, lw=0)
    ax.plot(d, pred[:, 1], "-", color=PALETTE["quadrature"],
            label="(c) law with both unstable modes: median, quartiles of the aligned;\n"
                  f"not aligned by τ = {p['t_max']:g}: " + ", ".join(f"{x:.0%}" for x in late[:, 0]))
    for i, x in enumerate(d):
        aligned = times[i][np.isfinite(times[i])]
        ax.plot(np.full(aligned.size, x * 1.06), aligned, "_", ms=4, color=PALETTE["muted"])
    ax.errorbar(d, meas[:, 1], yerr=[meas[:, 1] - meas[:, 0], meas[:, 2] - meas[:, 1]], fmt="o",
                color=PALETTE["monte_carlo"], capsize=2,
                label=f"(c) SGD, {p['escape_runs']} runs (ticks): median, quartiles of the aligned;\n"
                      f"not aligned by τ = {p['t_max']:g}: " + ", ".join(f"{x:.0%}" for x in late[:, 2]))
    ax.set(xscale="log", xlim=(d.min() / 1.5, d.max() * 1.5), xticks=d, xticklabels=[f"{x:,.0f}" for x in d],
           xlabel="d", ylabel=f"first alignment time τ (δ = {p['delta']:g})",
           title=f"(c) escape from the saddle, c = {p['escape_c']:g}, λ = 1/s")
    ax.xaxis.set_minor_formatter(NullFormatter())


# long function: the four panels are drawn inside plot, the one function the cache key leaves out, so that
# restyling the figure never recomputes its data (~1 min)
def plot(data: dict, p: dict):
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from ..style import DOUBLE_COLUMN, PALETTE

    fig = Figure(figsize=(DOUBLE_COLUMN, 7.6), layout="constrained")
    (ax_k, ax_n), (ax_e, ax_c) = fig.subplots(2, 2)
    shades = [PALETTE[k] for k in ("quadrature", "monte_carlo", "accent")]
    for ax, j, symbol in ((ax_k, 0, "κ"), (ax_n, 1, "ν")):
        for i, (d, color) in enumerate(zip(p["path_d"], shades)):
            t, m, se = data[f"path_t_{i}"], data[f"path_mean_{i}"][j], data[f"path_se_{i}"][j]
            ax.fill_between(t, m - _Z95 * se, m + _Z95 * se, color=color, alpha=0.25, lw=0)
            ax.plot(t, m, "o", ms=2.5, color=color, label=f"(a, b) d = {d:,}: mean SGD, 95% band")
            ax.plot(t, data[f"path_effective_{i}"][j], "-", color=color, lw=1.2)
            ax.plot(t, data[f"path_population_{i}"][j], ":", color=color, lw=1.2)
        ax.set(xlabel="flow time τ = (c/d) × steps", ylabel=symbol,
               title=f"({'ab'[j]}) {symbol}(τ), λ = 2/s, c = {p['path_c']:g}, {p['path_runs']} runs")
    handles, labels = ax_k.get_legend_handles_labels()
    handles += [Line2D([], [], color=PALETTE["closed_form"], lw=1.2),
                Line2D([], [], color=PALETTE["closed_form"], lw=1.2, ls=":")]
    labels += ["(a, b) effective ODE F + (c/d)D (mean drift)", "(a, b) population flow F"]
    _draw_escape(ax_e, data, p)
    c, s = data["branch_c"], data["branch_stable"]
    for key, symbol, color in (("kappa", "κ*", PALETTE["quadrature"]), ("nu", "ν*", PALETTE["flow"])):
        y = data[f"branch_{key}"]
        ax_c.plot(c, y, "-", color=color, lw=1.0)
        ax_c.plot(c[s], y[s], "o", ms=3, color=color, label=f"(d) {symbol}: fixed point of one run's drift (open: unstable)")
        ax_c.plot(c[~s], y[~s], "o", ms=3, mfc="white", color=color)
    f = data["step_final"]
    for j, color in ((0, PALETTE["monte_carlo"]), (1, PALETTE["orange"])):
        ax_c.errorbar(data["step_c"], f[:, 0, j], yerr=_Z95 * f[:, 1, j], fmt="s", ms=3, color=color, capsize=2,
                      label=f"(d) SGD {'κν'[j]} at τ = {p['step_t']:g}, mean ± 1.96 s.e." + ("" if j else (
                          f"\n    c = {p['step_c_fixed']:g} from its fixed point, "
                          + ", ".join(f"{x:g}" for x in p["step_sides"]) + " c_crit from (0.9, 0.9)")))
    ax_c.axvline(float(data["c_crit"]), color=PALETTE["muted"], lw=0.8, ls="--",
                 label=f"(d) c_crit = {float(data['c_crit']):.2f} (critical_step, to {p['crit_tol']:.0%})")
    lo, hi = data["c_crit_bracket"]
    if np.isfinite(hi):
        ax_c.axvspan(lo, hi, color=PALETTE["muted"], alpha=0.3, lw=0, label="(d) c_crit lies in this grid interval")
    ax_c.set(xlabel="c (step α = c/d)", ylabel="overlap at the fixed point",
             title=f"(d) aligned fixed point, d = {p['step_d']:,}, λ = 1/s")
    for ax in (ax_e, ax_c):
        more = ax.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=7)
    fig.suptitle(f"Online SGD at step c/d, exact reduced simulator (L = {p['L']}, γ = √½, ε = {p['eps']:g}, "
                 f"B = {p['batch_size']})")
    return fig
