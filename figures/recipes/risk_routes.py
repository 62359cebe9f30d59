"""Figure: the population risk by three routes along two paths in kappa, on and off M.

Closed form (``theory.population_risk``, docs/math/risk.md#closed-form-population-risk / paper Theorem 1) as a curve; 1-D quadrature
(``theory.risk_quad.population_risk_quad``) and Monte Carlo (``numerics.montecarlo.population_risk.
population_risk_mc``, +-2 standard errors) as points. Bottom row: residuals against the closed
form in units of each route's own error estimate (quadrature abserr, Monte-Carlo stderr), with
the band that holds all Monte-Carlo residuals with probability 0.95 (Bonferroni). Each Monte-Carlo
estimate is sized so that this band detects a relative error of ``detect`` (2%, the full-mode target of
the claim ``theorem1-montecarlo`` it illustrates; 5% in quick mode, as the claim's) with probability 0.9:
(z_band + z_0.9) stderr <= detect R, by an internal pilot (``figures.sample_size.sized_estimate``). At
the full sizes that is 4e4-1.4e5 sequences a point, where a fixed 4e5 detected 1%, finer than the
figure's 2% and than its markers (a 1% gap is about 1 pt at the top row's scale).
Paths: on M, (kappa, nu = nu0, 0, 0, 0); off M, theta = theta0, eta = eta0 and
rho = kappa theta0 + eta0 nu0 (the components of k and v orthogonal to span{k*, v*} are
orthogonal), feasible for kappa^2 + eta0^2 <= 1.
"""

from __future__ import annotations

import numpy as np

from theory.parameters import PAPER_D, PAPER_GAMMA, PAPER_L

NAME = "risk_routes"
TITLE = "Population risk: closed form vs quadrature vs Monte Carlo, on and off M"
COST = 1.9  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
SEED = 20250101

_PATHS = ("on M", "off M")


def params(quick: bool) -> dict:
    return {"d": PAPER_D, "L": PAPER_L, "gamma": PAPER_GAMMA, "eps": 0.1, "lam": 0.1,
            "nu0": 0.6, "theta0": 0.1, "eta0": -0.1, "kappa_max": 0.95,
            "n_curve": 201, "n_points": 5 if quick else 13, "band_rate": 0.05, "power": 0.9,
            "detect": 0.05 if quick else 0.02}


def _overlaps(p, kappa, path):
    from theory import Overlaps

    if path == "on M":
        return Overlaps(kappa=kappa, nu=p["nu0"])
    return Overlaps(kappa=kappa, nu=p["nu0"], theta=p["theta0"], eta=p["eta0"],
                    rho=kappa * p["theta0"] + p["eta0"] * p["nu0"])


def compute(p: dict, rng: np.random.Generator, progress) -> dict:
    from numerics.montecarlo.statistics import bonferroni_z

    from numerics.montecarlo.population_risk import population_risk_mc
    from ..sample_size import sized_estimate
    from theory import Problem, population_risk
    from theory.risk_quad import population_risk_quad

    problem = Problem(d=p["d"], L=p["L"], gamma=p["gamma"], eps=p["eps"], lam=p["lam"])
    kappa_curve = np.linspace(-p["kappa_max"], p["kappa_max"], p["n_curve"])
    kappa_pts = np.linspace(-p["kappa_max"], p["kappa_max"], p["n_points"])
    out = {"kappa_curve": kappa_curve, "kappa_points": kappa_pts}
    m = len(_PATHS) * len(kappa_pts)
    streams = iter(rng.spawn(m))
    power = dict(alpha=p["band_rate"], m=m, power=p["power"], detect=p["detect"])
    with progress(total=m, desc=NAME) as bar:
        for i, path in enumerate(_PATHS):
            out[f"closed_curve_{i}"] = population_risk(problem, _overlaps(p, kappa_curve, path))
            closed, quad, abserr, mc, stderr, n_mc = (np.empty(len(kappa_pts)) for _ in range(6))
            for j, kappa in enumerate(kappa_pts):
                overlaps = _overlaps(p, float(kappa), path)
                closed[j] = population_risk(problem, overlaps)
                q = population_risk_quad(problem, overlaps)
                quad[j], abserr[j] = q.value, q.abserr
                est = sized_estimate(lambda n, r: population_risk_mc(problem, overlaps, n=n, rng=r),
                                     closed[j], next(streams), **power)
                mc[j], stderr[j], n_mc[j] = est.mean, est.stderr, est.n
                bar.update()
            out.update({f"closed_points_{i}": closed, f"quad_{i}": quad, f"quad_abserr_{i}": abserr,
                        f"mc_{i}": mc, f"mc_stderr_{i}": stderr, f"mc_n_{i}": n_mc,
                        f"quad_residual_{i}": (quad - closed) / abserr,
                        f"mc_residual_{i}": (mc - closed) / stderr})
    # Two-sided band holding all Monte-Carlo residuals with probability 0.95 (Bonferroni).
    out["z_band"] = np.array(bonferroni_z(p["band_rate"], m))
    return out


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure

    from ..style import DOUBLE_COLUMN, PALETTE

    fig = Figure(figsize=(DOUBLE_COLUMN, 4.6), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True, height_ratios=(2, 1))
    k = data["kappa_points"]
    n_mc = np.concatenate([data[f"mc_n_{i}"] for i in range(len(_PATHS))])
    shift = 0.01 * (k[-1] - k[0])   # side by side, so that both markers stay visible
    for i, path in enumerate(_PATHS):
        top, bottom = axes[0, i], axes[1, i]
        top.plot(data["kappa_curve"], data[f"closed_curve_{i}"], color=PALETTE["closed_form"], label="closed form")
        top.plot(k - shift, data[f"quad_{i}"], "o", mfc="none", color=PALETTE["quadrature"], label="quadrature")
        top.errorbar(k + shift, data[f"mc_{i}"], yerr=2 * data[f"mc_stderr_{i}"], fmt="s", ms=3,
                     color=PALETTE["monte_carlo"], label=f"Monte Carlo (n={n_mc.min():,.0f}-{n_mc.max():,.0f}, ±2 s.e.)")
        extra = "" if path == "on M" else f", θ={p['theta0']}, η={p['eta0']}, ρ=κθ+ην"
        top.set_title(f"{path}: ν={p['nu0']}{extra}")
        top.set_ylabel("population risk R")
        bottom.axhline(0, color=PALETTE["closed_form"], lw=0.8)
        for sign in (-1, 1):
            bottom.axhline(sign * float(data["z_band"]), color=PALETTE["muted"], lw=0.8, ls="--",
                           label=f"family-wise {1 - p['band_rate']:.0%} band" if sign > 0 else None)
        bottom.plot(k - shift, data[f"quad_residual_{i}"], "o", mfc="none", color=PALETTE["quadrature"],
                    label="(quad − closed) / abserr")
        bottom.plot(k + shift, data[f"mc_residual_{i}"], "s", ms=3, color=PALETTE["monte_carlo"],
                    label="(MC − closed) / s.e.")
        bottom.set_xlabel("κ = ⟨k, k*⟩")
        bottom.set_ylabel("residual")
    handles, labels = (sum(x, []) for x in zip(*(axes[j, 0].get_legend_handles_labels() for j in (0, 1))))
    fig.legend(handles, labels, loc="outside lower center", ncols=3)
    fig.suptitle(f"Population risk by three routes (Theorem 1): d = {p['d']}, L = {p['L']}, γ = √½, "
                 f"ε = {p['eps']}, λ = {p['lam']}")
    return fig
