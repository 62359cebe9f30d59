"""Extreme but valid parameters: the closed form and the quadrature stay finite and agree.

lambda up to the float64 maximum, gamma from the smallest subnormal to 1e150: the closed form forms
lambda^j gamma^(2j) / c^j from bounded ratios (theory.risk._ratios), the quadrature conditions on
the unscaled Gram matrix, so neither overflows nor divides by zero where R itself is representable.
Beyond that (gamma^2 past the float64 range) both raise a ValueError naming gamma.
"""

import numpy as np
import pytest

from theory import Overlaps, Problem, oracle_risk, population_risk, population_risk_quad
from theory.zeta import ZETA_MAX_RELATIVE_ERROR, zeta, zeta_at_zero, zeta_tt_at_zero

EPS = np.finfo(float).eps
OFF_M = Overlaps(kappa=0.3, nu=0.2, theta=0.1, eta=-0.2, rho=0.15)
ON_M = Overlaps(kappa=0.6, nu=-0.4)


@pytest.mark.parametrize("lam, gamma", [
    (2e154, 0.7), (1e200, 0.7), (1e300, 0.7), (1.7e308, 0.7),          # lambda^2 overflows
    (0.5, 2e77), (0.5, 1e100), (0.5, 1e150),                           # gamma^4 overflows
    (1e300, 1e10), (1e300, 1e-300), (1e-300, 1e-300),
    (0.5, 1e-163), (0.5, 1e-300), (0.5, 5e-324),                       # gamma^2 underflows
    (5e-324, 1.0), (1e-320, 1e300 ** 0.5),
])
@pytest.mark.parametrize("overlaps", [OFF_M, ON_M], ids=["off_M", "on_M"])
def test_closed_form_equals_quadrature_at_extreme_lambda_and_gamma(lam, gamma, overlaps):
    problem = Problem(d=400, L=10, gamma=gamma, eps=0.1, lam=lam)
    closed = float(population_risk(problem, overlaps))
    q = population_risk_quad(problem, overlaps)
    assert np.isfinite(closed) and np.isfinite(q.value)
    # The closed form's rounding: a few ulps of each of its ~10 terms, each <= (gamma^2 + d/2 +
    # L^2) in size; 64 ulps of that magnitude bounds it (as the closed-form floor of test_risk_routes).
    floor = 64 * EPS * (gamma**2 + problem.d / 2 + problem.L**2) + 8 * ZETA_MAX_RELATIVE_ERROR
    assert abs(closed - q.value) <= q.abserr + floor, (closed, q)


def test_extreme_lambda_limits_are_the_hard_gate():
    """lambda -> inf: erf(lambda x) -> sign(x). The closed form at lambda = 1e300 equals that at 1e20
    (both in the saturated regime, where R no longer depends on lambda to float64 precision)."""
    for overlaps in (OFF_M, ON_M):
        at = lambda lam: float(population_risk(Problem(d=400, lam=lam), overlaps))
        assert at(1e300) == pytest.approx(at(1e20), rel=64 * EPS)
        assert at(1.7e308) == pytest.approx(at(1e20), rel=64 * EPS)


def test_zeta_pieces_have_no_overflow_at_huge_arguments():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        assert zeta_at_zero(1e300) == pytest.approx(1.0, rel=4 * EPS)
        assert zeta_at_zero(0.0) == 0.0
        assert zeta_tt_at_zero(1e200) == 0.0
        assert zeta(1e300, 1e300) == pytest.approx(1.0, rel=4 * EPS)
        assert float(oracle_risk(Problem(d=400, lam=1e300))) >= 0


def test_risk_beyond_float_range_raises_naming_gamma():
    for route in (population_risk, population_risk_quad):
        with pytest.raises(ValueError, match=r"gamma=.*float64 range"):
            route(Problem(d=400, gamma=1e160, lam=0.5), OFF_M)
    with pytest.raises(ValueError, match=r"gamma=.*float64 range"):
        oracle_risk(Problem(d=400, gamma=1e160, lam=0.5))
