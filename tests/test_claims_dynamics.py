"""Claims about the training dynamics (figures/verify/claims/definition1.py, theorem5.py,
dynamics_derived.py): each passes in quick mode, and each cheap one fails on a corrupted route."""

import numpy as np
import pytest

import numerics.dynamics.initial
import numerics.dynamics.phase_portrait
import numerics.dynamics.pgd_vectors
from figures.verify import discover_claims
from figures.verify.claims import definition1
from pgd_step_size import scale_pgd_step_size

IDS = ("definition1-overlap-vs-vector", "invariance-of-M", "theorem5-convergence", "theorem5-distance-to-M",
       "pgd-to-flow-order-1", "initial-overlap-law", "fixed-points-on-M-numerical")
CLAIMS = {c.claim_id: c for c in discover_claims()}


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_passes_in_quick_mode(claim_id, quick_claim):
    result = quick_claim(claim_id)
    assert result.status == "pass", (result.measured_text, result.details.get("traceback"))
    assert result.method and result.derivation and np.isfinite(result.tolerance)
    assert result.measured <= result.tolerance


def _fails(claim_id):
    result = CLAIMS[claim_id](quick=True, seed=0)
    assert result.status == "fail", (result.status, result.measured_text, result.details.get("traceback"))
    return result


def test_overlap_vs_vector_detects_a_wrong_step(monkeypatch):
    """A relative error of 1e-6 in the vector route's step size moves the iterates by ~1e-8 over
    1e3 steps, far above the roundoff tolerance 1e3 eps."""
    original = numerics.dynamics.pgd_vectors.vector_pgd

    def wrong_step(*args, alpha, **kwargs):
        return original(*args, alpha=np.asarray(alpha) * (1 + 1e-6), **kwargs)

    monkeypatch.setattr(numerics.dynamics.pgd_vectors, "vector_pgd", wrong_step)
    _fails("definition1-overlap-vs-vector")


def test_invariance_detects_points_off_m(monkeypatch):
    original = definition1._manifold_points

    def shifted(rng, n):
        points = original(rng, n)
        points["theta"] = np.full(n, 1e-12)
        return points

    monkeypatch.setattr(definition1, "_manifold_points", shifted)
    result = _fails("invariance-of-M")
    assert result.measured > 0


def test_theorem5_detects_ascent(monkeypatch):
    """Gradient ascent on M runs to the unstable corners (1, -1), (-1, 1): every sign mismatches."""
    scale_pgd_step_size(monkeypatch, -1.0)
    result = _fails("theorem5-convergence")
    assert result.measured >= 1


def test_pgd_to_flow_detects_a_time_rescaling(monkeypatch):
    """A step 1% too long makes PGD approximate the flow at time 1.01 T: the error no longer vanishes
    as alpha -> 0 (order ~0)."""
    scale_pgd_step_size(monkeypatch, 1.01)
    _fails("pgd-to-flow-order-1")


def test_initial_law_detects_a_wrong_dimension(monkeypatch):
    """Off-by-two in the chi-square degrees of freedom (the direct sampler in dimension d + 2)."""
    original = numerics.dynamics.initial.sample_initial_overlaps

    def shifted(d, n_runs, rng, on_manifold=False):
        return original(d + 2, n_runs, rng, on_manifold)

    monkeypatch.setattr(numerics.dynamics.initial, "sample_initial_overlaps", shifted)
    _fails("initial-overlap-law")


def test_fixed_point_types_detect_a_reversed_flow(monkeypatch):
    """The time-reversed flow has the same fixed points with stable and unstable exchanged."""
    original = numerics.dynamics.phase_portrait.manifold_flow_velocity

    def reversed_flow(*args, **kwargs):
        k_dot, n_dot = original(*args, **kwargs)
        return -k_dot, -n_dot

    monkeypatch.setattr(numerics.dynamics.phase_portrait, "manifold_flow_velocity", reversed_flow)
    result = _fails("fixed-points-on-M-numerical")
    assert result.measured >= 4  # the four corners of each problem


def test_claim_ids_are_registered_once():
    ids = [c.claim_id for c in discover_claims()]
    assert all(ids.count(i) == 1 for i in IDS)


def test_manifold_points_lie_on_m(rng):
    points = definition1._manifold_points(rng, 50)
    assert all(np.all(points[k] == 0) for k in ("theta", "eta", "rho"))
    assert np.all(np.abs(points["kappa"]) <= 1) and np.all(points["d"] >= 3)
