"""Figure: stability of the oracle (k*, v*) on the sphere product as lambda grows (docs/math/critical-lambda.md#critical-lambda, derived).

Left: the smaller eigenvalue of the 2x2 block of the Riemannian Hessian at the oracle
(``theory.stability.oracle_hessian``: k tilted towards v*, v tilted towards k*) against lambda,
for several d; the other eigenvalues r_phi, r_psi (multiplicity d - 2 each) are > 0. The block
eigenvalue changes sign at lambda_c(d) (``theory.stability.critical_lambda``, dots): below, the
oracle is a strict local minimum, above, a saddle. Right: lambda_c(d) - sqrt(3)/2 against d with
the first-order prediction c1/d, c1 = 4 sqrt(3) gamma^2 (L-1)/3 (derived in
``theory.symbolic.hessian.critical_lambda_limit``, checked by the claim ``lambda-c-limit``).
"""

from __future__ import annotations

import math

import numpy as np

from theory.parameters import PAPER_GAMMA, PAPER_L

NAME = "oracle_stability"
TITLE = "Oracle stability: smallest Hessian block eigenvalue vs lambda, lambda_c(d) -> sqrt(3)/2"
SEED = 20250303
COST = 0.7  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only


def params(quick: bool) -> dict:
    return {"L": PAPER_L, "gamma": PAPER_GAMMA, "lam_min": 0.05, "lam_max": 3.0,
            "n_lam": 60 if quick else 400, "d_curves": [20, 50, 200, 1000, 10**5],
            "d_limit_min": 20, "d_limit_max": 10**6, "n_limit": 6 if quick else 21}


def _lam_c(d, p) -> float:
    from theory.stability import critical_lambda
    from theory.parameters import Task

    # det H_block > 0 at lambda = 0.05 for d >= 20 (L = 10, gamma^2 = 1/2); lambda_c <= 2 there.
    crit = critical_lambda(Task(d=int(d), L=p["L"], gamma=p["gamma"]), lam_min=p["lam_min"], lam_max=20.0, n_grid=200)
    if not crit.found:
        raise ArithmeticError(f"no lambda_c in [{p['lam_min']}, 20] at d={d}")
    return crit.lam_c


def compute(p: dict, rng: np.random.Generator, progress) -> dict:
    from theory import Problem
    from theory.stability import oracle_hessian

    lam = np.geomspace(p["lam_min"], p["lam_max"], p["n_lam"])
    d_limit = np.unique(np.round(np.geomspace(p["d_limit_min"], p["d_limit_max"], p["n_limit"]))).astype(int)
    out = {"lam": lam, "d_curves": np.array(p["d_curves"], dtype=float), "d_limit": d_limit.astype(float)}
    with progress(total=len(p["d_curves"]) + d_limit.size, desc=NAME) as bar:
        mu, lam_c = [], []
        for d in p["d_curves"]:
            mu.append(oracle_hessian(Problem(d=d, L=p["L"], gamma=p["gamma"], lam=lam)).block_eigenvalues[0])
            lam_c.append(_lam_c(d, p))
            bar.update()
        out["mu_block"], out["lam_c_curves"] = np.array(mu), np.array(lam_c)
        limit = []
        for d in d_limit:
            limit.append(_lam_c(d, p))
            bar.update()
    out["lam_c_limit"] = np.array(limit)
    out["c1"] = np.array(4 * math.sqrt(3) * p["gamma"] ** 2 * (p["L"] - 1) / 3)
    return out


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure

    from ..style import CYCLE, DOUBLE_COLUMN, PALETTE

    root = math.sqrt(3) / 2
    fig = Figure(figsize=(DOUBLE_COLUMN, 3.0), layout="constrained")
    left, right = fig.subplots(1, 2)
    colors = [CYCLE[i % len(CYCLE)] for i in range(len(data["d_curves"]))]
    for d, mu, lam_c, color in zip(data["d_curves"], data["mu_block"], data["lam_c_curves"], colors):
        left.plot(data["lam"], mu, color=color, label=f"d = {int(d):,}")
        left.plot([lam_c], [0.0], "o", ms=4, color=color)
    left.axhline(0.0, color=PALETTE["closed_form"], lw=0.8)
    left.axvline(root, color=PALETTE["muted"], ls="--", lw=0.9, label="√3/2 (limit of λ_c)")
    left.set_xscale("log")
    left.set_xlabel("λ")
    left.set_ylabel("smaller eigenvalue of the Hessian block")
    left.set_title("dots: λ_c(d); minimum below, saddle above")
    left.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    d = data["d_limit"]
    right.loglog(d, data["lam_c_limit"] - root, "o", ms=3, mfc="none", color=PALETTE["closed_form"],
                 label="λ_c(d) − √3/2 (theory.stability)")
    right.loglog(d, float(data["c1"]) / d, color=PALETTE["quadrature"],
                 label=f"c₁/d, c₁ = 4√3 γ²(L−1)/3 = {float(data['c1']):.3g}")
    right.set_xlabel("d")
    right.set_ylabel("λ_c(d) − √3/2")
    right.set_title("first-order correction (derived)")
    right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22))
    fig.suptitle(f"Stability of the oracle (k*, v*) on the sphere product: L = {p['L']}, γ = √½")
    return fig
