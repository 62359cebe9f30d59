"""PGD and gradient flow in overlap coordinates for every member (numerics.nonlinearity.dynamics)."""

import numpy as np
import pytest

from numerics import OdeOptions, overlap_flow, overlap_pgd
from numerics.nonlinearity import overlap_flow_sigma, overlap_pgd_sigma
from theory import OVERLAP_NAMES, Overlaps, Problem

START = Overlaps(kappa=0.1, nu=0.2, theta=0.05, eta=-0.1, rho=0.1)
PROBLEM = Problem(d=400, L=10, lam=0.1)


def test_erf_member_pgd_is_the_toolkits_pgd():
    """Same map, partials from two implementations (closed form vs numerics.dynamics.risk_partials) that
    agree to ~1e-16 relative; over 200 steps with alpha |Hessian| < 1e-2 the difference stays
    within 200 x 64 ulps."""
    a = overlap_pgd_sigma(PROBLEM, START, "erf", alpha=4e-3, n_steps=200, log_every=50)
    b = overlap_pgd(PROBLEM, START, alpha=4e-3, n_steps=200, log_every=50)
    assert np.array_equal(a.steps, b.steps)
    for name in (*OVERLAP_NAMES, "excess_risk"):
        x, y = getattr(a, name), getattr(b, name)
        assert np.all(np.abs(x - y) <= 200 * 64 * np.finfo(float).eps * (1 + np.abs(y))), name
    assert a.kappa[-1, 0] > 0.16   # it moved


@pytest.mark.parametrize("sigma", ["softmax", "relu", "sigmoid"])
def test_pgd_decreases_the_risk(sigma):
    """Small steps of projected GD decrease R (descent lemma on the sphere product)."""
    log = overlap_pgd_sigma(PROBLEM, START, sigma, alpha=1e-3, n_steps=4, log_every=1)
    risk = log.excess_risk[:, 0]
    assert np.all(np.diff(risk) < 0), risk


@pytest.mark.parametrize("sigma", ["tanh", "linear"])
def test_odd_members_stay_on_M(sigma):
    """M is invariant for odd sigma (docs/math/nonlinearities.md#invariance-of-m): the partials
    R_theta, R_eta, R_rho vanish on M (here: quadrature values at roundoff level), so the PGD map
    keeps theta = eta = rho = 0 up to roundoff."""
    log = overlap_pgd_sigma(PROBLEM, Overlaps(kappa=0.2, nu=0.3), sigma, alpha=4e-3, n_steps=3)
    assert np.all(log.distance_to_manifold <= 1e-15)


def test_erf_member_flow_is_the_toolkits_flow():
    """Same ODE (closed-form partials either way): equal to the integrator's tolerance."""
    a = overlap_flow_sigma(PROBLEM, START, "erf", t_end=2.0, ode=OdeOptions(rtol=1e-10, atol=1e-12))
    b = overlap_flow(PROBLEM, START, t_end=2.0)
    assert np.allclose([a.final[x] for x in OVERLAP_NAMES], [b.final[x] for x in OVERLAP_NAMES],
                       rtol=0, atol=1e-8)
