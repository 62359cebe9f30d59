"""Figure: risk against d for the Bayes predictor, oracle attention, the best linear predictor and 0.

Data: ``numerics.montecarlo.risk_vs_d.risk_vs_d`` (docs/math/baselines.md#bayes-risk). Curves: Bayes risk by quadrature
(``theory.bayes.bayes_risk_quad``, exact at finite d; computed up to ``d_quad_max``: at d = 300,
L = 10, gamma^2 = 1/2 the Bhattacharyya bound of ``tests/test_bayes.py`` puts the Bayes excess
below 1e-28, so beyond it the Bayes risk is eps^2 to float64 precision), oracle
attention R(k*, v*) at its best lambda and at Corollary 2's lambda = (L d)^(-1/4) (paper
Theorem 1), best linear predictor (paper Prop 3) and null predictor. Points (+-2 standard errors):
Monte Carlo of the oracle at its best lambda, and of the Bayes risk only for d <= ``bayes_mc_d_max``
(``numerics.montecarlo.bayes_risk``: beyond d ~ 20 at gamma^2 = 1/2 the sample misses the rare sequences that
carry the excess). Right panel: excess risk R - eps^2, with the least-squares slope of
log excess on log d over d >= ``fit_d_min`` (Corollary 2 predicts -1/2 at lambda = (L d)^(-1/4),
L fixed; ``theory.corollary2``) and the leading term (4/pi)(L - 1) lambda^2.
"""

from __future__ import annotations

import numpy as np

from theory.parameters import PAPER_GAMMA, PAPER_L

NAME = "risk_vs_d"
TITLE = "Risk vs d: Bayes, oracle attention (best and prescribed lambda), linear (Prop 3), null"
COST = 3.7  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
SEED = 20250302

_SIZES = {
    True: {"n_curve": 10, "n_points": 4, "n_bayes_mc": 4_000, "n_oracle_mc": 4_000, "d_quad_max": 100},
    False: {"n_curve": 60, "n_points": 13, "n_bayes_mc": 100_000, "n_oracle_mc": 300_000, "d_quad_max": 300},
}


def params(quick: bool) -> dict:
    return {"L": PAPER_L, "gamma": PAPER_GAMMA, "eps": 0.1, "d_min": 2, "d_max": 10**6,
            "bayes_mc_d_max": 20, "fit_d_min": 10**4, **_SIZES[quick]}


def compute(p: dict, rng: np.random.Generator, progress) -> dict:
    import dataclasses

    from numerics.montecarlo.risk_vs_d import RiskVsDSize, risk_vs_d
    from theory.corollary2 import fit_slope, leading_rate
    from theory.parameters import Task

    size = RiskVsDSize(**{k: p[k] for k in ("n_curve", "n_points", "n_bayes_mc", "n_oracle_mc", "d_quad_max",
                                         "bayes_mc_d_max")})
    with progress(total=1, desc=NAME) as bar:
        r = risk_vs_d(Task(d=p["d_min"], L=p["L"], gamma=p["gamma"], eps=p["eps"]), rng, d_max=p["d_max"], size=size)
        bar.update()
    out = {f.name: np.asarray(getattr(r, f.name), dtype=float) for f in dataclasses.fields(r)
           if f.name not in ("L", "gamma", "eps")}
    eps2 = p["eps"] ** 2
    tail = r.d_curve >= p["fit_d_min"]
    for key in ("oracle_prescribed", "oracle_best"):
        fit = fit_slope(np.log(r.d_curve[tail]), np.log(out[key][tail] - eps2))
        out[f"slope_{key}"] = np.array(fit.slope)
    out["leading_prescribed"] = (4 / np.pi) * leading_rate(r.d_curve, p["L"], r.lam_prescribed)
    return out


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure

    from ..style import DOUBLE_COLUMN, PALETTE

    eps2 = p["eps"] ** 2
    d, dp = data["d_curve"], data["d_points"]
    trusted = dp <= p["bayes_mc_d_max"]
    curves = (("null", "null predictor", PALETTE["muted"], "-"),
              ("linear", "best linear (Prop 3)", PALETTE["accent"], "-"),
              ("oracle_prescribed", "oracle, λ = (Ld)^(-1/4)", PALETTE["flow"], "--"),
              ("oracle_best", "oracle, best λ", PALETTE["monte_carlo"], "-"),
              ("bayes_quad", "Bayes (quadrature)", PALETTE["quadrature"], "-"))
    fig = Figure(figsize=(DOUBLE_COLUMN, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    for ax, shift in ((left, 0.0), (right, eps2)):
        for key, label, color, ls in curves:
            ax.plot(d, data[key] - shift, ls, color=color, label=label)
        for key, mask, label, color in (("oracle", np.ones_like(trusted), "oracle MC", PALETTE["monte_carlo"]),
                                        ("bayes", trusted, "Bayes MC", PALETTE["quadrature"])):
            mean, se = data[f"{key}_mc_mean"][mask] - shift, data[f"{key}_mc_stderr"][mask]
            # On a log axis the lower bar stops at a tenth of the point if mean - 2 se <= 0.
            lower = np.minimum(2 * se, 0.9 * mean)
            ax.errorbar(dp[mask], mean, yerr=(lower, 2 * se), fmt="o", ms=3, mfc="none", color=color,
                        label=f"{label} (±2 s.e.)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("d")
    left.axhline(eps2, color=PALETTE["closed_form"], lw=0.8, ls=":", label="ε² (noise floor)")
    left.set_ylabel("risk R")
    left.set_ylim(0.5 * eps2, 2 * (p["gamma"] ** 2 + eps2))
    right.plot(d, data["leading_prescribed"], ":", color=PALETTE["closed_form"], lw=0.9,
               label="(4/π)(L−1)λ², λ = (Ld)^(-1/4) (leading term)")
    right.set_ylabel("excess risk R − ε²")
    right.set_ylim(0.2 * np.min(data["oracle_best"] - eps2), 2 * p["gamma"] ** 2)
    right.text(0.3, 0.04, f"fitted slopes for d ≥ {p['fit_d_min']:.0e}:\n"
               f"λ = (Ld)^(-1/4): {float(data['slope_oracle_prescribed']):.3f} (Corollary 2: −1/2)\n"
               f"best λ: {float(data['slope_oracle_best']):.3f} (~ log d / d)",
               transform=right.transAxes, va="bottom", ha="left")
    handles, labels = left.get_legend_handles_labels()
    extra = [(h, l) for h, l in zip(*right.get_legend_handles_labels()) if l not in labels]
    fig.legend(handles + [h for h, _ in extra], labels + [l for _, l in extra],
               loc="outside lower center", ncols=3)
    fig.suptitle(f"Risk against d: L = {p['L']}, γ = √½, ε = {p['eps']}\n"
                 f"Monte Carlo: oracle n = {p['n_oracle_mc']:,}, Bayes n = {p['n_bayes_mc']:,} for "
                 f"d ≤ {p['bayes_mc_d_max']}")
    return fig
