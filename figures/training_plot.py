"""Drawing of the four training panels (the data come from ``figures.training_panels``), for a paper's double
column: (a) excess risk, (b) |kappa| and |nu|, (c) chosen runs in the (kappa, nu) plane, (d) distance
to M, all against the step.

Runs split into groups by where they end: 'aligned' (min(|kappa|, |nu|) >= 1 - delta at the last
step, i.e. at +-(k*, v*)) and 'not aligned' (stalled elsewhere). A mean over both groups would sit
where no run is, so each group is drawn on its own: its median (line) and the band between its
25% and 75% quantiles over runs. One legend, below the panels, so that none covers data.

Drawing only, kept apart from the computation so that restyling never invalidates cached data
(the training recipes key their cache on ``figures.training_panels``, not on this module).
"""

from __future__ import annotations

import numpy as np

from .style import DOUBLE_COLUMN, PALETTE, draw_fixed_points

__all__ = ["BAND", "GROUP_COLOURS", "groups", "plot_training_panels", "experiment_title", "caption"]

BAND = "band: 25%-75% of a group's runs; line: median"
GROUP_COLOURS = {"aligned": PALETTE["quadrature"], "not aligned": PALETTE["monte_carlo"]}
QUANTILES = (0.25, 0.5, 0.75)


def groups(data) -> dict:
    """{'aligned': run indices, 'not aligned': run indices}, empty groups left out."""
    aligned = data["aligned"].astype(bool)
    found = {"aligned": np.flatnonzero(aligned), "not aligned": np.flatnonzero(~aligned)}
    return {name: runs for name, runs in found.items() if runs.size}


def _lam_text(p) -> str:
    lam = p["lam"]
    if isinstance(lam, dict):
        return f"λ_t = {lam['lam0']:g}/(1 + {lam['rate']:g} t)"
    return f"λ = {lam:g}"


def experiment_title(p, method: str) -> str:
    """'Paper experiment "sphere, small lambda": <method>, init ..., d = ..., lambda ...'."""
    init = "uniform on M" if p["init"] == "manifold" else "uniform on the sphere"
    return (f"Paper experiment “{p['experiment']}”: {method}, init {init}\n"
            f"d = {p['d']}, L = {p['L']}, γ = √½, " + (f"ε = {p['eps']:g}, " if p.get("eps") else "")
            + f"{_lam_text(p)}, α = {p['alpha']:g}, {p['steps']:,} steps, "
            f"{p['n_runs']} runs")


def caption(data, p) -> str:
    """The figure's caption line: the groups, their size and the final excess risks."""
    parts = []
    for name, runs in groups(data).items():
        risk = data["final_excess_risk"][runs]
        parts.append(f"{name}: {runs.size}/{len(data['aligned'])} runs, final R − ε² median {np.median(risk):.4g}")
    return ("; ".join(parts) + f" (aligned: min(|κ|, |ν|) ≥ 1 − {p['delta']:g} at the end); oracle "
            f"{float(data['oracle_final_excess_risk']):.4g}.")


def group_band(ax, t, values, runs, colour, *, ls="-", lw=1.3, floor=None):
    """Median line and 25%-75% band over the columns ``runs`` of ``values`` (steps x runs)."""
    lo, mid, hi = np.quantile(values[:, runs], QUANTILES, axis=1)
    if floor is not None:
        lo, mid, hi = (np.maximum(x, floor) for x in (lo, mid, hi))
    ax.fill_between(t, lo, hi, color=colour, alpha=0.25, lw=0)
    ax.plot(t, mid, color=colour, ls=ls, lw=lw)


def _risk_panel(ax, data, p):
    t = data["steps"]
    for name, runs in groups(data).items():
        group_band(ax, t, data["excess_risk"], runs, GROUP_COLOURS[name])
    ax.plot(t, data["oracle_excess_risk"], ":", color=PALETTE["closed_form"], lw=1.0)
    ax.set(yscale="log", ylabel="excess risk R − ε²", title="(a) excess risk")


def _overlap_panel(ax, data, p):
    t = data["steps"]
    for name, runs in groups(data).items():
        for key, ls in (("abs_kappa", "-"), ("abs_nu", "--")):
            group_band(ax, t, data[key], runs, GROUP_COLOURS[name], ls=ls)
    ax.axhline(1 - p["delta"], color=PALETTE["muted"], lw=0.8, ls=":")
    ax.set(ylabel="|κ| (solid), |ν| (dashed)", ylim=(-0.02, 1.05), title="(b) overlaps |⟨k, k*⟩|, |⟨v, v*⟩|")


def _plane_panel(ax, data, p):
    if "separatrix_kappa" in data:
        for sign in (1, -1):
            ax.plot(sign * data["separatrix_kappa"], sign * data["separatrix_nu"], color=PALETTE["closed_form"],
                    ls="--", lw=0.8)
    aligned = data["aligned"].astype(bool)
    for j, run in enumerate(data["shown_runs"]):
        colour = GROUP_COLOURS["aligned" if aligned[int(run)] else "not aligned"]
        ax.plot(data["kappa_shown"][:, j], data["nu_shown"][:, j], lw=1.0, color=colour)
        ax.plot(data["kappa_shown"][0, j], data["nu_shown"][0, j], "o", color=colour, ms=3)
    draw_fixed_points(ax, data["fixed_points"], data["fixed_kind"], label="fixed point on M", seen=set(),
                      size=6, edge=0.9)
    ax.set(xlim=(-1.1, 1.1), ylim=(-1.1, 1.1), aspect="equal", xlabel="κ", ylabel="ν",
           title=f"(c) {len(data['shown_runs'])} runs in the (κ, ν) plane")


def _distance_panel(ax, data, p):
    floor = np.finfo(float).eps
    t = data["steps"]
    dist = data["distance_to_M"]
    for name, runs in groups(data).items():
        group_band(ax, t, dist, runs, GROUP_COLOURS[name], floor=floor)
    ax.axhline(floor, color=PALETTE["muted"], lw=0.8, ls=":")
    if np.all(dist == 0):
        ax.text(0.5, 0.5, "exactly 0 at every step\n(the exact recursion keeps M invariant)",
                transform=ax.transAxes, ha="center", va="center")
    ax.set(yscale="log", ylabel="(θ² + η² + ρ²)^½", title="(d) distance to M = {θ = η = ρ = 0}")


def legend_entries(data, p, *, risk_entries=()) -> tuple[list, list]:
    """Handles and labels of the one legend below the panels."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles, labels = [], []
    n = len(data["aligned"])
    for name, runs in groups(data).items():
        colour = GROUP_COLOURS[name]
        handles.append((Patch(color=colour, alpha=0.25, lw=0), Line2D([], [], color=colour)))
        labels.append(f"{name} ({runs.size}/{n} runs)")
    extra = [*risk_entries,
             (Line2D([], [], color=PALETTE["closed_form"], ls=":"), "oracle (k*, v*) at λ_t"),
             (Line2D([], [], color=PALETTE["muted"], ls=":"), f"1 − δ in (b), δ = {p['delta']:g}; machine ε in (d)")]
    if "separatrix_kappa" in data:
        extra.append((Line2D([], [], color=PALETTE["closed_form"], ls="--", lw=0.8), "separatrix of the flow on M"))
    for kind, marker, face in (("saddle", "X", "black"), ("stable node", "o", "black"), ("unstable node", "o", "white")):
        extra.append((Line2D([], [], ls="", marker=marker, mfc=face, mec="black", ms=5), f"fixed point: {kind}"))
    extra.append((Patch(color=PALETTE["muted"], alpha=0.25, lw=0), BAND))
    handles += [h for h, _ in extra]
    labels += [label for _, label in extra]
    return handles, labels


def plot_training_panels(data: dict, p: dict, *, method: str = "exact population PGD", risk_panel=None,
                         risk_entries=()):
    """The four panels of the module docstring (drawing only); ``risk_panel(ax, data, p)`` replaces
    panel (a) (the SGD figure draws two risks there), ``risk_entries`` its legend entries."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(DOUBLE_COLUMN, 5.6), layout="constrained")
    axes = fig.subplots(2, 2)
    (risk_panel or _risk_panel)(axes[0, 0], data, p)
    _overlap_panel(axes[0, 1], data, p)
    _plane_panel(axes[1, 0], data, p)
    _distance_panel(axes[1, 1], data, p)
    for ax in (axes[0, 0], axes[0, 1], axes[1, 1]):
        ax.xaxis.set_major_locator(MaxNLocator(4))  # step counts up to 200,000 must not overlap
        ax.set_xlabel("step t")
    handles, labels = legend_entries(data, p, risk_entries=risk_entries)
    fig.legend(handles, labels, loc="outside lower center", ncols=3, columnspacing=1.2, handlelength=1.8)
    fig.suptitle(experiment_title(p, method))
    return fig
