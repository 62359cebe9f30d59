"""The compiled Monte-Carlo loss (numerics/kernels/montecarlo_step.py) against the NumPy route.

Same draws (``numerics.montecarlo.task.sequence_draws``); each loss (Y - T)^2 is computed by the same
operations except the order of the sums over r coordinates and L tokens and the erf of the C
library: each of Y and T is off by at most ~(r + L) ulps of the sum of the magnitudes of its
terms, S = |Y| + sum_l |<X_l, v>|, so the loss by 2 (r + L) eps S |Y - T| + O(eps^2), and so is
the sample mean (a mean of such terms); the standard error likewise (docs/math/kernels.md#monte-carlo).
"""

import numpy as np
import pytest

from numerics.montecarlo import population_risk_mc
from theory.parameters import Overlaps, Problem

EPS = np.finfo(float).eps
GAMMA = np.sqrt(0.5)
POINTS = [Overlaps(kappa=0.3, nu=0.6, theta=0.1, eta=-0.1, rho=0.3 * 0.1 - 0.1 * 0.6),  # risk_routes
          Overlaps(kappa=0.95, nu=0.6),                                                 # on M
          Overlaps(kappa=1.0, nu=1.0),                                                  # oracle
          Overlaps(kappa=0.0, nu=0.0, theta=0.0, eta=0.0, rho=1.0)]                     # k = v


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("d, L, eps, lam, J", [(400, 10, 0.1, 0.1, None), (400, 10, 0.0, 3.0, 2),
                                               (4, 3, 0.5, 1.0, None), (80, 10, 0.1, 2.0, None)])
def test_span_route_equals_reference(point, d, L, eps, lam, J):
    problem = Problem(d=d, L=L, gamma=GAMMA, eps=eps, lam=lam)
    est = [population_risk_mc(problem, point, n=20_000, rng=np.random.default_rng(4), J=J,
                              chunk=7_000, engine=e) for e in ("numpy", "kernel")]
    # S |Y - T| <= (|Y| + |T| + sum |q|)^2 <= 4 (mean loss + ...) : bounded by 8 (d + L^2) here
    # (|Y| <= s + 5 gamma, |q| <= 5 at 5 sd); tol = 2 (r + L) eps * 8 (d + L^2) per loss.
    tol = 2 * (4 + L) * EPS * 8 * (d + L * L)
    assert abs(est[0].mean - est[1].mean) <= tol
    assert abs(est[0].stderr - est[1].stderr) <= tol
    assert est[0].n == est[1].n


def test_full_dimensional_route_equals_reference():
    problem = Problem(d=30, L=5, gamma=GAMMA, eps=0.1, lam=0.7)
    est = [population_risk_mc(problem, POINTS[0], n=3_000, rng=np.random.default_rng(5),
                              full_dim=True, engine=e) for e in ("numpy", "kernel")]
    tol = 2 * (30 + 5) * EPS * 8 * (30 + 25)
    assert abs(est[0].mean - est[1].mean) <= tol


def test_bad_engine():
    problem = Problem(d=30, L=5, gamma=GAMMA, eps=0.1, lam=0.7)
    with pytest.raises(ValueError, match="engine='gpu'"):
        population_risk_mc(problem, POINTS[0], n=10, rng=np.random.default_rng(5), engine="gpu")
