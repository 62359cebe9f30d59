"""Figure: the paper's online-SGD experiment (docs/math/dynamics.md#the-papers-experiments, last row) as the four training panels.

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
bands (the exact population excess risk R(k_t, v_t) - eps^2 in closed form, docs/math/risk.md#closed-form-population-risk, and the
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
TITLE = ('Paper experiment "online SGD": minibatch SGD from uniform on the sphere, d = 80, '
         'lambda_t = 2/(1 + 1e-4 t); population and test-set excess risk')
CAPTION = ("Online SGD on fresh minibatches of 5 samples (d = 80, L = 10, gamma = sqrt(1/2), eps = 0.1, "
           "lambda_t = 2/(1 + 1e-4 t), alpha = 1e-3, 200,000 steps, 30 runs), by the exact reduced simulator: "
           "(a) population excess risk (median and 25%-75% band of each group of runs) and test-set excess "
           "risk (dashed), (b) |kappa| and |nu|, (c) runs in the (kappa, nu) plane, (d) distance to M.")
COST = 8.7  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
SEED = 20250115

_ROW = 4                # docs/math/dynamics.md#the-papers-experiments, fifth row
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
        # progress: step-level bars, shown on a terminal or forwarded from a worker process
        result = run_sgd_experiment(config, executor=executor, runs_per_task=p["runs_per_task"], progress=True)
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
           "final_test_excess_risk": tr.test_excess_risk[-1],
           "excess_risk": tr.excess_risk, "test_excess_risk": tr.test_excess_risk}
    for key, quantity in (("excess_risk", "excess_risk"), ("test_excess_risk", "test_excess_risk")):
        out[f"{key}_mean"], out[f"{key}_lo"], out[f"{key}_hi"] = result.band(quantity)
    return out


def plot(data: dict, p: dict):
    # Drawing helpers live inside plot: the registry keys the cache on the module source except
    # plot, so restyling never recomputes the SGD runs.
    from matplotlib.lines import Line2D

    from ..style import PALETTE

    test_colour = PALETTE["closed_form"]

    def risk_panel(ax, data, p):
        # Population risk by group (median, 25%-75% band) as the other training figures; the
        # test-set risk on top of it, thin and dashed, so that neither hides the other.
        t = data["steps"]
        for name, runs in panels.groups(data).items():
            panels.group_band(ax, t, data["excess_risk"], runs, panels.GROUP_COLOURS[name])
            ax.plot(t, np.median(data["test_excess_risk"][:, runs], axis=1), color=test_colour, ls="--", lw=0.7)
        ax.plot(t, data["oracle_excess_risk"], ":", color=PALETTE["closed_form"], lw=1.0)
        ax.set(yscale="log", ylabel="excess risk (risk − ε²)", title="(a) excess risk: population and test set")

    entries = [(Line2D([], [], color=test_colour, ls="--", lw=0.7),
                "test-set risk − ε², median")]
    return panels.plot_training_panels(
        data, p, method=f"online SGD, minibatches of {p['batch_size']} fresh samples",
        risk_panel=risk_panel, risk_entries=entries)
