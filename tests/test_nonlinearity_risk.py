"""Risk and gradient of every member of the family by quadrature and Monte Carlo
(theory.nonlinearity, numerics.nonlinearity; docs/math/nonlinearities.md)."""

import dataclasses

import numpy as np
import pytest
from scipy.special import ndtri

from numerics.nonlinearity import population_risk_sigma_mc
from rng_streams import sfc64
from test_risk_routes import gradient_floor, random_point
from theory.risk_roundoff import population_risk_roundoff
from theory import OVERLAP_NAMES, Overlaps, Problem, population_risk, population_risk_grad
from theory.nonlinearity import (NONLINEARITY_NAMES, population_risk_sigma,
                                 population_risk_sigma_grad, population_risk_sigma_quad)

EPS = np.finfo(float).eps
ALPHA = 1e-3                     # family-wise false-failure rate of each Monte-Carlo test
Z_POWER = ndtri(0.99)            # power 0.99 ...
EFFECT_FAST, EFFECT_SLOW = 0.03, 0.01   # ... against this relative error in R


def _bonferroni_z(m):
    return ndtri(1 - ALPHA / (2 * m))


OFF_M = Overlaps(kappa=0.5, nu=0.3, theta=0.2, eta=0.1, rho=0.3)


# ---------------------------------------------------------------- erf member = closed form

def test_erf_member_is_the_closed_form_exactly(rng):
    problem = Problem(d=np.array([10, 1000, 10**5]), L=np.array([1, 10, 1000]), lam=np.array([0.1, 1.0, 10.0]))
    overlaps = Overlaps(kappa=np.array([0.1, 0.5, 1.0]), nu=np.array([0.2, 0.3, 1.0]))
    assert np.array_equal(population_risk_sigma(problem, overlaps, "erf"), population_risk(problem, overlaps))


def test_erf_quadrature_equals_closed_form_at_random_points(rng):
    """|closed - quad| <= quad.abserr + the closed form's roundoff floor (tests/test_risk_routes.py),
    over d in [2, 1e5], L in [1, 1000], lambda in [1e-3, 10], gamma in [1e-2, 10], on and off M."""
    worst = 0.0
    for i in range(60):
        problem, overlaps = random_point(rng, i)
        q = population_risk_sigma_quad(problem, overlaps, "erf")
        closed = float(population_risk(problem, overlaps))
        tol = q.abserr + float(population_risk_roundoff(problem, overlaps))
        assert abs(q.value - closed) <= tol, (problem, overlaps, q, closed)
        worst = max(worst, abs(q.value - closed) / tol)
    assert worst > 0


def test_erf_gradient_by_quadrature_equals_closed_form(rng):
    """Price's-theorem partials (quadrature) against theory.risk.population_risk_grad."""
    for i in range(30):
        problem, overlaps = random_point(rng, i)
        quad = population_risk_sigma_grad(problem, overlaps, "erf")
        closed = population_risk_grad(problem, overlaps)
        for name in OVERLAP_NAMES:
            tol = quad[name].abserr + float(gradient_floor(problem, name))
            assert abs(quad[name].value - float(closed[name])) <= tol, (name, problem, overlaps)


# ---------------------------------------------------------------- independent closed forms

def _linear_risk(problem, o):
    """T = lambda sum_l a_l b_l: Isserlis' theorem on Gaussian (a, b, y) with means."""
    s, g2, lam, L = np.sqrt(problem.d / 2), problem.gamma**2, problem.lam, problem.L
    mu_a, mu_b = s * o.kappa, s * o.theta
    c_ab, c_ay, c_by = g2 * o.rho, g2 * o.eta, g2 * o.nu
    e_yab = mu_a * c_by + mu_b * c_ay
    e_a2b2 = (mu_a**2 + g2) * (mu_b**2 + g2) + 2 * c_ab**2 + 4 * mu_a * mu_b * c_ab
    e_ab = mu_a * mu_b + c_ab
    return (problem.eps**2 + g2 - 2 * lam * e_yab + lam**2 * (
        e_a2b2 + 2 * (L - 1) * e_ab * o.rho + (L - 1) * (1 + 2 * o.rho**2) + (L - 1) * (L - 2) * o.rho**2))


def test_linear_member_equals_isserlis(rng):
    """Tolerance: abserr plus 64 ulps of the sum of the magnitudes of the Isserlis terms."""
    for i in range(30):
        problem, overlaps = random_point(rng, i, L_range=(1, 100), lam_range=(1e-3, 3.0))
        q = population_risk_sigma_quad(problem, overlaps, "linear")
        exact = _linear_risk(problem, overlaps)
        s, L = np.sqrt(problem.d / 2), problem.L
        mag = problem.gamma**2 + problem.lam**2 * L**2 * (s**2 + problem.gamma**2 + 1) ** 2
        assert abs(q.value - exact) <= q.abserr + 64 * EPS * mag, (problem, overlaps)


@pytest.mark.parametrize("d, lam", [(10, 0.3), (10**4, 5.0)])
def test_softmax_single_token_is_the_value_itself(d, lam):
    """L = 1: w_1 = 1, T = b, R = eps^2 + gamma^2 (2 - 2 nu) + s^2 theta^2 for every lambda."""
    problem = Problem(d=d, L=1, gamma=0.8, eps=0.2, lam=lam)
    q = population_risk_sigma_quad(problem, OFF_M, "softmax")
    exact = 0.04 + 0.64 * (2 - 2 * OFF_M.nu) + d / 2 * OFF_M.theta**2
    assert abs(q.value - exact) <= q.abserr + 8 * EPS * exact


def test_array_fields_are_rejected():
    with pytest.raises(ValueError, match="lam"):
        population_risk_sigma_quad(Problem(d=10, lam=np.array([0.1, 0.2])), OFF_M, "softmax")
    with pytest.raises(ValueError, match="members are"):
        population_risk_sigma_quad(Problem(d=10, lam=0.1), OFF_M, "gelu")


# ---------------------------------------------------------------- quadrature = Monte Carlo

def _mc_check(problem, overlaps, name, rng, z_crit, effect, n_max):
    """z-test of MC against quadrature, with n set from a pilot so that a relative error
    ``effect`` in R would be detected with probability 0.99; the power is asserted with the
    final stderr (the quadrature error is negligible: asserted below 1e-3 stderr)."""
    q = population_risk_sigma_quad(problem, overlaps, name)
    pilot = population_risk_sigma_mc(problem, overlaps, name, n=20_000, rng=rng)
    rel_sd = pilot.stderr * np.sqrt(pilot.n) / q.value
    n = int(np.clip(1.3 * (rel_sd * (z_crit + Z_POWER) / effect) ** 2, 5e4, n_max))
    est = population_risk_sigma_mc(problem, overlaps, name, n=n, rng=rng)
    assert q.abserr <= 1e-3 * est.stderr
    assert abs(est.z(q.value)) <= z_crit, (name, problem, overlaps, est, q)
    assert effect * q.value / est.stderr >= z_crit + Z_POWER, (name, problem, overlaps, est)


FAST_POINTS = [(Problem(d=10, L=2, gamma=0.7, eps=0.1, lam=0.8), Overlaps(kappa=0.6, nu=0.5)),
               (Problem(d=1000, L=10, gamma=0.7, eps=0.1, lam=0.3), OFF_M)]


def test_quadrature_equals_monte_carlo_every_member(rng):
    """Every member on and off M; Bonferroni over the whole family of tests. Draws from ``sfc64(rng)``."""
    rng = sfc64(rng)
    cases = [(p, o, name) for name in NONLINEARITY_NAMES for p, o in FAST_POINTS]
    cases.append((Problem(d=100, L=100, gamma=0.7, eps=0.1, lam=1.0), OFF_M, "softmax"))
    z_crit = _bonferroni_z(len(cases))
    for problem, overlaps, name in cases:
        _mc_check(problem, overlaps, name, rng, z_crit, EFFECT_FAST, 400_000)


@pytest.mark.slow
def test_quadrature_equals_monte_carlo_wide_ranges(rng):
    """Random points (d in [2, 1e4], lambda in [0.05, 3], gamma in [0.1, 3]) for every member,
    on and off M, and softmax at L = 2, 10 and 100; effect 1%."""
    cases = []
    for name in NONLINEARITY_NAMES:
        for i in range(4):
            problem, overlaps = random_point(rng, i, d_range=(2, 1e4), L_range=(1, 20),
                                              lam_range=(0.05, 3.0), gamma_range=(0.1, 3.0))
            cases.append((problem, overlaps, name))
    for L in (2, 10, 100):
        for i in range(2):
            problem, overlaps = random_point(rng, i, d_range=(2, 1e4), L_range=(L, L),
                                              lam_range=(0.05, 5.0), gamma_range=(0.1, 3.0))
            cases.append((problem, overlaps, "softmax"))
    z_crit = _bonferroni_z(len(cases))
    for problem, overlaps, name in cases:
        _mc_check(problem, overlaps, name, rng, z_crit, EFFECT_SLOW, 4_000_000)


# ---------------------------------------------------------------- gradient = finite differences

def _fd_check(problem, overlaps, name):
    """Quadrature partials against central differences of the quadrature risk at h and h/2.
    Tolerance: the partial's abserr + the risk's abserr / (h/2) (roundoff of the difference) +
    |D_h - D_{h/2}| (3 times Richardson's estimate h^2 R''' / 8 of the truncation of D_{h/2})."""
    grad = population_risk_sigma_grad(problem, overlaps, name)
    h = 1e-3
    for x in OVERLAP_NAMES:
        R = lambda t: population_risk_sigma_quad(
            problem, dataclasses.replace(overlaps, **{x: getattr(overlaps, x) + t}), name)
        r = {t: R(t) for t in (h, -h, h / 2, -h / 2)}
        d_h = (r[h].value - r[-h].value) / (2 * h)
        d_h2 = (r[h / 2].value - r[-h / 2].value) / h
        err = max(q.abserr for q in r.values())
        tol = grad[x].abserr + 2 * err / h + abs(d_h - d_h2)
        assert abs(grad[x].value - d_h2) <= tol, (name, x, grad[x], d_h2, tol)
        assert tol <= 1e-3 * (1 + abs(d_h2))   # the check has teeth


INTERIOR = Overlaps(kappa=0.4, nu=0.3, theta=0.2, eta=-0.1, rho=0.25)


@pytest.mark.parametrize("name", NONLINEARITY_NAMES)
def test_gradient_equals_finite_differences(name):
    _fd_check(Problem(d=50, L=4, gamma=0.7, eps=0.1, lam=0.9), INTERIOR, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", NONLINEARITY_NAMES)
def test_gradient_equals_finite_differences_wide(name):
    for d, L, gamma, lam in [(4, 1, 0.3, 0.05), (400, 10, 1.5, 2.5), (10**4, 100, 0.7, 0.2)]:
        _fd_check(Problem(d=d, L=L, gamma=gamma, lam=lam), INTERIOR, name)


@pytest.mark.parametrize("name", NONLINEARITY_NAMES)
def test_value_without_error_is_the_estimated_one(name):
    """population_risk_sigma (the finest rule alone) and population_risk_sigma_quad with its error
    estimate: the same value to the bit, abserr nan without the estimate."""
    problem = Problem(d=40, L=10, gamma=0.7, eps=0.1, lam=0.8)
    full = population_risk_sigma_quad(problem, OFF_M, name)
    fast = population_risk_sigma_quad(problem, OFF_M, name, with_error=False)
    assert fast.value == full.value and np.isnan(fast.abserr) and full.abserr > 0
    if name != "erf":   # erf's population_risk_sigma is the closed form
        assert population_risk_sigma(problem, OFF_M, name) == full.value


def test_softmax_transforms_do_not_depend_on_the_block(monkeypatch):
    """The Laplace route computes each tau node's row on its own, so its block length (softmax_quad._CHUNK)
    leaves every value and error estimate unchanged, bit for bit (off M; at the oracle with a wide tau rule,
    and its search rule)."""
    import theory.nonlinearity.softmax_quad as sq
    from theory.nonlinearity.oracle import oracle_excess_sigma

    at = lambda lam: Problem(d=40, L=10, gamma=0.7, eps=0.1, lam=lam)

    def values():
        big = oracle_excess_sigma(at(60.0), "softmax")
        return [sq.risk_softmax(at(3.0), OFF_M), big.value, big.abserr,
                oracle_excess_sigma(at(60.0), "softmax", with_error=False).value]

    default = values()
    for chunk in (17, 10**6):
        monkeypatch.setattr(sq, "_CHUNK", chunk)
        assert values() == default, chunk
