"""Figure: the gradient flow of the population risk on the manifold M, in the (kappa, nu) plane.

On M (theta = eta = rho = 0, invariant: docs/math/dynamics.md#invariant-manifold, paper Theorem 5 setting) the flow on the
sphere product reduces to

    kappa' = -(1 - kappa^2) dR/dkappa,    nu' = -(1 - nu^2) dR/dnu,

with the partials of the closed form (``theory.risk.risk_grad_from_arrays`` at
theta = eta = rho = 0). Fixed points (0, 0), (+-1, +-1) with their type (stable node, unstable
node, saddle) from the Jacobian of the M-flow formula of docs/math/dynamics.md#fixed-points-and-their-types, and the separatrix splitting
the mixed quadrants (``numerics.dynamics.phase_portrait``: an independent route to the same field, so
the streamlines must run into the points and along the curve they mark). Overlaid: exact
population PGD (``numerics.dynamics.pgd.overlap_pgd``, paper Definition 1) from the paper's
initialisation uniform on M (near the saddle, kappa, nu = O(1/sqrt(d))) and from a ring of
points |(kappa, nu)| = r0 that shows the basins.
"""

from __future__ import annotations

import numpy as np

from theory.parameters import PAPER_D, PAPER_GAMMA, PAPER_L

NAME = "phase_portrait"
TITLE = "Gradient flow on M in (kappa, nu): field, fixed points and their type, PGD trajectories"
SEED = 20250102
COST = 0.9  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only


def params(quick: bool) -> dict:
    return {"d": PAPER_D, "L": PAPER_L, "gamma": PAPER_GAMMA, "lam": 0.1, "alpha": 4e-3,
            "steps": 1_000 if quick else 20_000, "log_every": 10 if quick else 50,
            "grid": 21 if quick else 41, "n_uniform": 4 if quick else 8, "n_ring": 8 if quick else 16,
            "ring_radius": 0.9}


def _velocity(p, kappa, nu):
    from theory.risk import risk_grad_from_arrays

    zero = np.zeros_like(np.asarray(kappa, dtype=float))
    r_kappa, r_nu, *_ = risk_grad_from_arrays(p["d"], p["L"], p["gamma"], 0.0, p["lam"],
                                              kappa, nu, zero, zero, zero)
    return -(1.0 - np.square(kappa)) * r_kappa, -(1.0 - np.square(nu)) * r_nu


def compute(p: dict, rng: np.random.Generator, progress) -> dict:
    from numerics.dynamics.initial import sample_initial_overlaps
    from numerics.dynamics.phase_portrait import manifold_fixed_points, separatrix
    from numerics.dynamics.pgd import overlap_pgd
    from theory import Overlaps, Problem

    problem = Problem(d=p["d"], L=p["L"], gamma=p["gamma"], lam=p["lam"])
    axis = np.linspace(-1.0, 1.0, p["grid"])
    dkappa, dnu = _velocity(p, *np.meshgrid(axis, axis))
    fixed = manifold_fixed_points(problem)
    sep = separatrix(problem)
    uniform = sample_initial_overlaps(p["d"], p["n_uniform"], rng, on_manifold=True)
    angle = 2 * np.pi * (np.arange(p["n_ring"]) + 0.5) / p["n_ring"]
    kappa0 = np.r_[uniform.kappa, p["ring_radius"] * np.cos(angle)]
    nu0 = np.r_[uniform.nu, p["ring_radius"] * np.sin(angle)]
    zero = np.zeros_like(kappa0)
    with progress(total=1, desc=f"{NAME}: PGD") as bar:
        run = overlap_pgd(problem, Overlaps(kappa=kappa0, nu=nu0, theta=zero, eta=zero, rho=zero),
                          alpha=p["alpha"], n_steps=p["steps"], log_every=p["log_every"])
        bar.update()
    return {"axis": axis, "dkappa": dkappa, "dnu": dnu, "speed": np.hypot(dkappa, dnu),
            "fixed_points": np.array([(f.kappa, f.nu) for f in fixed]),
            "fixed_eigenvalues": np.array([f.eigenvalues for f in fixed]),
            "fixed_kind": np.array([f.kind for f in fixed]),
            "separatrix_kappa": sep.kappa, "separatrix_nu": sep.nu,
            "pgd_kappa": run.kappa, "pgd_nu": run.nu,
            "pgd_distance_to_M": np.sqrt(run.theta**2 + run.eta**2 + run.rho**2),
            "pgd_from_uniform": np.r_[np.ones(p["n_uniform"], bool), np.zeros(p["n_ring"], bool)]}


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure

    from ..style import PALETTE, SINGLE_COLUMN, draw_fixed_points

    fig = Figure(figsize=(SINGLE_COLUMN, 4.4), layout="constrained")
    ax = fig.subplots()
    axis = data["axis"]
    ax.streamplot(axis, axis, data["dkappa"], data["dnu"], color=data["speed"], cmap="Greys",
                  density=1.1, linewidth=0.7, arrowsize=0.7)
    for sign in (1, -1):   # the separatrix and its image under (kappa, nu) -> (-kappa, -nu)
        ax.plot(sign * data["separatrix_kappa"], sign * data["separatrix_nu"], color=PALETTE["closed_form"],
                ls="--", lw=1.0, label="separatrix (stable manifold of the saddle)" if sign > 0 else None)
    seen = set()
    for j, uniform in enumerate(data["pgd_from_uniform"]):
        label = "PGD, init uniform on M" if uniform else f"PGD, init |(κ, ν)| = {p['ring_radius']}"
        ax.plot(data["pgd_kappa"][:, j], data["pgd_nu"][:, j], lw=1.3,
                color=PALETTE["accent"] if uniform else PALETTE["flow"],
                label=label if label not in seen else None)
        ax.plot(data["pgd_kappa"][0, j], data["pgd_nu"][0, j], ".", color=PALETTE["muted"])
        seen.add(label)
    draw_fixed_points(ax, data["fixed_points"], data["fixed_kind"], label="fixed point", seen=seen, size=6, edge=0.9)
    ax.set(xlim=(-1.05, 1.05), ylim=(-1.05, 1.05), aspect="equal", xlabel="κ = ⟨k, k*⟩", ylabel="ν = ⟨v, v*⟩",
           title=f"Gradient flow on M: d = {p['d']}, L = {p['L']}, λ = {p['lam']}\nPGD α = {p['alpha']}, {p['steps']:,} steps")
    ax.set_xticks([-1, -0.5, 0, 0.5, 1])
    ax.set_yticks([-1, -0.5, 0, 0.5, 1])
    fig.legend(loc="outside lower center", ncols=1)
    return fig
