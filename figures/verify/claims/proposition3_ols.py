"""Paper Proposition 3 by ordinary least squares on samples, and the attention / linear crossover.

- OLS (``numerics.montecarlo.ols.ols_risk_mc``) fitted on sampled sequences reaches the closed-form best
  linear risk eps^2 + gamma^2 - gamma^4/(gamma^2 + L - 1) of Prop 3, the same at two values of d
  for each (L, gamma): the risk does not depend on d. The sibling claim ``proposition3-montecarlo``
  scores Prop 3's coefficients; here the coefficients are learned.
- Crossover (derived): min_lambda R(k*, v*) - R_lin changes sign once, at the d_c found by
  ``theory.baselines.attention_linear_crossover``; checked by the sign at every integer d below
  d_c and on a log grid of integers above it.
"""

from __future__ import annotations

import math

import numpy as np

from ..framework import Check, claim
from ..checks import EPS, z_test_check

ORDER = 41

_G_HALF = math.sqrt(0.5)
# (L, gamma) each at two dimensions: OLS must reach the same d-free value at both.
_OLS_CASES = {True: ((2, _G_HALF, (3, 10)), (4, 1.0, (3, 6))),
              False: ((2, _G_HALF, (5, 20)), (4, 1.0, (5, 20)), (10, _G_HALF, (3, 10)))}
_OLS_N = {True: 40_000, False: 200_000}
_ALPHA, _POWER = 1e-3, 0.9
_DETECT = {True: 0.05, False: 0.02}


@claim("proposition3-ols",
       "Proposition 3: least squares fitted on sampled sequences (J uniform) reaches the risk "
       "eps^2 + gamma^2 - gamma^4/(gamma^2 + L - 1), whatever d")
def ols_matches_proposition3(quick: bool, rng) -> Check:
    from numerics.montecarlo.geometry import random_orthonormal
    from numerics.montecarlo.ols import ols_risk_mc
    from theory.baselines import linear_risk
    from theory.parameters import Task

    n = _OLS_N[quick]
    problems = [Task(d=d, L=L, gamma=gamma, eps=0.1)
                for L, gamma, ds in _OLS_CASES[quick] for d in ds]
    estimates, corrections = [], []
    for problem, child in zip(problems, rng.spawn(len(problems))):
        k_star, v_star = random_orthonormal(int(problem.d), 2, child)
        res = ols_risk_mc(problem, k_star, v_star, n_train=n, n_test=n, rng=child)
        estimates.append(res.corrected)
        corrections.append(res.excess_correction)
    check = z_test_check(
        method=f"z-test: test risk of OLS (n_train = n_test = {n}, minus its sandwich estimation-excess "
               f"estimate) vs theory.baselines.linear_risk; (L, gamma) = "
               + ", ".join(f"({L}, {g:.3g}) at d = {ds}" for L, g, ds in _OLS_CASES[quick]),
        estimates=estimates, exacts=[float(linear_risk(p)) for p in problems],
        alpha=_ALPHA, power=_POWER, detect=_DETECT[quick])
    details = {**check.details, "d": [int(p.d) for p in problems], "L": [int(p.L) for p in problems],
               "excess_correction": corrections}
    return Check(method=check.method, measured=check.measured, measured_text=check.measured_text,
                 tolerance=check.tolerance, derivation=check.derivation, details=details)


def _integers_above(d_c: float, count: int) -> np.ndarray:
    return np.unique(np.round(np.logspace(math.log10(math.ceil(d_c)), 8, count))).astype(int)


@claim("attention-linear-crossover",
       "Crossover (derived): the oracle attention at its best lambda beats the best linear predictor "
       "(Prop 3) exactly for d above the root d_c(L, gamma) of min_lambda R(k*, v*) = R_lin")
def attention_beats_linear_above_crossover(quick: bool, rng) -> Check:
    from theory.baselines import attention_linear_crossover, linear_risk, oracle_best_lambda
    from theory.zeta import ZETA_MAX_RELATIVE_ERROR
    from theory.parameters import Task

    gammas = (_G_HALF, 2.0) if quick else (_G_HALF, 1.0, 2.0)
    wrong, undecided, smallest, roots = 0, 0, math.inf, {}
    for L in (2, 10):
        for gamma in gammas:
            d_c = attention_linear_crossover(L, gamma)
            roots[f"L={L}, gamma={gamma:.4g}"] = d_c
            lin = float(linear_risk(Task(d=2, L=L, gamma=gamma, eps=0.0)))
            below = np.arange(2, math.ceil(d_c))
            above = _integers_above(d_c, 12 if quick else 40)
            for ds, sign in ((below, 1.0), (above, -1.0)):
                for d in ds:
                    gap = oracle_best_lambda(Task(d=int(d), L=L, gamma=gamma, eps=0.0)).risk - lin
                    # float64 error of the two closed forms, both O(gamma^2 + L zeta) <= gamma^2 + L.
                    error = (ZETA_MAX_RELATIVE_ERROR + 64 * EPS) * (gamma**2 + L)
                    undecided += abs(gap) <= error
                    wrong += abs(gap) > error and np.sign(gap) != sign
                    smallest = min(smallest, abs(gap) / error)
    return Check(
        method=f"sign of min_lambda R(k*, v*) - R_lin (eps = 0) at every integer 2 <= d < d_c and on a "
               f"log grid of integers from ceil(d_c) to 1e8, L in {{2, 10}}, gamma in "
               f"{{{', '.join(f'{g:.3g}' for g in gammas)}}}",
        measured=float(wrong + undecided),
        measured_text=(f"{wrong} wrong and {undecided} undecided signs; roots d_c = "
                       + ", ".join(f"{v:.4g} ({k})" for k, v in roots.items())
                       + f"; smallest |gap| = {smallest:.3g} x its float64 error bound"),
        tolerance=0.0,
        derivation="exact sign test: every |gap| must exceed the float64 error bound of the two closed "
                   "forms (theory.zeta's relative error + 64 ulps, times gamma^2 + L), else undecided",
        details={"roots": roots, "wrong": int(wrong), "undecided": int(undecided),
                 "smallest_gap_over_error": smallest},
    )
