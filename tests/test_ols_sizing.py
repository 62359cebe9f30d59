"""The OLS estimation excess and the sample sizes of the claim ``proposition3-ols``
(docs/math/baselines.md#ols-sample-sizes): the excess of fitted coefficients has the mean
tr(A) / n_train and the spread sqrt(2 tr(A^2)) / n_train that ``numerics.ols_risk_mc`` reports,
and ``ols_sizes`` meets the claim's power target from a pilot, with no more samples than it needs."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from figures.verify.claims.proposition3_ols import ols_sizes
from numerics.montecarlo.geometry import random_orthonormal
from numerics.montecarlo.ols import OLSResult, ols_risk_mc
from numerics.montecarlo.population_risk import Estimate
from theory.baselines import linear_predictor_risk, linear_risk
from theory.parameters import Task

ALPHA = 1e-3
# The derivation's constants (docs/math/baselines.md#ols-sample-sizes), written out: the share of the
# variance budget given to the excess's spread, and the floor n_train >= 50 L d.
EXCESS_SHARE, MIN_RATIO = 0.1, 50


def test_excess_of_fitted_coefficients_has_the_reported_mean_and_spread(rng):
    # 400 independent fits at p = L d = 6, n_train = 600: the exact excess of each fit (closed-form
    # risk of its coefficients minus Prop 3's) against the reported expectation and spread.
    problem = Task(d=3, L=2, gamma=math.sqrt(0.5), eps=0.3)
    k_star, v_star = random_orthonormal(3, 2, rng)
    p, n_train, reps = 6, 600, 400
    fits = [ols_risk_mc(problem, k_star, v_star, n_train=n_train, n_test=4000, rng=child)
            for child in rng.spawn(reps)]
    excess = np.array([linear_predictor_risk(problem, f.coef, k_star, v_star) for f in fits]) - float(linear_risk(problem))
    mean_c = float(np.mean([f.excess_correction for f in fits]))
    mean_sd = float(np.mean([f.excess_sd for f in fits]))
    z = norm.isf(ALPHA / 4)   # two comparisons, two-sided
    # Neglected terms of the first-order (sandwich) formulas: relative order (p + 1) / (n - p - 1)
    # (the inverse-Wishart mean n / (n - p - 1) of the Gram matrix's inverse), allowed twice.
    first_order = 2 * (p + 1) / (n_train - p - 1)
    se_mean = float(np.std(excess, ddof=1)) / math.sqrt(reps)
    assert abs(np.mean(excess) - mean_c) <= z * se_mean + first_order * mean_c
    # Standard error of a sample sd: sd sqrt((kurtosis - 1) / (4 n)), kurtosis from the sample.
    sd = float(np.std(excess, ddof=1))
    kurtosis = float(np.mean((excess - excess.mean()) ** 4) / np.var(excess) ** 2)
    se_sd = sd * math.sqrt((kurtosis - 1) / (4 * reps))
    assert abs(sd - mean_sd) <= z * se_sd + first_order * mean_sd
    # The corrected estimate's stderr carries the spread (training and test samples independent).
    f = fits[0]
    assert f.corrected.stderr == pytest.approx(math.hypot(f.test_risk.stderr, f.excess_sd), rel=1e-15)


def _pilot(loss_sd, spread, n=2000):
    return OLSResult(coef=np.zeros((2, 3)), test_risk=Estimate(mean=1.0, stderr=loss_sd / math.sqrt(n), n=n),
                     excess_correction=0.0, n_train=n, excess_sd=spread / n)


@pytest.mark.parametrize("loss_sd, spread", [(1.5, 3.0), (0.8, 30.0), (2.0, 0.1)])
def test_sizes_meet_the_power_target_and_no_more(loss_sd, spread):
    exact, p, z, detect = 0.7, 40, 5.05, 0.02
    n_train, n_test = ols_sizes(_pilot(loss_sd, spread), exact, p, z=z, detect=detect)
    safe = 1.0 + 3.0 / math.sqrt(2.0 * 1999)        # the pilot's sds raised by 3 standard errors
    budget = (detect * exact / z) ** 2
    test_part, excess_part = (loss_sd * safe) ** 2, (spread * safe) ** 2
    assert test_part / n_test + excess_part / n_train**2 <= budget * (1 + 1e-12)
    # Not more: one sample fewer breaks the share of the budget each size was computed for.
    assert test_part / (n_test - 1) > (1 - EXCESS_SHARE) * budget
    if n_train > MIN_RATIO * p:
        assert excess_part / (n_train - 1) ** 2 > EXCESS_SHARE * budget
    else:
        assert n_train == MIN_RATIO * p
