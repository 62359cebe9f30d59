"""Stability of the oracle (k*, v*) as a critical point of R on the product of spheres (docs/math/critical-lambda.md#hessian-at-the-oracle, derived).

- lambda_c: the closed-form Riemannian Hessian (``theory.stability.oracle_hessian``) loses
  positive definiteness at lambda_c (``critical_lambda``); checked against the root of the
  smallest eigenvalue of a finite-difference Hessian of R(k, v) in dimension d, with k, v
  moved on their spheres (at a critical point the Hessian of the pull-back through any
  retraction is the Riemannian Hessian; Absil, Mahony, Sepulchre 2008, Prop. 5.5.6).
- lambda_c -> sqrt(3)/2: the symbolic large-d expansion (``theory.symbolic.critical_lambda_limit``)
  lambda_c(d) = sqrt(3)/2 + c1/d + O(1/d^2), c1 = 4 sqrt(3) gamma^2 (L-1)/3, against the
  finite-d root.
"""

from __future__ import annotations

import math

import numpy as np

from ..framework import Check, claim

ORDER = 65

_FD_CASES = {True: [(8, 3, 0.8)], False: [(8, 3, 0.8), (12, 5, 0.7), (16, 4, 1.0)]}


@claim("lambda-c-finite-differences",
       "lambda_c (derived, docs/math/critical-lambda.md#critical-lambda): the oracle is a strict local minimum of R on the sphere product "
       "for lambda < lambda_c and a saddle above; lambda_c from the closed-form Riemannian Hessian "
       "equals the root of the smallest eigenvalue of the Hessian of R(k, v) in dimension d", cost=0.17)
def lambda_c_matches_finite_differences(quick: bool, rng) -> Check:
    from scipy.optimize import brentq

    from numerics.dynamics.hessian_fd import oracle_spectrum_fd, tangent_frame
    from theory import Problem
    from theory import stability
    from theory.symbolic.functions import roundoff_scale
    from theory.symbolic.risk_expr import risk_expression, risk_symbols
    from theory.parameters import Task

    S = risk_symbols()
    scale_of = roundoff_scale(S.all, risk_expression())
    ratios, gaps, allowed, rel_tol = [], [], [], []
    for (d, L, gamma), child in zip(_FD_CASES[quick], rng.spawn(len(_FD_CASES[quick]))):
        crit = stability.critical_lambda(Task(d=d, L=L, gamma=gamma))
        if not crit.found:
            raise ArithmeticError(f"critical_lambda found no lambda_c at d={d}, L={L}, gamma={gamma}")
        lam_c = crit.lam_c
        frame = tangent_frame(d, child)
        scale = float(scale_of(float(d), float(L), gamma, 0.0, lam_c, 1.0, 1.0, 0.0, 0.0, 0.0))
        fd_min = lambda lam: oracle_spectrum_fd(d, L, gamma, lam, frame, scale=scale).eigenvalues[0]
        lam_fd = brentq(fd_min, 0.9 * lam_c, 1.1 * lam_c, xtol=1e-12)
        # |lam_fd - lam_c| <= (eigenvalue error bound) / |d mu / d lambda| at lam_c, mu the smallest
        # block eigenvalue of the closed form (its slope by a central difference, relative step 1e-6).
        mu = lambda lam: stability.oracle_hessian(Problem(d=d, L=L, gamma=gamma, lam=lam)).block_eigenvalues[0]
        slope = (mu(lam_c * (1 + 1e-6)) - mu(lam_c * (1 - 1e-6))) / (2e-6 * lam_c)
        tol = oracle_spectrum_fd(d, L, gamma, lam_c, frame, scale=scale).error_bound / abs(slope) + 2 * crit.xtol + 1e-12
        gaps.append(abs(lam_fd - lam_c))
        allowed.append(tol)
        rel_tol.append(tol / lam_c)
        ratios.append(gaps[-1] / tol)
    worst = int(np.argmax(ratios))
    return Check(
        method="brentq root of the smallest eigenvalue of a Richardson-extrapolated finite-difference "
               "Hessian of R(normalise(k* + B_k z_k), normalise(v* + B_v z_v)) vs theory.stability."
               f"critical_lambda at (d, L, gamma) in {_FD_CASES[quick]}",
        measured=ratios[worst],
        measured_text=f"max |lambda_fd - lambda_c| / allowed = {ratios[worst]:.3g} "
                      f"(|difference| = {gaps[worst]:.2e}, allowed = {allowed[worst]:.2e} = "
                      f"{rel_tol[worst]:.1e} lambda_c)",
        tolerance=1.0,
        derivation="allowed = FD eigenvalue error bound (Richardson truncation estimate + 64-ulp "
                   "roundoff, Weyl) / |d mu/d lambda| at lambda_c + 2 brentq xtol",
        details={"cases": [list(c) for c in _FD_CASES[quick]], "differences": gaps, "allowed": allowed},
    )


_LIMIT_CASES = {True: [(10, math.sqrt(0.5))], False: [(10, math.sqrt(0.5)), (2, 1.0), (50, 1.5)]}
_LIMIT_D = {True: (1e3, 1e4, 1e5, 1e6), False: (1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6)}


@claim("lambda-c-limit",
       "lambda_c -> sqrt(3)/2 (derived, docs/math/critical-lambda.md#limit-as-d-grows-and-first-correction): as d -> inf, lambda_c(d) = sqrt(3)/2 + c1/d + O(1/d^2) "
       "with c1 = 4 sqrt(3) gamma^2 (L-1)/3, for every L >= 2 and gamma > 0", cost=1.2)
def lambda_c_limit(quick: bool, rng) -> Check:
    import sympy as sp

    from theory import stability
    from theory.symbolic.hessian import critical_lambda_limit
    from theory.symbolic.risk_expr import risk_symbols
    from theory.parameters import Task

    S = risk_symbols()
    limit = critical_lambda_limit()
    if len(limit.lam_c) != 1:
        raise ArithmeticError(f"the symbolic limit has {len(limit.lam_c)} positive roots, expected one")
    root = float(limit.lam_c[0])
    c1_of = sp.lambdify((S.L, S.gamma), limit.first_correction[0], "math")
    ds = np.array(_LIMIT_D[quick])
    ratios, slopes, rels, c1s, xtols = [], [], [], [], []
    for L, gamma in _LIMIT_CASES[quick]:
        crits = [stability.critical_lambda(Task(d=int(d), L=L, gamma=gamma), lam_min=0.5, lam_max=2.0, n_grid=50)
                 for d in ds]
        if not all(c.found for c in crits):
            raise ArithmeticError(f"critical_lambda found no root in [0.5, 2] for L={L}, gamma={gamma}")
        gap = np.array([c.lam_c for c in crits]) - root
        c1 = float(c1_of(L, gamma))
        rel = ds * gap / c1 - 1.0
        # rel(d) = O(1/d): extrapolate |rel| from d_min to d_max, with a factor 2 for the change of
        # d * rel between them (the O(1/d^2) term), plus brentq's xtol relative to the gap.
        allowed = 2 * abs(rel[0]) * ds[0] / ds[-1] + crits[-1].xtol * ds[-1] / c1
        ratios.append(abs(rel[-1]) / allowed)
        slopes.append(float(np.polyfit(np.log(ds), np.log(np.abs(gap)), 1)[0]))
        rels.append(rel.tolist())
        c1s.append(c1)
        xtols.append(float(crits[-1].xtol))
    worst = int(np.argmax(ratios))
    return Check(
        method=f"theory.stability.critical_lambda at d in {[f'{d:.0e}' for d in ds]} against the "
               "symbolic root and first correction (theory.symbolic.critical_lambda_limit), (L, gamma) "
               f"in {[(L, round(g, 4)) for L, g in _LIMIT_CASES[quick]]}",
        measured=ratios[worst],
        measured_text=(f"symbolic root {limit.lam_c[0]}, c1 = {limit.first_correction[0]}; "
                       f"max |d (lambda_c - root)/c1 - 1| at d_max / allowed = {ratios[worst]:.3g}; "
                       f"fitted log-log slopes of lambda_c - root: {', '.join(f'{s:.4f}' for s in slopes)} "
                       "(predicted -1)"),
        tolerance=1.0,
        derivation="relative error of c1/d is O(1/d): allowed at d_max = 2 x its value at d_min "
                   "scaled by d_min/d_max (factor 2 for the O(1/d^2) change) + brentq xtol d_max/c1",
        details={"d": ds.tolist(), "relative_errors": rels, "slopes": slopes, "root": root, "c1": c1s,
                 "xtol": xtols, "ratios": ratios},
    )
