"""Large-d asymptotics of the oracle excess risk (docs/math/corollary2.md#rate-of-the-oracle-excess, paper Cor 2) against the exact closed form.

Rates are tested by fitted log-log slopes. The tolerance on a slope is derived from the known
next-order correction: if exact = leading * (1 + delta(d)), the fitted slope of the exact values
differs from the leading exponent by at most max |d log(1 + delta)/d log d| over the fitted range;
we take twice that (the factor 2 covers the terms beyond delta).
"""

import numpy as np
import pytest
import sympy as sp
from scipy import integrate
from scipy.special import log_ndtr

from theory.parameters import Problem
from theory.risk import oracle_risk
from theory.symbolic.asymptotics import (corollary2_exponent, leakage_series, minimise_oracle_excess,
                                         optimal_excess_predicted, optimal_expansion, optimal_lambda_predicted,
                                         shortfall_leading)
from theory.symbolic.functions import numeric_function
from theory.zeta import zeta

GAMMA = np.sqrt(0.5)


def _excess(d, L, lam):
    return float(oracle_risk(Problem(d=int(d), L=int(L), gamma=GAMMA, eps=0.0, lam=float(lam))))


def _slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def _max_log_derivative(fn, ds):
    """max over the range of |d log fn / d log d| by central differences in log d (fn smooth)."""
    u = np.log(np.geomspace(ds[0], ds[-1], 200))
    h = 1e-3
    return np.max(np.abs((np.log(fn(np.exp(u + h))) - np.log(fn(np.exp(u - h)))) / (2 * h)))


def test_leakage_series_coefficients():
    lam, series = leakage_series()
    assert series.removeO() == 4 * lam**2 / sp.pi - 8 * lam**4 / sp.pi


def test_leakage_series_against_zeta():
    # zeta(0, lam) - (4/pi) lam^2 + (8/pi) lam^4 = (56/(3 pi)) lam^6 (1 + O(lam^2)).
    lam, series = leakage_series(8)
    c6 = series.removeO().coeff(lam, 6)
    assert c6 == sp.Rational(56, 3) / sp.pi
    for x in (0.02, 0.05):
        rest = zeta(0.0, x) - 4 * x**2 / np.pi + 8 * x**4 / np.pi
        # relative O(lam^2) remainder: |rest/(c6 lam^6) - 1| <= 10 lam^2 (c8/c6 = 6.9..., see series)
        assert abs(rest / (float(c6) * x**6) - 1) <= 10 * x**2


def _log_shortfall_exact(x, g):
    """log E[erfc(x + gZ)^2] by quadrature around the tilted mean (log-space, no underflow)."""
    log_erfc = lambda y: np.log(2.0) + log_ndtr(-np.sqrt(2.0) * y)
    ell = lambda z: 2 * log_erfc(x + g * z) - z * z / 2
    mu = -4 * g * x / (1 + 4 * g * g)
    top = ell(mu)
    val, err = integrate.quad(lambda z: np.exp(ell(z) - top), mu - 40, mu + 40, points=[mu],
                              epsabs=0, epsrel=1e-12, limit=200)
    assert err < 1e-10 * val
    return top + np.log(val / np.sqrt(2 * np.pi))


@pytest.mark.parametrize("g", [0.05, 0.3])
def test_shortfall_leading_term(g):
    # T1 / leading - 1 = O(1/x^2): fitted slope of log|ratio - 1| against log x is -2, within the
    # slope's variation between the two halves of the range (the O(1/x^4) term makes it vary).
    xs_, gs_, lead, _ = shortfall_leading()
    log_lead = numeric_function((xs_, gs_), sp.expand_log(sp.log(lead), force=True))
    xs = np.geomspace(5, 80, 9)
    rel = np.array([np.expm1(_log_shortfall_exact(x, g) - log_lead(x, g)) for x in xs])
    y = np.log(np.abs(rel))
    slope = np.polyfit(np.log(xs), y, 1)[0]
    tol = abs(np.polyfit(np.log(xs[:5]), y[:5], 1)[0] - np.polyfit(np.log(xs[4:]), y[4:], 1)[0])
    assert abs(slope + 2) <= max(tol, 0.02)  # 0.02: quadrature rel. error 1e-12 on rel ~ 1e-4
    assert np.all(np.diff(np.abs(rel)) < 0)  # the relative error shrinks monotonically


@pytest.mark.parametrize("a, ms", [(0, None), (0.5, np.round(np.geomspace(100, 10000, 9)))])
def test_corollary2_rate(a, ms):
    # lam = (L d)^(-1/4): excess ~ d^((a-1)/2) (a = 0: L = 10 fixed; a = 1/2: L = sqrt(d) exactly).
    p = float(corollary2_exponent(a))
    assert p == (a - 1) / 2
    if ms is None:
        ds = np.round(np.geomspace(1e4, 1e8, 9))
        Ls = np.full_like(ds, 10.0)
    else:
        ds, Ls = ms**2, ms
    lams = (Ls * ds) ** -0.25
    exact = np.array([_excess(d, L, lam) for d, L, lam in zip(ds, Ls, lams)])
    # delta: (L-1)/L - 1 (a > 0), the leakage series' -2 lam^2, and the shortfall over the leakage.
    x_, g_, lead, _ = shortfall_leading()
    short = numeric_function((x_, g_), lead)

    def ratio(d):
        L = 10.0 if a == 0 else d**a
        lam = (L * d) ** -0.25
        main = (L - 1) * 4 / np.pi * lam**2
        return ((L - 1) / L) * (1 - 2 * lam**2) + GAMMA**2 * short(lam * np.sqrt(d / 2), lam * GAMMA) / (main / (L - 1) * L)

    tol = 2 * _max_log_derivative(ratio, ds)
    assert abs(_slope(ds, exact) - p) <= tol
    assert tol < 0.05  # the test can tell -1/2 from -1/4 (a = 0 vs 1/2) and from 0


def test_counter_cases_do_not_converge():
    ds = np.round(np.geomspace(1e4, 1e8, 5))
    # L proportional to d: x = lam s stays 1/sqrt(2) and (L-1) lam^2 -> 1: excess -> const > 4/pi.
    prop = np.array([_excess(d, d, 1 / np.sqrt(d)) for d in ds])
    assert np.all(prop > 4 / np.pi * (1 - 1 / ds))
    assert corollary2_exponent(1) == 0
    # Fixed lambda: excess -> (L-1) zeta(0, lam) > 0 from above.
    fixed = np.array([_excess(d, 10, 0.1) for d in ds])
    assert np.all(fixed >= 9 * zeta(0.0, 0.1))


def test_optimal_expansion_coefficients():
    e = optimal_expansion()
    assert e.delta_1 == -1 and e.f_1 == -2


@pytest.fixture(scope="module")
def optimum():
    ds = np.round(np.geomspace(1e6, 1e8, 5))
    res = [minimise_oracle_excess(int(d), 10, GAMMA) for d in ds]
    return ds, np.array([r.lam for r in res]), np.array([r.excess for r in res])


def test_optimal_excess_rate(optimum):
    ds, _, excess = optimum
    lead = lambda d: optimal_excess_predicted(d, 10, GAMMA)
    nxt = lambda d: optimal_excess_predicted(d, 10, GAMMA, next_order=True)
    tol = 2 * _max_log_derivative(lambda d: nxt(d) / lead(d), ds)
    assert abs(_slope(ds, excess) - _slope(ds, lead(ds))) <= tol
    # Teeth: log(d)/d is distinguishable from 1/d here.
    assert abs(_slope(ds, lead(ds)) + 1) > 3 * tol
    # The derived next-order term improves the prediction at every d.
    assert np.all(np.abs(excess / nxt(ds) - 1) < np.abs(excess / lead(ds) - 1))


def test_optimal_lambda_rate(optimum):
    ds, lam, _ = optimum
    lead = lambda d: optimal_lambda_predicted(d, 10, GAMMA)
    nxt = lambda d: optimal_lambda_predicted(d, 10, GAMMA, next_order=True)
    tol = 2 * _max_log_derivative(lambda d: nxt(d) / lead(d), ds)
    assert abs(_slope(ds, lam) - _slope(ds, lead(ds))) <= tol
    assert np.all(np.abs(lam / nxt(ds) - 1) < np.abs(lam / lead(ds) - 1))
