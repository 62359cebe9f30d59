"""The end of the aligned branch at c of order sqrt(d) (docs/math/highdim.md#the-end-of-the-branch-at-c-of-order-sqrt-d):
the closed form ``theory.highdim.branch_end_constant`` against its sympy derivation and against the finite-d pitchfork
at the saddle (``numerics.highdim.saddle_pitchfork_step``), and ``critical_step`` at large d."""

import math

import numpy as np
import pytest

from numerics.highdim import extrapolated_branch_end, saddle_jacobian_on_m, saddle_pitchfork_step
from theory import PAPER_GAMMA, Problem
from theory.highdim import branch_end_constant


def _problem(d, lam_bar=1.0, L=10, eps=0.1):
    return Problem(d=int(d), L=L, gamma=PAPER_GAMMA, eps=eps, lam=lam_bar / math.sqrt(d / 2.0))


def test_closed_form_is_the_extrapolated_finite_d_pitchfork():
    """At B = 5 (lambda = 1/s, L = 10, eps = 0.1; the claim highdim-branch-end takes B = 1 and a second setting) the
    finite-d pitchfork c_pf / (B sqrt(d)) at d = 1e6, 1e7, 1e8 extrapolates to the closed form within the
    extrapolation's error estimate, and approaches it like d^-1/2: the fitted exponent between 1e7 and 1e8 is
    1/2 within 0.05 (the b/d term's share of the difference there is b / (a sqrt(d)) ~ 0.02: docs)."""
    closed = branch_end_constant(lam_bar=1.0, L=10, eps=0.1).constant
    ext = extrapolated_branch_end(lam_bar=1.0, batch_size=5, L=10, eps=0.1)
    assert abs(ext.limit - closed) <= ext.error, (ext, closed)
    assert abs(ext.rate - 0.5) <= 0.05, ext.rate
    assert np.all(np.diff(ext.values) > 0) and ext.values[-1] < closed


def test_saddle_jacobian_has_the_derived_leading_orders():
    """At d = 1e6, c = 0.4 sqrt(d), B = 1: J_kappa nu = J_nu kappa = b = 4 lambda_bar gamma^2 / sqrt(pi), J_kappa kappa =
    -(8 lambda_bar^2 / pi)(V + gamma^2) (the averaged curvature of the risk's a^2 p_0^2 q_0^2 term; V = O(s) leads),
    J_nu nu = (c / d)(8 lambda_bar^2 / pi) R (gamma^2 w^4 - Lambda_0), each to its O(1/s) relative correction
    (s = 707: within 3 / s; measured 1.4 / s at most)."""
    d, C = 1e6, 0.4
    s, c = math.sqrt(d / 2), C * math.sqrt(d)
    J = saddle_jacobian_on_m(_problem(d), c=c, batch_size=1)
    g2, R, L = 0.5, 0.51, 10
    m, b = 8 * g2 / math.pi, 4 * g2 / math.sqrt(math.pi)
    values, vectors = np.linalg.eigh(np.array([[-m, b], [b, 0.0]]))   # the (theta, eta) block: its fast mode
    mu, w4 = values[0], vectors[0, 0] ** 4
    V = c * w4 * (4 / math.pi) * g2 * R / abs(mu)
    expected = np.array([[-(8 / math.pi) * (V + g2), b],
                         [b, c / d * (8 / math.pi) * R * (g2 * w4 - (g2 + 2 * g2 * g2 + 2 * (L - 1)))]])
    assert np.allclose(J, expected, rtol=3 / s, atol=0), (J, expected)


@pytest.mark.parametrize("kwargs, name", [
    (dict(lam_bar=0.0), "lam_bar"), (dict(lam_bar=1.0, L=0), "L"), (dict(lam_bar=1.0, gamma=-1.0), "gamma"),
    (dict(lam_bar=1.0, eps=-0.1), "eps"), (dict(lam_bar=float("nan")), "lam_bar")])
def test_branch_end_constant_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        branch_end_constant(**kwargs)


@pytest.mark.parametrize("kwargs, name", [
    (dict(batch_size=0), "batch_size"), (dict(batch_size=1, bracket=(1.0, 0.5)), "bracket"),
    (dict(batch_size=1, bracket=(-1.0, 0.5)), "bracket"), (dict(batch_size=1, rtol=0.0), "rtol"),
    (dict(batch_size=1, step=0.0), "step")])
def test_saddle_pitchfork_step_rejects_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        saddle_pitchfork_step(_problem(1e4), **kwargs)


def test_saddle_pitchfork_step_raises_without_a_sign_change():
    with pytest.raises(RuntimeError, match="does not change sign"):
        saddle_pitchfork_step(_problem(1e4), batch_size=1, bracket=(0.01, 0.02))


@pytest.mark.slow
def test_hand_written_branch_end_is_the_symbolic_derivation():
    """``theory.symbolic.branch_end_symbolic`` (the derivation redone by sympy from the linear-gate model, 17 s CPU)
    equals the hand-written closed form to round-off at four settings."""
    from theory.symbolic.highdim_branch_end import branch_end_symbolic

    f = branch_end_symbolic()
    for lam_bar, L, gamma, eps in ((1.0, 10, PAPER_GAMMA, 0.1), (2.0, 3, PAPER_GAMMA, 0.3), (0.5, 10, PAPER_GAMMA, 0.0),
                                   (1.3, 4, 0.9, 0.2)):
        closed = branch_end_constant(lam_bar=lam_bar, L=L, gamma=gamma, eps=eps).constant
        assert float(f(lam_bar, L, gamma, eps)[0]) == pytest.approx(closed, rel=1e-13)


def test_critical_step_at_large_d_uses_a_converged_jacobian():
    """``aligned_fixed_point``'s stability Jacobian at d = 1e6, c = 0.45 sqrt(d) (lambda = 1/s, near the Hopf point that
    ends the branch) has the eigenvalues of a ten times finer difference step to 1e-4 (its truncation error ~h^2 d,
    measured 1.7e-4 at h = 1e-6, so ~2e-5 at the d-scaled step 3.2e-7); the unscaled step 1e-5 was 0.017 off."""
    from numerics.highdim import aligned_fixed_point, per_run_drift

    d = 10**6
    problem, s, c = _problem(d), math.sqrt(d / 2), 0.45 * math.sqrt(d)
    fp = aligned_fixed_point(problem, c=c, batch_size=1, start=(0.19 / s, 0.028))
    x = np.array([fp.kappa, fp.nu, 0.0, 0.0, 0.0])
    h = 1e-5 * math.sqrt(1e3 / d) / 10
    J = np.array([(per_run_drift(problem, x + e, c=c, batch_size=1) - per_run_drift(problem, x - e, c=c, batch_size=1))
                  / (2 * h) for e in h * np.eye(5)]).T
    fine = np.sort_complex(np.linalg.eigvals(J))
    coarse = np.sort_complex(fp.eigenvalues)
    slow = np.abs(fine) < 10     # the fast direction's eigenvalue (~ -435) carries a relative error only
    assert np.max(np.abs(coarse[slow] - fine[slow])) < 1e-4, (coarse, fine)
    assert np.max(np.abs(coarse[~slow] - fine[~slow]) / np.abs(fine[~slow])) < 1e-4
