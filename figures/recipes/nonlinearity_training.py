"""Figure: softmax attention trained by the paper's online-SGD experiment, from the initialisations of
figure ``training_online_sgd`` (erf) (docs/math/nonlinearities.md#online-sgd).

Setting: the experiment of ``training_online_sgd`` (its ``params``: d = 80, L = 10, gamma = sqrt(1/2),
eps = 0.1, minibatches of 5 fresh samples, lambda_t = 2 / (1 + 1e-4 t), alpha = 1e-3, 200,000 steps,
30 runs, init uniform on the sphere with fresh k*, v*) with the softmax gate in place of erf. Run r
is seeded by ``SeedSequence(seed).spawn(n_runs)[r]`` of the same seed, so run r of this figure and
run r of ``training_online_sgd`` start from the same overlaps (``numerics.nonlinearity.training``;
quick mode: 4 runs, steps / 100, the first runs of the full experiment). Simulator: the exact reduced
simulator with the softmax gradient (``numerics.nonlinearity.sgd``), logged at the same steps as
``training_online_sgd``; the logged overlaps do not change the run (the random numbers do not depend
on the block length). The softmax risk has no closed form: the population excess R - eps^2 is
computed by quadrature at the final overlaps only (30 evaluations), with the oracle's at the final
lambda; the claim ``nonlinearities-sgd-training`` compares the runs aligned here with those of
``training_online_sgd``.

Panels against the step: (a) fraction of runs aligned (min(|kappa|, |nu|) >= 1 - delta), (b) |kappa|
and |nu| by group (median and 25%-75% band, as the training figures), (c) runs in the (kappa, nu)
plane, (d) distance to M.
"""

from __future__ import annotations

import numpy as np

from . import training_online_sgd as paper_sgd

NAME = "nonlinearity_training"
TITLE = ("Softmax attention under the paper's online-SGD experiment (d = 80, lambda_t = 2/(1 + 1e-4 t)), "
         "from the initialisations of figure training_online_sgd")
CAPTION = ("Online SGD with the softmax gate on the paper's SGD experiment (d = 80, L = 10, gamma = sqrt(1/2), "
           "eps = 0.1, minibatches of 5, lambda_t = 2/(1 + 1e-4 t), alpha = 1e-3, 200,000 steps, 30 runs), "
           "exact reduced simulator, the initialisations of the erf runs of figure training_online_sgd: "
           "(a) fraction of runs aligned, (b) |kappa| and |nu|, (c) runs in the (kappa, nu) plane, "
           "(d) distance to M.")
COST = 7.1  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
SEED = paper_sgd.SEED   # unused: the runs are seeded by the experiment's seed, as in training_online_sgd

SIGMA = "softmax"


def params(quick: bool) -> dict:
    base = paper_sgd.params(quick)
    keep = ("experiment", "init", "d", "L", "gamma", "eps", "lam", "alpha", "steps", "batch_size", "n_runs",
            "seed", "log_every", "simulator", "n_show", "delta")
    # test_size 0: the reduced simulator logs no test risk for another member (numerics.nonlinearity.sgd).
    return {"sigma": SIGMA, **{k: base[k] for k in keep}, "test_size": 0}


def compute(p: dict, rng, progress) -> dict:
    """Train the runs (``numerics.nonlinearity.training.sgd_training_sigma``) and keep the logged
    overlaps. ``rng`` is unused: the runs are seeded by the experiment's seed."""
    from numerics.nonlinearity import training

    with progress(total=1, desc=f"{p['sigma']} online SGD ({p['n_runs']} runs, {p['steps']:,} steps)") as bar:
        run = training.sgd_training_sigma(p["sigma"], config=paper_sgd.experiment_config(p), seed=p["seed"],
                                          delta=p["delta"], log_every=p["log_every"])
        bar.update()
    o = run.overlaps
    abs_kappa, abs_nu = np.abs(o["kappa"]), np.abs(o["nu"])
    ok = np.minimum(abs_kappa, abs_nu) >= 1.0 - p["delta"]
    n = abs_kappa.shape[1]
    shown = np.argsort(run.excess, kind="stable")[
        np.unique(np.round(np.linspace(0, n - 1, min(p["n_show"], n))).astype(int))]
    return {"steps": run.steps, "abs_kappa": abs_kappa, "abs_nu": abs_nu,
            "distance_to_M": np.sqrt(o["theta"] ** 2 + o["eta"] ** 2 + o["rho"] ** 2),
            "fraction_aligned": np.mean(ok, axis=1),
            "first_aligned_step": np.where(ok.any(axis=0), run.steps[np.argmax(ok, axis=0)], -1),
            "shown_runs": shown, "kappa_shown": o["kappa"][:, shown], "nu_shown": o["nu"][:, shown],
            "aligned": run.aligned, "final_excess_risk": run.excess,
            "final_abs_kappa": run.abs_kappa, "final_abs_nu": run.abs_nu,
            "final_distance_to_M": run.distance_to_manifold,
            "oracle_final_excess_risk": np.array(run.oracle_excess), "lam_final": np.array(run.lam_final)}


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    from .. import training_plot as panels
    from ..style import DOUBLE_COLUMN, PALETTE

    # Drawing helpers live inside plot: the registry keys the cache on the module source except plot.
    def legend(groups, n):
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        entries = [((Patch(color=panels.GROUP_COLOURS[name], alpha=0.25, lw=0),
                     Line2D([], [], color=panels.GROUP_COLOURS[name])), f"{name} at the end ({runs.size}/{n} runs)")
                   for name, runs in groups.items()]
        entries += [(Line2D([], [], color=PALETTE["muted"], ls=":"),
                     f"1 − δ in (b), δ = {p['delta']:g}; median first aligned step in (a)"),
                    (Patch(color=PALETTE["muted"], alpha=0.25, lw=0), panels.BAND)]
        return [h for h, _ in entries], [label for _, label in entries]

    fig = Figure(figsize=(DOUBLE_COLUMN, 5.2), layout="constrained")
    (frac, over), (plane, dist) = fig.subplots(2, 2)
    t, groups, n = data["steps"], panels.groups(data), len(data["aligned"])
    frac.step(t, data["fraction_aligned"], where="post", color=PALETTE["quadrature"])
    first = data["first_aligned_step"][data["first_aligned_step"] >= 0]
    if first.size:
        frac.axvline(np.median(first), color=PALETTE["muted"], lw=0.8, ls=":")
    when = f"median first aligned step {np.median(first):,.0f}" if first.size else "no run aligned yet"
    frac.set(ylim=(-0.02, 1.05), ylabel="fraction of runs aligned", title=f"(a) aligned runs ({when})")
    for name, runs in groups.items():
        for key, ls in (("abs_kappa", "-"), ("abs_nu", "--")):
            panels.group_band(over, t, data[key], runs, panels.GROUP_COLOURS[name], ls=ls)
        panels.group_band(dist, t, data["distance_to_M"], runs, panels.GROUP_COLOURS[name],
                          floor=np.finfo(float).eps)
    over.axhline(1 - p["delta"], color=PALETTE["muted"], lw=0.8, ls=":")
    over.set(ylabel="|κ| (solid), |ν| (dashed)", ylim=(-0.02, 1.05), title="(b) overlaps |⟨k, k*⟩|, |⟨v, v*⟩|")
    dist.set(yscale="log", ylabel="(θ² + η² + ρ²)^½", title="(d) distance to M = {θ = η = ρ = 0}")
    aligned = data["aligned"].astype(bool)
    for j, r in enumerate(data["shown_runs"]):
        colour = panels.GROUP_COLOURS["aligned" if aligned[int(r)] else "not aligned"]
        plane.plot(data["kappa_shown"][:, j], data["nu_shown"][:, j], lw=1.0, color=colour)
        plane.plot(data["kappa_shown"][0, j], data["nu_shown"][0, j], "o", color=colour, ms=3)
    plane.set(xlim=(-1.1, 1.1), ylim=(-1.1, 1.1), aspect="equal", xlabel="κ", ylabel="ν",
              title=f"(c) {len(data['shown_runs'])} runs in the (κ, ν) plane (dot: start)")
    for ax in (frac, over, dist):
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.set_xlabel("step t")
    handles, labels = legend(groups, n)
    fig.legend(handles, labels, loc="outside lower center", ncols=2, columnspacing=1.2, handlelength=1.8)
    excess, oracle = data["final_excess_risk"], float(data["oracle_final_excess_risk"])
    fig.suptitle(panels.experiment_title(p, f"online SGD, {p['sigma']} gate, minibatches of {p['batch_size']}")
                 + f"\nfinal excess R − ε²: median {np.median(excess):.4g} (oracle {oracle:.4g} at "
                   f"λ = {float(data['lam_final']):.3g})")
    return fig

