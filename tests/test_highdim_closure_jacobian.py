"""The block Jacobian that the moment closure hands to implicit solvers (``numerics.highdim.closure_jacobian``,
docs/math/highdim.md#fluctuations-of-the-fast-overlap)."""

import numpy as np
import pytest

from numerics.dynamics.ode import OdeOptions
import numerics.highdim.closure_jacobian as cj
import numerics.highdim.fluctuations as fluctuations
from numerics.highdim import moment_closure_flow
from theory import PAPER_GAMMA, PAPER_L, Problem

_IU = np.triu_indices(5)


def _covariance_rhs(J, alpha, discrete_time):
    """The upper triangle of J S + S J^T (+ alpha J S J^T) as a function of the upper triangle of S."""
    def f(u):
        S = np.zeros((5, 5))
        S[_IU] = u
        S = S + np.triu(S, 1).T
        out = J @ S + S @ J.T + (alpha * J @ S @ J.T if discrete_time else 0.0)
        return out[_IU]
    return f


@pytest.mark.parametrize("discrete_time", [True, False])
def test_covariance_block_is_the_covariance_equation_at_fixed_jacobian(discrete_time):
    rng = np.random.default_rng(5)
    J, alpha = rng.normal(size=(5, 5)) * [1, 1, 30, 1, 30], 0.02
    out = cj.closure_jacobian(J, alpha=alpha, discrete_time=discrete_time)
    f = _covariance_rhs(J, alpha, discrete_time)
    # f is linear: central differences with step 1 are exact up to rounding (entries of |J|^2 alpha |u| ~ 20,
    # a few ulps of the sums of ~25 products each)
    fd = np.stack([(f(e) - f(-e)) / 2.0 for e in np.eye(15)], axis=1)
    np.testing.assert_allclose(out[5:, 5:], fd, rtol=0, atol=1e-11 * np.max(np.abs(fd)))
    np.testing.assert_array_equal(out[:5, :5], J)
    assert not out[:5, 5:].any() and not out[5:, :5].any()


def test_stiff_solver_with_the_jacobian_keeps_the_solution_at_fewer_right_hand_sides(monkeypatch):
    # BDF on the closure at d = 10^3, c = 1 (fast rate ~600: stiff over flow time 1), with the block Jacobian and,
    # patched out, with scipy's finite differences: both solutions are within the solver's error control of the true one
    d = 1_000
    problem = Problem(d=d, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.1, lam=2.0 / np.sqrt(d / 2.0))
    ode = OdeOptions(method="BDF", rtol=1e-6, atol=1e-10)

    def run():
        return moment_closure_flow(problem, (0.2, 0.2, 0.0, 0.0, 0.0), c=1.0, batch_size=1, t_end=1.0, t_eval=[1.0],
                                   ode=ode)

    with_jacobian = run()
    monkeypatch.setattr(fluctuations, "IMPLICIT_METHODS", ())
    differenced = run()
    sd = [np.sqrt(np.diagonal(out.cov[:2, :2, -1])) for out in (with_jacobian, differenced)]
    # measured 1e-7 relative apart; 1e-4 is 100 times the rtol, the global error's usual bound
    np.testing.assert_allclose(sd[0], sd[1], rtol=1e-4)
    np.testing.assert_allclose(with_jacobian.mean[:, -1], differenced.mean[:, -1], rtol=1e-4, atol=1e-9)
    assert with_jacobian.nfev < differenced.nfev
