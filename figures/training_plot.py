"""Drawing of the four training panels (the data come from ``figures.training_panels``): excess risk with
its band and the oracle's, |kappa| and |nu|, chosen runs in the (kappa, nu) plane, distance to M.

Drawing only, kept apart from the computation so that restyling never invalidates cached data
(the training recipes key their cache on ``figures.training_panels``, not on this module).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from .style import draw_fixed_points

__all__ = ["BAND", "plot_training_panels"]

BAND = "mean ± 1.96 s.e. over runs (95% CI of the mean)"


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
    draw_fixed_points(ax, data["fixed_points"], data["fixed_kind"], label="fixed point on M", seen=set())
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

    from .style import PALETTE

    fig = Figure(figsize=(10.0, 7.4), layout="constrained")
    axes = fig.subplots(2, 2)
    _risk_panel(axes[0, 0], data, p, PALETTE)
    _overlap_panel(axes[0, 1], data, p, PALETTE)
    _plane_panel(axes[1, 0], data, p, PALETTE)
    _distance_panel(axes[1, 1], data, p, PALETTE)
    for ax in (axes[0, 0], axes[0, 1], axes[1, 1]):
        ax.xaxis.set_major_locator(MaxNLocator(5))  # step counts up to 200,000 must not overlap
    init = "uniform on M" if p["init"] == "manifold" else "uniform on the sphere"
    fig.suptitle(f"{p['experiment']} (SPEC §8 row {p['row'] + 1}): exact population PGD, init {init}, "
                 f"d = {p['d']}, L = {p['L']}, γ = √½, {_lam_text(p)}, α = {p['alpha']:g}, "
                 f"{p['steps']:,} steps, {p['n_runs']} runs")
    return fig
