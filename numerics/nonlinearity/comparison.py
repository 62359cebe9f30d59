"""The oracle of every member at its best lambda against d, beside the Bayes risk and the best
linear predictor (docs/math/nonlinearities.md#the-oracle; paper Theorem 1 and Prop 3 for erf and
the linear baseline).

For each member and d: lambda* = argmin_lambda R(k*, v*) (``theory.nonlinearity.oracle``) and the
excess R - eps^2 there with its error estimate. Bayes excess by ``theory.bayes.bayes_risk_quad``;
the best linear predictor's excess gamma^2 - gamma^4 / (gamma^2 + L - 1) (paper Prop 3) does not
depend on d.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory import PAPER_GAMMA, PAPER_L, Task, bayes_risk_quad, linear_risk
from theory.nonlinearity import NONLINEARITY_NAMES
from theory.nonlinearity.oracle import oracle_best_lambda_sigma

__all__ = ["OracleComparison", "oracle_comparison", "fitted_slope"]


@dataclasses.dataclass(frozen=True)
class OracleComparison:
    """Per member: d (n,), lam (n,), excess (n,), abserr (n,), interior (n,) in ``members[name]``;
    ``bayes_d``, ``bayes_excess``, ``bayes_abserr``; ``linear_excess`` (a number)."""

    members: dict
    bayes_d: np.ndarray
    bayes_excess: np.ndarray
    bayes_abserr: np.ndarray
    linear_excess: float
    L: int
    gamma: float


def oracle_comparison(d_grid, d_grid_costly, *, L=PAPER_L, gamma=PAPER_GAMMA, names=NONLINEARITY_NAMES,
                      lam_range=(1e-3, 1e2), progress=None) -> OracleComparison:
    """Best-lambda oracle excess of each member over ``d_grid`` (softmax and Bayes, whose quadrature
    costs more, over ``d_grid_costly``). ``progress``: optional callable advanced once per point."""
    members = {}
    for name in names:
        grid = d_grid_costly if name == "softmax" else d_grid
        rows = []
        for d in grid:
            opt = oracle_best_lambda_sigma(Task(d=int(d), L=L, gamma=gamma), name,
                                           lam_range=lam_range)
            rows.append((d, opt.lam, opt.excess.value, opt.excess.abserr, opt.interior))
            if progress:
                progress()
        cols = list(zip(*rows))
        members[name] = dict(d=np.array(cols[0], dtype=float), lam=np.array(cols[1]),
                             excess=np.array(cols[2]), abserr=np.array(cols[3]),
                             interior=np.array(cols[4], dtype=bool))
    bayes = [bayes_risk_quad(Task(d=int(d), L=L, gamma=gamma)) for d in d_grid_costly]
    linear = float(linear_risk(Task(d=2, L=L, gamma=gamma)))
    return OracleComparison(members, np.asarray(d_grid_costly, dtype=float),
                            np.array([b.value for b in bayes]), np.array([b.abserr for b in bayes]),
                            linear, L, float(gamma))


def fitted_slope(d, excess):
    """Least-squares slope of log excess on log d (the rate d^slope)."""
    return float(np.polyfit(np.log(d), np.log(excess), 1)[0])
