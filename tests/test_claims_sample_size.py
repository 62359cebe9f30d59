"""Monte-Carlo claims sized from their power target (figures/verify/checks.py::sized_estimate):
the size reaches the target and not much more, and the sized claim still fails on a biased route."""

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import norm

import numerics.montecarlo.population_risk as mc
from figures.verify import discover_claims
from figures.verify import checks
from numerics.montecarlo.population_risk import Estimate

CLAIMS = {c.claim_id: c for c in discover_claims()}


def _normal_run(mean, sd):
    def run(n, rng):
        x = rng.normal(mean, sd, n)
        return Estimate(mean=float(x.mean()), stderr=float(x.std(ddof=1) / math.sqrt(n)), n=n)
    return run


@pytest.mark.parametrize("sd", [0.5, 2.0, 8.0])
def test_size_meets_the_power_target_and_not_much_more(sd):
    """Normal samples: the needed n is known, ((z_crit + z_power) sd / (detect exact))^2; the sized
    estimate reaches the target and stays within 1.5x of that n (the 3-s.e. margin on sd is
    ~5% at n = 2000, squared ~10%; rounds add at most a pilot's worth)."""
    kw = dict(alpha=1e-3, m=4, power=0.9, detect=0.05)
    est = checks.sized_estimate(_normal_run(10.0, sd), 10.0, np.random.default_rng(1), **kw)
    z = norm.isf(1e-3 / 8) + norm.ppf(0.9)
    needed = (z * sd / (0.05 * 10.0)) ** 2
    assert z * est.stderr <= 0.05 * 10.0
    assert est.n <= max(1.5 * needed, checks.PILOT_N)


def test_merged_estimate_equals_the_pooled_one():
    x = np.random.default_rng(2).normal(size=3000)
    a, b, both = (Estimate(mean=float(y.mean()), stderr=float(y.std(ddof=1) / math.sqrt(y.size)), n=y.size)
                  for y in (x[:1000], x[1000:], x))
    merged = checks.merged_estimate(a, b)
    assert merged.n == both.n
    assert math.isclose(merged.mean, both.mean, rel_tol=1e-12)
    assert math.isclose(merged.stderr, both.stderr, rel_tol=1e-12)


def test_sized_claims_detect_a_biased_route(monkeypatch):
    """A Monte-Carlo route biased by +10% (twice the quick mode's 5% target) fails the claim."""
    original = mc.population_risk_mc
    monkeypatch.setattr(mc, "population_risk_mc",
                        lambda *a, **k: dataclasses.replace(original(*a, **k), mean=original(*a, **k).mean * 1.1))
    assert CLAIMS["theorem1-montecarlo"](quick=True).status == "fail"
