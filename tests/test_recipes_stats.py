"""The risk_vs_d and oracle_stability recipes: their quick-run data (the session's one run of every
recipe, whose files tests/test_figures_recipes.py checks) is consistent with the theory it draws
(caching itself is tested in test_figures_cache.py)."""

import math

import numpy as np
import pytest

from figures.registry import discover_recipes

EPS64 = np.finfo(float).eps
RECIPES = {r.name: r for r in discover_recipes()}


pytestmark = pytest.mark.usefixtures("agg_backend")


@pytest.fixture
def quick_data(quick_figures):
    """(data, params) of a recipe's quick run, from the session's one run of every recipe."""
    return lambda name: (quick_figures.data(name), RECIPES[name].params(True))


def test_risk_vs_d_data_is_consistent(quick_data):
    from theory.corollary2 import fit_slope, log_deviation_bound

    data, p = quick_data("risk_vs_d")
    eps2 = p["eps"] ** 2
    d = data["d_curve"]
    assert d[0] == p["d_min"] and d[-1] == p["d_max"]
    quad = ~np.isnan(data["bayes_quad"])
    assert np.all(d[quad] <= p["d_quad_max"]) and quad.sum() >= 3
    # eps^2 <= Bayes <= oracle (best) <= oracle (prescribed); oracle (best) < null
    assert np.all(data["bayes_quad"][quad] >= eps2)
    assert np.all(data["bayes_quad"][quad] <= data["oracle_best"][quad])
    assert np.all(data["oracle_best"] <= data["oracle_prescribed"]) and np.all(data["oracle_best"] < data["null"])
    assert np.allclose(data["null"], eps2 + p["gamma"] ** 2, rtol=4 * EPS64)
    # stored leading term and slope are those of the stored curves
    lead = (4 / math.pi) * (p["L"] - 1) * data["lam_prescribed"] ** 2
    assert np.allclose(data["leading_prescribed"], lead, rtol=8 * EPS64)
    tail = d >= p["fit_d_min"]
    fit = fit_slope(np.log(d[tail]), np.log(data["oracle_prescribed"][tail] - eps2))
    assert float(data["slope_oracle_prescribed"]) == fit.slope
    # Corollary 2 rate (L fixed, local slope of log r exactly -1/2): |slope + 1/2| <= delta * leverage
    # (theory.corollary2), plus the float64 error of excess = R - eps^2 (16 ulps of R, relative to E).
    lam = data["lam_prescribed"][tail]
    excess = data["oracle_prescribed"][tail] - eps2
    delta = np.max(log_deviation_bound(d[tail], p["L"], p["gamma"], lam) + 16 * EPS64 * (eps2 + excess) / excess)
    assert abs(fit.slope + 0.5) <= delta * fit.leverage
    assert np.all(data["oracle_mc_stderr"] > 0)
    # the Bayes Monte Carlo is drawn where the figure shows it, d <= bayes_mc_d_max, and nowhere else
    shown = data["d_points"] <= p["bayes_mc_d_max"]
    assert shown.any() and not shown.all()
    assert np.all(data["bayes_mc_stderr"][shown] > 0) and np.all(np.isnan(data["bayes_mc_mean"][~shown]))


def test_oracle_stability_data_changes_sign_at_lambda_c(quick_data):
    data, p = quick_data("oracle_stability")
    lam = data["lam"]
    for mu, lam_c in zip(data["mu_block"], data["lam_c_curves"]):
        assert np.all(mu[lam < 0.99 * lam_c] > 0) or lam_c > lam[-1]
        assert np.all(mu[(lam > 1.01 * lam_c)] < 0)
    gap = data["lam_c_limit"] - math.sqrt(3) / 2
    assert np.all(gap > 0) and np.all(np.diff(gap) < 0)
    # d (lambda_c - sqrt(3)/2) -> c1: within 1% at the largest d of the quick grid (O(1/d) correction)
    assert abs(data["d_limit"][-1] * gap[-1] / float(data["c1"]) - 1) < 0.01
