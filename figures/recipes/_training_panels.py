"""Shared compute and plot of the four training figures (paper's population experiments, SPEC §8
rows 1-4); a private module (the registry skips names starting with '_').

Data: ``numerics.experiments.run_population_experiment`` (exact population PGD in overlap
coordinates, paper Definition 1; exact at every d), n_runs runs, run r seeded by
``SeedSequence(seed).spawn(n_runs)[r]``, so the runs of a quick smoke run are the first runs of
the full one. Four panels against the step t:

1. excess risk R - eps^2: mean over runs and the 95% confidence band of that mean,
   mean +- 1.96 stderr (stderr = sample standard deviation / sqrt(n_runs), normal
   approximation); dashed: the oracle's excess risk R(k*, v*) - eps^2 at lambda_t;
2. |kappa| and |nu|: every run (thin) and the mean over runs (thick);
3. the (kappa, nu) plane: n_show runs, evenly spaced in the ranking of their final excess risk
   (so that stalled and aligned runs both appear), with the five fixed points of the gradient
   flow on M and their type within M (``numerics.manifold_dynamics``, at the last lambda), and
   the separatrix for the initialisation on M (off M the runs are not confined to the plane);
4. the distance sqrt(theta^2 + eta^2 + rho^2) to M, log scale, values below the machine
   epsilon drawn at it (the exact recursion keeps a start on M on M: distance exactly 0).

Annotation: ``numerics.experiments.summarize_alignment`` (aligned up to sign when
min(|kappa|, |nu|) >= 1 - delta at the last step; first aligned step at the logging resolution).
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEPENDS", "BAND", "experiment_params", "compute_training_panels", "plot_training_panels"]

# Modules whose source keys the cache of every training recipe (besides the recipe itself).
DEPENDS = ("figures.recipes._training_panels", "numerics.experiments", "numerics.pgd",
           "numerics.lean_partials", "numerics.overlap_algebra", "numerics.initial",
           "numerics.schedules", "numerics.manifold_dynamics", "numerics.flow", "theory.risk",
           "theory.zeta")

BAND = "mean ± 1.96 s.e. over runs (95% CI of the mean)"
_Z_BAND = 1.96          # two-sided 95% normal quantile
_LOGGED_POINTS = 400    # logged steps per run (plus the start)
_QUICK_DIVISOR = 50     # quick mode: steps / 50
_QUICK_RUNS = 4


def experiment_params(row: int, quick: bool) -> dict:
    """JSON parameters of SPEC §8 row ``row`` (0-3) as ``numerics.experiments.PAPER_EXPERIMENTS``
    defines it; quick: 4 runs and steps / 50."""
    from numerics.experiments import PAPER_EXPERIMENTS
    from numerics.schedules import PaperSchedule

    c = PAPER_EXPERIMENTS[row]
    if isinstance(c.lam, PaperSchedule):
        lam = {"schedule": "lam0 / (1 + rate t)", "lam0": float(c.lam.lam0), "rate": float(c.lam.rate)}
    elif callable(c.lam):
        raise ValueError(f"lam={c.lam!r} of experiment {c.name!r} is not allowed: a number or a "
                         "PaperSchedule is needed to key the cache")
    else:
        lam = float(c.lam)
    steps = c.steps // _QUICK_DIVISOR if quick else c.steps
    return {"row": row, "experiment": c.name, "init": c.init, "d": c.d, "L": c.L, "gamma": float(c.gamma),
            "eps": float(c.eps), "lam": lam, "alpha": float(c.alpha), "steps": steps,
            "n_runs": _QUICK_RUNS if quick else c.n_runs, "seed": c.seed,
            "log_every": max(steps // _LOGGED_POINTS, 1), "n_show": _QUICK_RUNS if quick else 5,
            "delta": 0.05}


def _config(p):
    from numerics.experiments import PopulationExperiment
    from numerics.schedules import PaperSchedule

    lam = PaperSchedule(lam0=p["lam"]["lam0"], rate=p["lam"]["rate"]) if isinstance(p["lam"], dict) else p["lam"]
    return PopulationExperiment(name=p["experiment"], d=p["d"], L=p["L"], gamma=p["gamma"], eps=p["eps"],
                                lam=lam, alpha=p["alpha"], steps=p["steps"], init=p["init"],
                                n_runs=p["n_runs"], seed=p["seed"])


def compute_training_panels(p: dict, rng: np.random.Generator, progress) -> dict:
    """Run the experiment of ``p`` and reduce it to the arrays the four panels draw. ``rng`` is
    unused: the runs are seeded by the experiment's own ``seed`` (SPEC §8 rows share no stream)."""
    from numerics.experiments import run_population_experiment, summarize_alignment
    from numerics.manifold_dynamics import manifold_fixed_points, separatrix
    from theory import Problem, oracle_risk

    config = _config(p)
    with progress(total=1, desc=f"PGD: {config.name}") as bar:
        result = run_population_experiment(config, log_every=p["log_every"])
        bar.update()
    log = result.log
    n = config.n_runs
    risk = log.excess_risk
    stderr = risk.std(axis=1, ddof=1) / np.sqrt(n)
    lam_t = log.lam[:, 0]
    oracle = oracle_risk(Problem(d=config.d, L=config.L, gamma=config.gamma, eps=0.0, lam=lam_t))
    summary = summarize_alignment(result, delta=p["delta"])
    shown = np.argsort(summary.final_excess_risk, kind="stable")[
        np.unique(np.round(np.linspace(0, n - 1, min(p["n_show"], n))).astype(int))]
    problem = {"d": config.d, "L": config.L, "gamma": config.gamma, "lam": float(lam_t[-1])}
    fixed = manifold_fixed_points(**problem)
    out = {"steps": log.steps, "lam": lam_t,
           "excess_risk_mean": risk.mean(axis=1), "excess_risk_lo": risk.mean(axis=1) - _Z_BAND * stderr,
           "excess_risk_hi": risk.mean(axis=1) + _Z_BAND * stderr,
           "oracle_excess_risk": np.broadcast_to(np.asarray(oracle, dtype=float), lam_t.shape).copy(),
           "abs_kappa": log.abs_kappa, "abs_nu": log.abs_nu,
           "shown_runs": shown, "kappa_shown": log.kappa[:, shown], "nu_shown": log.nu[:, shown],
           "distance_to_M": log.distance_to_manifold,
           "fixed_points": np.array([(f.kappa, f.nu) for f in fixed]),
           "fixed_kind": np.array([f.kind for f in fixed]),
           "aligned": summary.aligned, "first_aligned_step": summary.first_aligned_step,
           "final_excess_risk": summary.final_excess_risk,
           "oracle_final_excess_risk": np.array(summary.oracle_excess_risk)}
    if config.init == "manifold":
        sep = separatrix(**problem)
        out["separatrix_kappa"], out["separatrix_nu"] = sep.kappa, sep.nu
    return out


def _lam_text(p) -> str:
    lam = p["lam"]
    if isinstance(lam, dict):
        return f"λ_t = {lam['lam0']:g}/(1 + {lam['rate']:g} t)"
    return f"λ = {lam:g}"


def _summary_text(data, p) -> str:
    aligned = data["aligned"].astype(bool)
    first = data["first_aligned_step"][aligned]
    median = f"{np.median(first):,.0f}" if aligned.any() else "–"
    risk = data["final_excess_risk"]
    return (f"aligned up to sign (min(|κ|,|ν|) ≥ 1−{p['delta']:g} at the end): {aligned.sum()}/{len(aligned)}\n"
            f"median first aligned step: {median} (resolution {p['log_every']} steps)\n"
            f"final R−ε²: {risk.mean():.5f} ± {risk.std(ddof=1) / np.sqrt(len(risk)):.1e} s.e. "
            f"(oracle {float(data['oracle_final_excess_risk']):.5f})")


_MARKERS = {"stable node": ("o", "black"), "unstable node": ("o", "white"), "saddle": ("X", "black")}


def _risk_panel(ax, data, p, palette):
    t = data["steps"]
    ax.fill_between(t, data["excess_risk_lo"], data["excess_risk_hi"], color=palette["quadrature"], alpha=0.3,
                    lw=0, label=BAND)
    ax.plot(t, data["excess_risk_mean"], color=palette["quadrature"], label=f"mean over {p['n_runs']} runs")
    ax.plot(t, data["oracle_excess_risk"], "--", color=palette["closed_form"], lw=1.0,
            label="oracle (k*, v*) at λ_t")
    # log scale: the risks of the four experiments span 0.07 to 5; every curve decreases, so the
    # upper right corner is free for the legend and the alignment summary.
    ax.set(yscale="log", xlabel="step t", ylabel="excess risk R − ε²", title="Excess risk (log scale)")
    ax.legend(loc="upper right", fontsize=7)
    ax.text(0.98, 0.74, _summary_text(data, p), transform=ax.transAxes, fontsize=6.5, va="top", ha="right",
            bbox={"facecolor": "white", "alpha": 0.85, "lw": 0})


def _overlap_panel(ax, data, p, palette):
    t = data["steps"]
    for key, color, name in (("abs_kappa", palette["quadrature"], "|κ|"),
                             ("abs_nu", palette["monte_carlo"], "|ν|")):
        ax.plot(t, data[key], color=color, lw=0.4, alpha=0.35)
        ax.plot(t, data[key].mean(axis=1), color=color, lw=1.6, label=f"{name}: mean; thin: each run")
    ax.axhline(1 - p["delta"], color=palette["muted"], lw=0.8, ls=":", label=f"1 − δ, δ = {p['delta']:g}")
    ax.set(xlabel="step t", ylabel="overlap", ylim=(-0.02, 1.02), title="|κ| = |⟨k, k*⟩| and |ν| = |⟨v, v*⟩|")
    ax.legend(loc="center right", fontsize=7)


def _plane_panel(ax, data, p, palette):
    if "separatrix_kappa" in data:
        for sign in (1, -1):
            ax.plot(sign * data["separatrix_kappa"], sign * data["separatrix_nu"], color=palette["closed_form"],
                    ls="--", lw=0.9, label="separatrix of the flow on M" if sign > 0 else None)
    for j, run in enumerate(data["shown_runs"]):
        line, = ax.plot(data["kappa_shown"][:, j], data["nu_shown"][:, j], lw=1.1, label=f"run {int(run)}")
        ax.plot(data["kappa_shown"][0, j], data["nu_shown"][0, j], ".", color=line.get_color(), ms=6)
    seen = set()
    for (k, n), kind in zip(data["fixed_points"], data["fixed_kind"]):
        marker, face = _MARKERS.get(str(kind), ("D", "grey"))
        ax.plot(k, n, marker, ms=8, mfc=face, mec="black", mew=1.1, clip_on=False, zorder=5,
                label=f"fixed point on M: {kind}" if kind not in seen else None)
        seen.add(kind)
    ax.set(xlim=(-1.08, 1.08), ylim=(-1.08, 1.08), aspect="equal", xlabel="κ", ylabel="ν",
           title=f"(κ, ν) of {len(data['shown_runs'])} runs (dot: start)")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=6.5)


def _distance_panel(ax, data, p, palette):
    floor = np.finfo(float).eps
    dist = data["distance_to_M"]
    t = data["steps"]
    ax.plot(t, np.maximum(dist, floor), color=palette["flow"], lw=0.5, alpha=0.5)
    ax.plot(t, np.maximum(np.median(dist, axis=1), floor), color=palette["flow"], lw=1.6,
            label="median over runs; thin: each run")
    ax.axhline(floor, color=palette["muted"], lw=0.8, ls=":", label="machine ε (values below drawn here)")
    if np.all(dist == 0):
        ax.text(0.5, 0.5, "distance exactly 0 at every step:\nthe exact overlap recursion keeps M invariant",
                transform=ax.transAxes, ha="center", fontsize=7)
    ax.set(yscale="log", xlabel="step t", ylabel="(θ² + η² + ρ²)^½",
           title="Distance to M = {θ = η = ρ = 0}")
    ax.legend(loc="upper right", fontsize=7)


def plot_training_panels(data: dict, p: dict):
    """The four panels of the module docstring (drawing only)."""
    from matplotlib.figure import Figure

    from ..style import PALETTE

    fig = Figure(figsize=(10.0, 7.4), layout="constrained")
    axes = fig.subplots(2, 2)
    _risk_panel(axes[0, 0], data, p, PALETTE)
    _overlap_panel(axes[0, 1], data, p, PALETTE)
    _plane_panel(axes[1, 0], data, p, PALETTE)
    _distance_panel(axes[1, 1], data, p, PALETTE)
    init = "uniform on M" if p["init"] == "manifold" else "uniform on the sphere"
    fig.suptitle(f"{p['experiment']} (SPEC §8 row {p['row'] + 1}): exact population PGD, init {init}, "
                 f"d = {p['d']}, L = {p['L']}, γ = √½, {_lam_text(p)}, α = {p['alpha']:g}, "
                 f"{p['steps']:,} steps, {p['n_runs']} runs")
    return fig
