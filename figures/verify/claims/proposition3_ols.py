"""Paper Proposition 3 by ordinary least squares on samples, and the attention / linear crossover.

- OLS (``numerics.montecarlo.ols.ols_risk_mc``) fitted on sampled sequences reaches the closed-form best
  linear risk eps^2 + gamma^2 - gamma^4/(gamma^2 + L - 1) of Prop 3, the same at two values of d
  for each (L, gamma): the risk does not depend on d. n_train and n_test are sized from the stated
  effect (a relative error of 2% detected with probability 0.9, family-wise false-failure rate 1e-3)
  with a pilot: docs/math/baselines.md#ols-sample-sizes. The sibling claim ``proposition3-montecarlo``
  scores Prop 3's coefficients; here the coefficients are learned.
- Crossover (derived): min_lambda R(k*, v*) - R_lin changes sign once, at the d_c found by
  ``theory.baselines.attention_linear_crossover``; checked by the sign at every integer d below
  d_c and on a log grid of integers above it.
"""

from __future__ import annotations

import math

import numpy as np

from ..framework import Check, claim
from ..checks import EPS, PILOT_N, z_test_check

ORDER = 41

_G_HALF = math.sqrt(0.5)
# (L, gamma) each at two dimensions: OLS must reach the same d-free value at both.
_OLS_CASES = {True: ((2, _G_HALF, (3, 10)), (4, 1.0, (3, 6))),
              False: ((2, _G_HALF, (5, 20)), (4, 1.0, (5, 20)), (10, _G_HALF, (3, 10)))}
_ALPHA, _POWER = 1e-3, 0.9
_DETECT = {True: 0.05, False: 0.02}
# Sample sizes (docs/math/baselines.md#ols-sample-sizes): a share of the corrected estimate's
# variance budget goes to the spread of the estimation excess (set by n_train), the rest to the
# test mean (set by n_test); n_train >= _MIN_RATIO L d keeps the first-order excess formula's
# neglected terms (relative order L d / n_train) below 1/_MIN_RATIO of the correction.
_EXCESS_SHARE = 0.1
_MIN_RATIO = 50


def _safe(sd: float, n: int) -> float:
    """A pilot's standard deviation raised by 3 of its standard errors under normality (as
    ``checks.sized_estimates``), against underestimating the size."""
    return sd * (1.0 + 3.0 / math.sqrt(2.0 * (n - 1)))


def ols_sizes(pilot, exact: float, p: int, *, z: float, detect: float, margin: float = 1.0) -> tuple[int, int]:
    """(n_train, n_test) such that the corrected OLS estimate's stderr is at most
    detect |exact| / z, z = z_crit + z_power (docs/math/baselines.md#ols-sample-sizes), from a
    pilot ``OLSResult``: its loss sd (test sample) and its sqrt(2 tr((Sigma^-1 S)^2)) =
    excess_sd n_train, which does not depend on n_train; both raised by ``margin``."""
    budget = (detect * abs(exact) / z) ** 2
    n0, m0 = pilot.n_train, pilot.test_risk.n
    loss_sd = margin * _safe(pilot.test_risk.stderr * math.sqrt(m0), m0)
    spread = margin * _safe(pilot.excess_sd * n0, min(m0, n0))
    n_train = max(math.ceil(spread / math.sqrt(_EXCESS_SHARE * budget)), _MIN_RATIO * p)
    n_test = max(math.ceil(loss_sd ** 2 / ((1.0 - _EXCESS_SHARE) * budget)), 2)
    return n_train, n_test


def _sized_ols(problem, k_star, v_star, exact, p, z, detect, rng):
    """OLS at the sizes of ``ols_sizes`` from an external pilot of PILOT_N test sequences; a run
    whose own stderr still misses the target (a pilot sd too low: the squared errors are heavy
    tailed) sizes the next one with 10% margin on its sds, at most 3 runs. Every run is discarded
    but the last, and the choice looks at spreads only, not at the means."""
    from numerics.montecarlo.ols import ols_risk_mc

    res = ols_risk_mc(problem, k_star, v_star, n_train=max(PILOT_N, 2 * p), n_test=PILOT_N, rng=rng.spawn(1)[0])
    for margin in (1.0, 1.1, 1.1):
        n_train, n_test = ols_sizes(res, exact, p, z=z, detect=detect, margin=margin)
        res = ols_risk_mc(problem, k_star, v_star, n_train=n_train, n_test=n_test, rng=rng.spawn(1)[0])
        if z * res.corrected.stderr <= detect * abs(exact):
            break
    return res


@claim("proposition3-ols",
       "Proposition 3: least squares fitted on sampled sequences (J uniform) reaches the risk "
       "eps^2 + gamma^2 - gamma^4/(gamma^2 + L - 1), whatever d", cost=2)
def ols_matches_proposition3(quick: bool, rng) -> Check:
    from numerics.montecarlo.geometry import random_orthonormal
    from numerics.montecarlo.statistics import bonferroni_z, power_z
    from numerics.sgd.trajectory import child_streams
    from theory.baselines import linear_risk
    from theory.parameters import Task

    problems = [Task(d=d, L=L, gamma=gamma, eps=0.1)
                for L, gamma, ds in _OLS_CASES[quick] for d in ds]
    exacts = [float(linear_risk(p)) for p in problems]
    z = bonferroni_z(_ALPHA, len(problems)) + power_z(_POWER)
    estimates, corrections, sizes = [], [], []
    # SFC64 children: their normals are drawn by a compiled loop (numerics.montecarlo.task.standard_normals)
    for problem, exact, child in zip(problems, exacts, child_streams(rng, len(problems))):
        p = int(problem.L * problem.d)
        k_star, v_star = random_orthonormal(int(problem.d), 2, child)
        res = _sized_ols(problem, k_star, v_star, exact, p, z, _DETECT[quick], child)
        n_train, n_test = res.n_train, res.test_risk.n
        estimates.append(res.corrected)
        corrections.append(res.excess_correction)
        sizes.append((n_train, n_test))
    check = z_test_check(
        method="z-test: test risk of OLS (minus its sandwich estimation-excess estimate; stderr of the test "
               "mean and of the excess's spread) vs theory.baselines.linear_risk; (L, gamma) = "
               + ", ".join(f"({L}, {g:.3g}) at d = {ds}" for L, g, ds in _OLS_CASES[quick])
               + f"; (n_train, n_test) sized for the power target from a pilot of {PILOT_N:,}: "
               + ", ".join(f"({a:,}, {b:,})" for a, b in sizes),
        estimates=estimates, exacts=exacts, alpha=_ALPHA, power=_POWER, detect=_DETECT[quick])
    details = {**check.details, "d": [int(p.d) for p in problems], "L": [int(p.L) for p in problems],
               "excess_correction": corrections, "n_train": [a for a, _ in sizes]}
    return Check(method=check.method, measured=check.measured, measured_text=check.measured_text,
                 tolerance=check.tolerance, derivation=check.derivation, details=details)


def _integers_above(d_c: float, count: int) -> np.ndarray:
    return np.unique(np.round(np.logspace(math.log10(math.ceil(d_c)), 8, count))).astype(int)


@claim("attention-linear-crossover",
       "Crossover (derived): the oracle attention at its best lambda beats the best linear predictor "
       "(Prop 3) exactly for d above the root d_c(L, gamma) of min_lambda R(k*, v*) = R_lin", cost=0.35)
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
