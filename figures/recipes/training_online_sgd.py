"""Figure: the paper's online-SGD experiment (SPEC §8, last row) as the four training panels.

Setting (``numerics.sgd.experiment.PAPER_SGD``): d = 80, L = 10, gamma = sqrt(1/2), eps = 0.1,
minibatches of 5 fresh samples, lambda_t = 2 / (1 + 1e-4 t), alpha = 1e-3, 200,000 steps, 30 runs
with fresh k*, v*, init uniform on the sphere, test set of 1,000 samples. Simulator: the exact
reduced simulator ``numerics.sgd.reduced.online_sgd_reduced`` (the overlap process has exactly the
law of SGD on d-dimensional vectors, at a cost independent of d). Measured for 15 runs at d = 80:
the full simulator ~700 steps/s, i.e. ~290 s CPU for 200,000 steps, the reduced one ~6,500 steps/s
(~26-31 s CPU). The full run vectorises all 30 runs in one process (one task; ~40 s CPU, less
than two tasks of 15 runs, since the cost per step is mostly numpy call overhead): ``slr
reproduce`` runs recipes on parallel workers, so CPU time is what counts.
Run r is seeded by ``SeedSequence(PAPER_SGD.seed).spawn(n_runs)[r]``, so the quick runs are the
first runs of the full experiment. The numbers do not depend on the executor
(``numerics.executors``), only on the chunking ``runs_per_task``, which is a parameter.

Panels, as the population figures (``figures.training_panels``): excess risk with 95%
bands (the exact population excess risk R(k_t, v_t) - eps^2 in closed form, SPEC §5, and the
test-set excess risk; in the reduced simulator each logged step draws a fresh test set of 1,000
samples per run, whose law at each step is exact, whereas the paper's fixed test set also
correlates the steps); |kappa| and |nu|; chosen runs in the (kappa, nu) plane; distance to M.
Quick mode: 4 runs, steps / 100, serial.
"""

from __future__ import annotations

import math

import numpy as np

from .. import training_plot as panels

NAME = "training_online_sgd"
TITLE = ("Training by online SGD (d = 80, batch 5, lambda_t = 2/(1 + 1e-4 t)): population and "
         "fresh-test-set excess risk, overlaps, (kappa, nu) plane, distance to M")
COST = 40  # seconds of a full compute, measured; orders slr reproduce's work
SEED = 20250115

_ROW = 4                # SPEC §8, fifth row
_LOGGED_POINTS = 200    # logged steps per run (plus the start); each costs a test set per run
_QUICK_DIVISOR = 100
_QUICK_RUNS = 4
_WORKERS = 1           # all runs vectorised in one process: least CPU (slr reproduce runs recipes in parallel)


def params(quick: bool) -> dict:
    from numerics.sgd.experiment import PAPER_SGD as c

    steps = c.n_steps // _QUICK_DIVISOR if quick else c.n_steps
    n_runs = _QUICK_RUNS if quick else c.n_runs
    workers = 1 if quick else _WORKERS
    return {"row": _ROW, "experiment": "online SGD", "init": c.init, "d": c.d, "L": c.L,
            "gamma": float(c.gamma), "eps": float(c.eps),
            "lam": {"schedule": "lam0 / (1 + rate t)", "lam0": float(c.lam0), "rate": float(c.schedule_rate)},
            "alpha": float(c.alpha), "steps": steps, "batch_size": c.batch_size, "test_size": c.test_size,
            "n_runs": n_runs, "seed": int(c.seed), "log_every": max(steps // _LOGGED_POINTS, 1),
            "simulator": "reduced", "workers": workers, "runs_per_task": math.ceil(n_runs / workers),
            "n_show": _QUICK_RUNS if quick else 5, "delta": 0.05}


def experiment_config(p):
    from numerics.sgd.experiment import SGDExperiment

    return SGDExperiment(d=p["d"], L=p["L"], gamma=p["gamma"], eps=p["eps"], lam0=p["lam"]["lam0"],
                         schedule_rate=p["lam"]["rate"], alpha=p["alpha"], n_steps=p["steps"],
                         batch_size=p["batch_size"], n_runs=p["n_runs"], test_size=p["test_size"],
                         log_every=p["log_every"], init=p["init"], simulator=p["simulator"], seed=p["seed"])


def compute(p: dict, rng, progress) -> dict:
    """Run the experiment and reduce it to the arrays of ``training_panels.compute_training_panels``
    plus the test-set excess risk. ``rng`` is unused: the runs are seeded by the experiment's seed."""
    from numerics.dynamics.phase_portrait import manifold_fixed_points
    from numerics.sgd.experiment import run_sgd_experiment
    from theory import Problem, oracle_risk

    config = experiment_config(p)
    executor = p["workers"] if p["workers"] > 1 else None
    with progress(total=1, desc=f"online SGD ({p['n_runs']} runs, {p['steps']:,} steps)") as bar:
        result = run_sgd_experiment(config, executor=executor, runs_per_task=p["runs_per_task"])
        bar.update()
    tr = result.trajectory
    n = tr.n_runs
    abs_kappa, abs_nu = np.abs(tr.kappa), np.abs(tr.nu)
    # Alignment up to sign as numerics.dynamics.experiments.summarize_alignment: min(|kappa|, |nu|) >= 1 - delta.
    ok = np.minimum(abs_kappa, abs_nu) >= 1.0 - p["delta"]
    first = np.where(ok.any(axis=0), tr.steps[np.argmax(ok, axis=0)], -1)
    final = tr.excess_risk[-1]
    shown = np.argsort(final, kind="stable")[
        np.unique(np.round(np.linspace(0, n - 1, min(p["n_show"], n))).astype(int))]
    oracle = oracle_risk(Problem(d=p["d"], L=p["L"], gamma=p["gamma"], eps=0.0, lam=tr.lam))
    fixed = manifold_fixed_points(Problem(d=p["d"], L=p["L"], gamma=p["gamma"], lam=float(tr.lam[-1])))
    out = {"steps": tr.steps, "lam": tr.lam,
           "oracle_excess_risk": np.broadcast_to(np.asarray(oracle, dtype=float), tr.lam.shape).copy(),
           "abs_kappa": abs_kappa, "abs_nu": abs_nu,
           "shown_runs": shown, "kappa_shown": tr.kappa[:, shown], "nu_shown": tr.nu[:, shown],
           "distance_to_M": tr.distance_to_manifold,
           "fixed_points": np.array([(f.kappa, f.nu) for f in fixed]),
           "fixed_kind": np.array([f.kind for f in fixed]),
           "aligned": ok[-1], "first_aligned_step": first, "final_excess_risk": final,
           "oracle_final_excess_risk": np.array(float(np.asarray(oracle).ravel()[-1])),
           "final_test_excess_risk": tr.test_excess_risk[-1]}
    for key, quantity in (("excess_risk", "excess_risk"), ("test_excess_risk", "test_excess_risk")):
        out[f"{key}_mean"], out[f"{key}_lo"], out[f"{key}_hi"] = result.band(quantity)
    return out


def plot(data: dict, p: dict):
    # Drawing helpers live inside plot: the registry keys the cache on the module source except
    # plot, so restyling never recomputes the SGD runs.
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    from ..style import PALETTE

    def summary_text() -> str:
        aligned = data["aligned"].astype(bool)
        median = f"{np.median(data['first_aligned_step'][aligned]):,.0f}" if aligned.any() else "–"
        pop, test = data["final_excess_risk"], data["final_test_excess_risk"]
        se = lambda x: x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
        return (f"aligned (min(|κ|,|ν|) ≥ {1 - p['delta']:g} at the end): {aligned.sum()}/{len(aligned)}\n"
                f"median first aligned step: {median} (logged every {p['log_every']:,})\n"
                f"final R − ε²: {pop.mean():.4f} ± {se(pop):.1e} s.e. "
                f"(oracle {float(data['oracle_final_excess_risk']):.4f})\n"
                f"final test risk − ε²: {test.mean():.4f} ± {se(test):.1e} s.e.")

    def risk_panel(ax):
        t = data["steps"]
        # The noisier test-set curve first, so that the exact population curve stays visible on top.
        curves = (("test_excess_risk", PALETTE["monte_carlo"], "test-set risk − ε² (fresh test sets)"),
                  ("excess_risk", PALETTE["quadrature"], "population R − ε² (closed form)"))
        for key, color, name in curves:
            ax.fill_between(t, data[f"{key}_lo"], data[f"{key}_hi"], color=color, alpha=0.3, lw=0)
            ax.plot(t, data[f"{key}_mean"], color=color, lw=1.0, label=f"{name}: mean")
        ax.plot(t, data["oracle_excess_risk"], "--", color=PALETTE["closed_form"], lw=1.0,
                label="oracle (k*, v*) at λ_t")
        ax.set(yscale="log", xlabel="step t", ylabel="excess risk (risk − ε²)", title="Excess risk (log scale)")
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Patch(color=PALETTE["muted"], alpha=0.3, lw=0))
        labels.append(f"bands: {panels.BAND}")
        ax.legend(handles, labels, loc="upper right", fontsize=6.5)
        ax.text(0.98, 0.71, summary_text(), transform=ax.transAxes, fontsize=6.5, va="top", ha="right",
                bbox={"facecolor": "white", "alpha": 0.85, "lw": 0})

    # Panels 2-4 exactly as the population figures; panel 1 is redrawn with both risks.
    fig = panels.plot_training_panels(data, p)
    fig.axes[0].cla()
    risk_panel(fig.axes[0])
    for step_axis in (fig.axes[0], fig.axes[1], fig.axes[3]):  # 200,000 steps: fewer tick labels
        step_axis.xaxis.set_major_locator(MaxNLocator(5))
    fig.suptitle(f"{p['experiment']} (SPEC §8 row {p['row'] + 1}): minibatches of {p['batch_size']} fresh "
                 f"samples, init uniform on the sphere, d = {p['d']}, L = {p['L']}, γ = √½, ε = {p['eps']:g},\n"
                 f"λ_t = {p['lam']['lam0']:g}/(1 + {p['lam']['rate']:g} t), α = {p['alpha']:g}, "
                 f"{p['steps']:,} steps, {p['n_runs']} runs; exact reduced simulator (the overlaps have the "
                 "law of SGD in R^d);\n"
                 f"test-set risk: a fresh test set of {p['test_size']:,} samples per run at each logged step "
                 "(exact law at each step; the paper's fixed test set also correlates the steps)")
    return fig
