"""Corollary 2 (asymptotic Bayes optimality of the oracle), its counter-cases, and the risk ordering.

Rates are tested by log-log least-squares slopes with tolerances derived in theory.corollary2
(bounded deviation from the leading term times the fit's leverage). Monte-Carlo comparisons are
z-tests with false-failure rate ALPHA per test (Bonferroni over its comparisons).
"""

import dataclasses
import math

import numpy as np
import pytest
from scipy.special import erfc
from scipy.stats import norm

from numerics.montecarlo.bayes_risk import bayes_risk_mc
from numerics.montecarlo.population_risk import population_risk_mc
from numerics.montecarlo.risk_vs_d import risk_vs_d
from theory import Overlaps, zeta
from theory.baselines import linear_risk, null_risk, oracle_best_lambda
from theory.bayes import bayes_risk_quad
from theory.corollary2 import (SEQUENCES, corollary2_rate, log_deviation_bound, oracle_excess,
                               oracle_excess_lower_bound, proportional_limit)
from theory.zeta import ZETA_MAX_RELATIVE_ERROR
from theory.parameters import Task
from numerics.montecarlo.statistics import bonferroni_z
from rng_streams import sfc64

ALPHA = 1e-3
EPS64 = np.finfo(float).eps
G_HALF = math.sqrt(0.5)
D_FIT = np.logspace(4, 8, 17)


def z_crit(m):
    return bonferroni_z(ALPHA, int(m))


def float_log_error(excess, gamma):
    """Bound on |log E_computed - log E|: zeta's relative error on the noise term plus ~8 ulps of
    gamma^2 on the gate term 1 - 2 erf(a) + zeta(A, g), which is formed by cancellation."""
    return float(np.max(ZETA_MAX_RELATIVE_ERROR + 8 * EPS64 * gamma**2 / excess))


@pytest.mark.parametrize("name", sorted(SEQUENCES))
@pytest.mark.parametrize("gamma", [G_HALF, 1.5])
def test_oracle_excess_vanishes_at_the_predicted_rate(name, gamma):
    fit = corollary2_rate(name, D_FIT, gamma)
    delta = fit.delta_max + float_log_error(fit.excess, gamma)
    assert np.all(np.diff(fit.excess) < 0)
    # E / ((4/pi) r) lies in [e^-delta, e^delta], so E shrinks by the factor r does, within e^(2 delta).
    ratio = (fit.excess[-1] / fit.excess[0]) / (fit.rate[-1] / fit.rate[0])
    assert abs(math.log(ratio)) <= 2 * delta
    # log E = log(4/pi) + log r + eps, |eps| <= delta: slope 1 against log r.
    assert abs(fit.fit_rate.slope - 1.0) <= delta * fit.fit_rate.leverage
    # Against log d: the slope of log r (known exactly: a weighted mean of its local slopes) ...
    lo, hi = fit.local_slopes.min(), fit.local_slopes.max()
    assert lo - 1e-12 <= fit.fit_d_rate.slope <= hi + 1e-12
    assert abs(fit.fit_d.slope - fit.fit_d_rate.slope) <= delta * fit.fit_d.leverage
    # ... so the fitted exponent is the predicted one up to the known next-order offset.
    offset = max(abs(lo - fit.sequence.exponent), abs(hi - fit.sequence.exponent))
    assert abs(fit.fit_d.slope - fit.sequence.exponent) <= offset + delta * fit.fit_d.leverage


def test_rate_tolerances_are_informative():
    """The derived tolerances separate the sequences: -1/2 and -1/4 differ by far more."""
    fits = {name: corollary2_rate(name, D_FIT, G_HALF) for name in SEQUENCES}
    for fit in fits.values():
        assert fit.delta_max * fit.fit_d.leverage < 0.01
    assert fits["L = sqrt d"].fit_d.slope - fits["L fixed"].fit_d.slope > 0.2


D_COUNTER = np.logspace(1, 8, 15)


def test_counter_sequence_lambda_fixed():
    """lambda fixed, L fixed: E >= (L-1) zeta(0, lambda) > 0 at every d, and E tends to it with
    |E - limit| <= gamma^2 (gate bound), the bound of theory.corollary2."""
    L, lam = 10, 0.3
    limit = (L - 1) * (2 / math.pi) * math.asin(2 * lam**2 / (1 + 2 * lam**2))
    assert limit == pytest.approx(float((L - 1) * zeta(0.0, lam)), rel=1e-14)
    for gamma in (G_HALF, 1.5):
        E = oracle_excess(D_COUNTER, L, gamma, lam)
        assert np.all(E >= limit * (1 - 1e-13))
        s = np.sqrt(D_COUNTER / 2)
        gate = gamma**2 * (4 * norm.cdf(-s / (2 * gamma)) + erfc(lam * s / 2) ** 2)
        assert np.all(np.abs(E - limit) <= gate + 1e-13 * limit)
        assert E[-1] - limit < 1e-12


def test_counter_sequence_lambda_sqrt_d_fixed():
    """lambda = c / sqrt(d): E >= gamma^2 erfc(c / sqrt 2)^2 > 0 at every d (Jensen)."""
    L, c = 10, 2.0
    for gamma in (G_HALF, 1.5):
        bound = gamma**2 * erfc(c / math.sqrt(2)) ** 2
        E = oracle_excess(D_COUNTER, L, gamma, c / np.sqrt(D_COUNTER))
        assert np.all(E >= bound * (1 - 1e-12)) and bound > 1e-3


@pytest.mark.parametrize("c", [0.1, 1.0])
def test_counter_sequence_L_proportional_to_d(c):
    """L = c d: no lambda drives E to 0. The lower bound min_lambda [...] <= min_lambda E holds at
    each d, increases to proportional_limit(c) > 0; the prescribed lambda converges to
    gamma^2 erfc(c^(-1/4)/sqrt 2)^2 + (4/pi) sqrt(c) (corrections O(1/d): within 1e-6 at d = 1e8)."""
    gamma = G_HALF
    limit = proportional_limit(c, gamma)
    lower = []
    for d in (1e2, 1e3, 1e4, 1e6, 1e8):
        L = round(c * d)
        lb = oracle_excess_lower_bound(d, L, gamma)
        best = oracle_best_lambda(Task(d=int(d), L=L, gamma=gamma)).risk
        assert lb <= best * (1 + 1e-12)
        lower.append(lb)
    assert np.all(np.diff(lower) > 0) and lower[0] > 0
    assert abs(lower[-1] - limit) <= 1e-6 * limit
    prescribed_limit = gamma**2 * erfc(c**-0.25 / math.sqrt(2)) ** 2 + (4 / math.pi) * math.sqrt(c)
    d = np.array([1e4, 1e6, 1e8])
    L = np.round(c * d)
    gaps = np.abs(oracle_excess(d, L, gamma, (L * d) ** -0.25) - prescribed_limit)
    assert np.all(np.diff(gaps) < 0) and gaps[-1] <= 1e-6 * prescribed_limit


def test_deviation_bound_holds_pointwise():
    """|log(E / ((4/pi) r))| <= delta(d) on a wide grid of (d, L, gamma) with small lambda."""
    d = np.logspace(2, 9, 30)[:, None]
    for gamma in (0.5, G_HALF, 1.0, 2.0):
        for L in (2, 10, 1000):
            lam = (L * d) ** -0.25
            E = oracle_excess(d, L, gamma, lam)
            dev = np.abs(np.log(E / ((4 / math.pi) * (L - 1) * lam**2)))
            assert np.all(dev <= log_deviation_bound(d, L, gamma, lam) + float_log_error(E, gamma))


ORDER_POINTS = [(2, 10, G_HALF), (10, 10, G_HALF), (40, 5, 1.0), (400, 10, G_HALF), (30, 3, 1.5)]


def test_risk_ordering(rng):
    """eps^2 <= Bayes <= oracle (best lambda) <= null and Bayes <= linear <= null, with the Bayes
    risk by quadrature and Monte Carlo and the oracle by closed form and Monte Carlo."""
    eps = 0.2
    z = z_crit(3 * len(ORDER_POINTS))
    rng = sfc64(rng)   # compiled draws (tests/rng_streams.py)
    for d, L, gamma in ORDER_POINTS:
        p = Task(d=d, L=L, gamma=gamma, eps=eps)
        bayes = bayes_risk_quad(p)
        opt = oracle_best_lambda(p)
        lin, null = float(linear_risk(p)), float(null_risk(p))
        assert eps**2 <= bayes.value < opt.risk < null and bayes.value < lin < null
        oracle_mc = population_risk_mc(p.with_lam(opt.lam), Overlaps.oracle(), 40_000, rng)
        assert abs(oracle_mc.mean - opt.risk) <= z * oracle_mc.stderr
        assert bayes.value <= oracle_mc.mean + z * oracle_mc.stderr
        bayes_mc = bayes_risk_mc(p, 20_000, rng)
        assert bayes_mc.mean - z * bayes_mc.stderr <= opt.risk


def test_risk_vs_d_quick_is_consistent_and_reproducible():
    a = risk_vs_d(Task(d=2), np.random.default_rng(7), d_max=10**5)
    b = risk_vs_d(Task(d=2), np.random.default_rng(7), d_max=10**5)
    for field in dataclasses.fields(a):
        assert np.array_equal(getattr(a, field.name), getattr(b, field.name), equal_nan=True)
    quad = ~np.isnan(a.bayes_quad)
    assert quad.sum() >= 3
    assert np.all(a.bayes_quad[quad] <= a.oracle_best[quad])
    assert np.all(a.oracle_best <= a.oracle_prescribed) and np.all(a.oracle_best < a.null)
    assert np.all(np.diff(a.oracle_best) < 0)
    z = z_crit(a.d_points.size)
    for d, mean, se in zip(a.d_points, a.oracle_mc_mean, a.oracle_mc_stderr):
        exact = oracle_best_lambda(Task(d=int(d), L=a.L, gamma=a.gamma, eps=a.eps)).risk
        assert abs(mean - exact) <= z * se
    with pytest.raises(ValueError, match="size"):
        risk_vs_d(Task(d=2), np.random.default_rng(0), size="huge")
