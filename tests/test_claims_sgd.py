"""The online-SGD claims of the verification report (figures/verify/claims/sgd.py): each passes in
quick mode, and each fails on a corrupted simulator, executor or flow."""

import dataclasses
import math

import numpy as np
import pytest

import numerics.executors as executors
import numerics.sgd.flow_gap as sgd_flow_gap_module
import numerics.sgd.reduced as sgd_reduced
from figures.verify import discover_claims

IDS = ("sgd-reduced-equals-full-in-law", "sgd-determinism-across-executors", "sgd-to-flow-order-1")


def _claim(claim_id):
    (c,) = [c for c in discover_claims() if c.claim_id == claim_id]
    return c


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_passes_in_quick_mode(claim_id, quick_claim):
    result = quick_claim(claim_id)
    assert result.status == "pass", (result.measured_text, result.details.get("traceback"))
    assert 0 <= result.measured <= result.tolerance and math.isfinite(result.tolerance)
    assert result.method and result.derivation and result.measured_text


def test_law_claim_fails_when_the_orthogonal_noise_is_dropped(monkeypatch):
    # The naive reduction: tokens projected on span{k, v, k*, v*}, the component orthogonal to it
    # (the Bartlett pair) left out. The claim fails when any of its cases rejects (min p over the
    # cases); here its cheapest case alone (a fifth of the claim's cost): the scheduled one, whose
    # KS statistic at 600 runs per simulator is D ~ 0.67 (p ~ 1e-117 at seed 0) against the
    # critical D = sqrt(ln(2 / level) / 600) = 0.13 at level 1e-3 / 15, while D's sampling sd is
    # <= sqrt(2 * 0.25 / 600) = 0.03: a miss would need a deviation of ~18 sd.
    import figures.verify.claims.sgd as sgd_claims

    monkeypatch.setattr(sgd_claims, "_LAW_CASES", tuple(c for c in sgd_claims._LAW_CASES if c[3] > 0))
    assert len(sgd_claims._LAW_CASES) == 1
    draw = sgd_reduced._draw_noise

    def without_orthogonal_part(*args):
        noise, a11, n21, a22 = draw(*args)
        return noise, 0 * a11, 0 * n21, 0 * a22

    monkeypatch.setattr(sgd_reduced, "_draw_noise", without_orthogonal_part)
    result = _claim("sgd-reduced-equals-full-in-law")(quick=True)
    assert result.status == "fail" and result.measured > result.tolerance


def test_min_ks_pvalue_is_the_minimum_of_every_test():
    """The law claim's min p (one exact p-value, at the largest D) equals the minimum of ks_2samp over every
    step and overlap: samples with ties (rounded values) and without, equal and unequal sizes, a shifted one."""
    import types

    from scipy.stats import ks_2samp

    import figures.verify.claims.sgd as sgd_claims
    from theory import OVERLAP_NAMES

    rng = np.random.default_rng(11)
    for n_a, n_b, digits in ((300, 300, None), (300, 300, 1), (250, 400, 2)):
        draw = lambda n: rng.standard_normal((4, n)) if digits is None else np.round(rng.standard_normal((4, n)), digits)
        a = types.SimpleNamespace(**{name: draw(n_a) for name in OVERLAP_NAMES})
        b = types.SimpleNamespace(**{name: draw(n_b) + (0.2 if name == "rho" else 0.0) for name in OVERLAP_NAMES})
        steps = (1, 3)
        expected = min(float(ks_2samp(getattr(a, name)[s], getattr(b, name)[s]).pvalue)
                       for s in steps for name in OVERLAP_NAMES)
        assert sgd_claims._min_ks_pvalue(a, b, steps) == expected
    a.kappa[1, 0] = np.nan
    with pytest.raises(ArithmeticError):
        sgd_claims._min_ks_pvalue(a, b, steps)


def test_determinism_claim_fails_when_the_serial_path_loses_the_run_order(monkeypatch):
    class Reordering(executors._Serial):
        def submit(self, fn, seeds):
            return super().submit(fn, list(reversed(seeds)))

    monkeypatch.setattr(executors, "_Serial", Reordering)
    result = _claim("sgd-determinism-across-executors")(quick=True)
    assert result.status == "fail" and result.measured > 0.01


def test_flow_claim_fails_when_the_flow_reference_is_off(monkeypatch):
    # A reference off by 0.05 in kappa: the gap no longer vanishes with alpha.
    flow = sgd_flow_gap_module.overlap_flow

    def shifted(*args, **kwargs):
        traj = flow(*args, **kwargs)
        return dataclasses.replace(traj, y=traj.y + np.array([0.05, 0, 0, 0, 0])[:, None])

    monkeypatch.setattr(sgd_flow_gap_module, "overlap_flow", shifted)
    result = _claim("sgd-to-flow-order-1")(quick=True)
    assert result.status == "fail", result.measured_text
