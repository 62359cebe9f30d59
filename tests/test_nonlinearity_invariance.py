"""Invariance of M for every member: sympy proof and finite differences of the quadrature risk
(theory.nonlinearity.invariance; docs/math/nonlinearities.md#invariance-of-m)."""

import dataclasses

import numpy as np
import pytest

from theory import Overlaps, Problem
from theory.nonlinearity import NONLINEARITY_NAMES, population_risk_sigma_quad
from theory.nonlinearity.invariance import gaussian_density, m_invariance_proof


def test_symbolic_proof_holds():
    proof = m_invariance_proof()
    assert proof.holds, proof


def test_symbolic_check_detects_a_false_step():
    """Negative control: flipping b alone (not y) is not a symmetry when nu != 0."""
    import sympy as sp

    a, b, y, th, et, rh, nu = sp.symbols("a b y theta eta rho nu", real=True)

    def dens(t, e, r, bb):
        G = sp.Matrix([[1, r, e], [r, 1, nu], [e, nu, 1]])
        return gaussian_density(sp.Matrix([a, bb, y]), sp.Matrix([0, t, 0]), G)
    residual = dens(th, et, rh, b) - dens(-th, -et, -rh, -b)
    values = {a: 0.3, b: 0.7, y: -0.4, th: 0.1, et: 0.2, rh: 0.1, nu: 0.5}
    assert abs(float(residual.subs(values))) > 1e-3


def test_the_proofs_density_comparison_detects_a_false_step(monkeypatch):
    """The proof compares densities by (quadratic form, determinant): with b flipped alone in step 1
    (not a symmetry when nu != 0), the form's residual is not 0 and the proof fails."""
    import sympy as sp

    import theory.nonlinearity.invariance as inv

    good = inv.gaussian_form
    y = sp.Symbol("y", real=True)

    def y_not_flipped(x, mean, cov):   # step 1's second density evaluated at +y instead of -y
        if len(x) == 3 and x[2] == -y:
            x = sp.Matrix([x[0], x[1], y])
        return good(x, mean, cov)

    monkeypatch.setattr(inv, "gaussian_form", y_not_flipped)
    proof = inv.m_invariance_proof()
    assert proof.informative_density[0] != 0 and not proof.holds
    assert proof.noise_density == (0, 0)


@pytest.mark.parametrize("name", NONLINEARITY_NAMES)
def test_risk_is_even_in_the_off_manifold_overlaps(name):
    """R(theta, eta, rho) = R(-theta, -eta, -rho) within the two quadratures' error estimates,
    at a point off M where R does change with (theta, eta, rho) (checked against a single flip)."""
    problem = Problem(d=30, L=5, gamma=0.8, eps=0.1, lam=0.9)
    o = Overlaps(kappa=0.4, nu=0.5, theta=0.2, eta=-0.3, rho=0.25)
    flipped = dataclasses.replace(o, theta=-o.theta, eta=-o.eta, rho=-o.rho)
    one = dataclasses.replace(o, theta=-o.theta)
    r, rf, r1 = (population_risk_sigma_quad(problem, x, name) for x in (o, flipped, one))
    assert abs(r.value - rf.value) <= r.abserr + rf.abserr
    assert abs(r.value - r1.value) > 1e3 * (r.abserr + r1.abserr)
