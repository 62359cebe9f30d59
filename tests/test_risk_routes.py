"""The population risk by its three routes: closed form, quadrature, Monte Carlo (docs/math/risk.md#quadrature-and-monte-carlo-routes)."""

import dataclasses
import math

import mpmath
import numpy as np
import pytest
from scipy.integrate import quad

from numerics.montecarlo.geometry import vectors_from_overlaps
from numerics.montecarlo.population_risk import population_risk_mc, risk_mc_from_vectors
from numerics.montecarlo.task import attention_predictor, sample_task
from theory import (OVERLAP_NAMES, Overlaps, Problem, oracle_risk,
                    population_risk, population_risk_grad)
from theory.risk import risk_from_arrays
from theory.risk_quad import population_risk_quad
from numerics.montecarlo.statistics import bonferroni_z, power_z
from rng_streams import sfc64
from theory.risk_roundoff import population_risk_roundoff

EPS = np.finfo(float).eps
ALPHA = 1e-3                                     # family-wise false-failure rate of each MC test
Z_POWER = power_z(0.99)                          # power 0.99 against the effect size below
EFFECT = 0.01                                    # a 1% error in the risk must be detectable


def _kappa_scale(problem):
    """R varies in kappa on the scale min(1, c2 / (lam s)): it enters through erf(lam s kappa / c2)
    and zeta(lam s kappa, g), which varies on the scale c2 in its first argument."""
    s = np.sqrt(np.asarray(problem.d, dtype=float) / 2)
    lam = np.asarray(problem.lam, dtype=float)
    c2 = np.sqrt(1 + 2 * (lam * np.asarray(problem.gamma, dtype=float)) ** 2)
    return np.minimum(1.0, c2 / (lam * s))


def gradient_floor(problem, name):
    """A bound on the roundoff of the closed-form partial derivative R_name.

    Each term of R is at most quadratic in the overlaps, so d/dx (x = nu, theta, eta, rho) of a
    term is at most 2 times the term's bound with every |overlap| set to 1. d/dkappa brings a
    factor lam s (or lam s / c2) and replaces f by f', with sup|f'| <= 2.5 sup|f| / c2 for
    f in {erf, erf', erf'', zeta, zeta', zeta''} (largest ratio: sup|erf'''| / sup|erf''| = 2.33),
    i.e. at most 2.5 / scale. Bound: 4 / scale times ``population_risk_roundoff`` at overlaps 1.
    """
    ones = {x: 1.0 for x in OVERLAP_NAMES}   # not feasible, only a bound
    scale = _kappa_scale(problem) if name == "kappa" else 1.0
    return 4.0 / scale * population_risk_roundoff(problem, ones)


def _log_uniform(rng, low, high):
    return float(np.exp(rng.uniform(np.log(low), np.log(high))))


def _random_overlaps(rng, d, on_manifold):
    """Feasible overlaps of random unit vectors k, v in R^min(d, 4), with k* = e1, v* = e2.

    The k*-component of k is shrunk by a log-uniform factor in [1e-4, 1], so that the erf
    argument lambda <X_J, k> often crosses 0 within the bulk of the Gaussian (the hard case
    for quadrature). On M, theta = eta = rho = 0 (feasible for any kappa, nu in [-1, 1]).
    """
    r = min(d, 4)
    k = rng.standard_normal(r)
    k[0] *= _log_uniform(rng, 1e-4, 1.0)
    k /= np.linalg.norm(k)
    v = rng.standard_normal(r)
    v /= np.linalg.norm(v)
    if on_manifold:
        return Overlaps(kappa=k[0], nu=v[1])
    return Overlaps(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=float(k @ v))


def random_point(rng, i, d_range=(2, 1e5), L_range=(1, 1000), lam_range=(1e-3, 10.0),
                 gamma_range=(1e-2, 10.0)):
    """A random (problem, overlaps): d, L, gamma, lambda log-uniform in their ranges, eps uniform
    in [0, 1]; on M for even i (when d >= 4). Shared with the other tests of the risk routes."""
    d = int(round(_log_uniform(rng, *d_range)))
    L = int(round(_log_uniform(rng, *L_range)))
    problem = Problem(d=d, L=L, gamma=_log_uniform(rng, *gamma_range), eps=rng.uniform(0, 1),
                      lam=_log_uniform(rng, *lam_range))
    # A point of M with |kappa|, |nu| < 1 has a rank-4 Gram matrix: realisable only for d >= 4.
    return problem, _random_overlaps(rng, d, on_manifold=i % 2 == 0 and d >= 4)


# ---------------------------------------------------------------- closed form = quadrature

def test_closed_form_equals_quadrature_at_random_points(rng):
    """|closed - quad| <= quad.abserr (QUADPACK's estimate, propagated) + the closed form's floor."""
    worst = 0.0
    for i in range(240):
        problem, overlaps = random_point(rng, i)
        closed = float(population_risk(problem, overlaps))
        q = population_risk_quad(problem, overlaps)
        tol = q.abserr + float(population_risk_roundoff(problem, overlaps))
        assert abs(closed - q.value) <= tol, (problem, overlaps, closed, q)
        worst = max(worst, abs(closed - q.value) / tol)
    assert worst > 0  # the comparison is not vacuous (the routes do differ by roundoff)


@pytest.mark.parametrize("point", [
    dict(d=100000, L=1000, gamma=10.0, lam=10.0, kappa=1e-4, nu=0.3),    # sharp gate at z0 ~ -2e-3
    dict(d=100000, L=2, gamma=1.0, lam=10.0, kappa=0.0, nu=0.5, theta=0.3, eta=0.2, rho=0.1),
    dict(d=100000, L=1, gamma=10.0, lam=10.0, kappa=0.3, nu=0.5),        # transition at z0 = -6.7
    dict(d=2, L=1000, gamma=0.01, lam=0.001, kappa=-1.0, nu=-1.0),
    dict(d=400, L=10, gamma=0.7, lam=0.1, kappa=0.0, nu=0.0, theta=1.0, eta=1.0),  # k = v*, v = k*
    dict(d=3, L=5, gamma=0.5, lam=3.0, kappa=0.6, nu=0.8, eta=0.8, theta=0.6, rho=1.0),  # k = v
])
def test_closed_form_equals_quadrature_at_corners(point):
    point = dict(point)
    problem = Problem(**{k: point.pop(k) for k in ("d", "L", "gamma", "lam")}, eps=0.1)
    overlaps = Overlaps(**point)
    q = population_risk_quad(problem, overlaps)
    closed = float(population_risk(problem, overlaps))
    assert abs(closed - q.value) <= q.abserr + float(population_risk_roundoff(problem, overlaps))


def test_quadrature_failure_is_raised(monkeypatch):
    """A QUADPACK failure (here: too few subintervals for a sharp gate) raises, never returns."""
    import theory.risk_quad as risk_quad

    monkeypatch.setattr(risk_quad, "_LIMIT", 8)
    with pytest.raises(RuntimeError, match="quadrature lost accuracy"):
        population_risk_quad(Problem(d=10**5, L=3, gamma=10.0, lam=10.0), Overlaps(kappa=1e-4, nu=0.3))


def test_quadrature_rejects_array_fields():
    with pytest.raises(ValueError, match="lam"):
        population_risk_quad(Problem(d=10, lam=np.array([0.1, 0.2])), Overlaps(kappa=0.1, nu=0.2))


# ---------------------------------------------------------------- closed form = Monte Carlo

def test_closed_form_equals_monte_carlo_at_random_points(rng):
    """z-test at m points, Bonferroni at family-wise rate ALPHA, and a power check per point.

    n per point is set from a pilot run so that a 1% error in R would be detected with
    probability 0.99: EFFECT R / stderr >= z + Z_POWER, asserted with the final stderr.
    Ranges kept where the loss has moderate kurtosis and cost (L <= 10, lam in [0.05, 3], gamma in
    [0.1, 3]); extreme parameters are covered by the quadrature comparison.
    Points and draws from ``sfc64(rng)`` (compiled draws, tests/rng_streams.py).
    """
    rng = sfc64(rng)
    m = 20
    z_crit = bonferroni_z(ALPHA, m)
    for i in range(m):
        problem, overlaps = random_point(rng, i, L_range=(1, 10), lam_range=(0.05, 3.0),
                                          gamma_range=(0.1, 3.0))
        exact = float(population_risk(problem, overlaps))
        pilot = population_risk_mc(problem, overlaps, n=20_000, rng=rng)
        rel_sd = pilot.stderr * np.sqrt(pilot.n) / exact
        n = int(np.clip(1.3 * (rel_sd * (z_crit + Z_POWER) / EFFECT) ** 2, 1e5, 4e6))
        est = population_risk_mc(problem, overlaps, n=n, rng=rng)
        assert abs(est.z(exact)) <= z_crit, (problem, overlaps, est, exact)
        assert EFFECT * exact / est.stderr >= z_crit + Z_POWER, (problem, overlaps, est)


@pytest.mark.parametrize("d, overlaps", [
    (3, Overlaps(kappa=0.6, nu=1.0)),                                       # realisable in R^3
    (4, Overlaps(kappa=0.5, nu=0.4, theta=0.3, eta=-0.2, rho=0.25)),
    (9, Overlaps(kappa=-0.3, nu=0.6, theta=0.2, eta=0.4, rho=-0.3)),
])
def test_full_dimensional_monte_carlo_equals_closed_form(d, overlaps, rng):
    """Whole d-dimensional tokens (sample_task): checks the span reduction of the default route."""
    problem = Problem(d=d, L=3, gamma=0.8, eps=0.3, lam=0.7)
    exact = float(population_risk(problem, overlaps))
    z_crit = bonferroni_z(ALPHA, 3)  # one family for the three parametrised cases
    est = population_risk_mc(problem, overlaps, n=150_000, rng=rng, full_dim=True)
    assert abs(est.z(exact)) <= z_crit
    # Power here is against a 5% error (the full-dimensional route is d times costlier).
    assert 0.05 * exact / est.stderr >= z_crit + Z_POWER


# ---------------------------------------------------------------- gradient = finite differences

def test_gradient_equals_central_differences(rng):
    """R_x of the closed form vs (R(x + h) - R(x - h)) / (2h), one overlap x at a time.

    Error of the central difference: truncation h^2 |R'''(xi)| / 6 plus roundoff F / h, with
    F = ``population_risk_roundoff`` bounding the error of each value of R. R varies in kappa on the
    scale l = ``_kappa_scale`` and in the other overlaps on the scale l = 1, so h = eps^(1/3) l
    balances the two. R''' is estimated by a central third difference with step
    H = eps^(1/5) l: its own error, ~(H/l)^2 ~ 1e-6 relative plus F / H^3 ~ 1e-5 F / l^3, is
    negligible once multiplied by h^2; a factor 2 covers the variation of R''' over
    [x - h, x + h] (relative change ~ h / l ~ 6e-6). Plus the gradient's own roundoff.
    """
    n = 200
    points = [random_point(rng, i) for i in range(n)]
    fields = {name: np.array([float(getattr(p, name)) for p, _ in points])
              for name in ("d", "L", "gamma", "eps", "lam")}
    ov = {name: np.array([float(getattr(o, name)) for _, o in points]) for name in OVERLAP_NAMES}
    problem, overlaps = Problem(**fields), Overlaps(**ov)
    grad = population_risk_grad(problem, overlaps)
    floor = population_risk_roundoff(problem, overlaps)
    args = [fields[name] for name in ("d", "L", "gamma", "eps", "lam")]
    for name in OVERLAP_NAMES:
        scale = _kappa_scale(problem) if name == "kappa" else np.ones(n)
        h, H = EPS ** (1 / 3) * scale, EPS ** (1 / 5) * scale

        def R(step):
            shifted = dict(ov, **{name: ov[name] + step})
            return risk_from_arrays(*args, *(shifted[x] for x in OVERLAP_NAMES))

        fd = (R(h) - R(-h)) / (2 * h)
        third = (R(2 * H) - 2 * R(H) + 2 * R(-H) - R(-2 * H)) / (2 * H**3)
        tol = 2 * h**2 / 6 * np.abs(third) + floor / h + gradient_floor(problem, name)
        ratio = np.abs(fd - grad[name]) / tol
        assert np.all(ratio <= 1), (name, np.max(ratio), points[int(np.argmax(ratio))])


# ---------------------------------------------------------------- symmetries and special cases

def test_sign_flip_symmetry_closed_form_and_quadrature(rng):
    """(k, v) -> (-k, -v): (kappa, nu, theta, eta, rho) -> (-kappa, -nu, -theta, -eta, rho) (docs/math/task.md#the-predictor)."""
    for i in range(40):
        problem, overlaps = random_point(rng, i)
        flipped = Overlaps(kappa=-overlaps.kappa, nu=-overlaps.nu, theta=-overlaps.theta,
                           eta=-overlaps.eta, rho=overlaps.rho)
        floor = float(population_risk_roundoff(problem, overlaps))
        assert abs(float(population_risk(problem, overlaps)) - float(population_risk(problem, flipped))) <= 2 * floor
        q, qf = population_risk_quad(problem, overlaps), population_risk_quad(problem, flipped)
        assert abs(q.value - qf.value) <= q.abserr + qf.abserr


def test_sign_flip_symmetry_on_the_same_samples(rng):
    """T(X; -k, -v) = T(X; k, v) bit for bit, so the MC estimates on the same draws coincide."""
    problem = Problem(d=30, L=5, gamma=0.6, eps=0.4, lam=0.8)
    k, v, k_star, v_star = vectors_from_overlaps(
        Overlaps(kappa=0.4, nu=-0.3, theta=0.2, eta=0.5, rho=0.1), 30, rng)
    X, _, _ = sample_task(problem, k_star, v_star, 1000, rng)
    assert np.array_equal(attention_predictor(X, k, v, 0.8), attention_predictor(X, -k, -v, 0.8))
    seed = rng.integers(2**63)
    a = risk_mc_from_vectors(problem, k, v, k_star, v_star, 20_000, np.random.default_rng(seed))
    b = risk_mc_from_vectors(problem, -k, -v, k_star, v_star, 20_000, np.random.default_rng(seed))
    assert a == b


def test_random_and_fixed_location_give_the_same_risk(rng):
    """T is permutation invariant (docs/math/task.md#the-predictor), so J uniform and J fixed at 0 or L-1 agree.

    Two-sample z-tests (difference over the combined stderr), Bonferroni over the 4 comparisons;
    power: a 2% difference in the risk would be detected (checked below).
    """
    problem = Problem(d=200, L=6, gamma=0.7, eps=0.2, lam=0.9)
    overlaps = Overlaps(kappa=0.3, nu=0.4, theta=-0.2, eta=0.3, rho=0.35)
    rng = sfc64(rng)   # compiled draws (tests/rng_streams.py)
    n = 400_000
    z_crit = bonferroni_z(ALPHA, 4)
    uniform = population_risk_mc(problem, overlaps, n=n, rng=rng)
    for J in (0, 5):
        fixed = population_risk_mc(problem, overlaps, n=n, rng=rng, J=J)
        se = np.hypot(uniform.stderr, fixed.stderr)
        assert abs(uniform.mean - fixed.mean) / se <= z_crit
        assert 0.02 * uniform.mean / se >= z_crit + Z_POWER
    # The same through whole d-dimensional tokens (sample_task's J argument).
    small = dataclasses.replace(problem, d=6)
    exact = float(population_risk(small, overlaps))
    for J in (None, 2):
        est = population_risk_mc(small, overlaps, n=100_000, rng=rng, J=J, full_dim=True)
        assert abs(est.z(exact)) <= z_crit


def _gate_correlation_quad(lam):
    """E[erf(lam Z) Z] by QUADPACK over [-40, 40] (the tails vanish in float64, as in risk_quad)."""
    f = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * math.erf(lam * z) * z
    out = quad(f, -40, 40, points=[-8 / lam, 0.0, 8 / lam] if lam > 0.2 else [0.0],
               epsabs=1e-15, epsrel=1e-13, full_output=1)
    assert len(out) == 3, out[3:]   # QUADPACK reported no failure
    return out[0], out[1]


def test_single_token_has_no_noise_terms(rng):
    """L = 1: the closed form equals the quadrature of the informative token alone.

    Also R is a polynomial of degree 2 in L (docs/math/risk.md#closed-form-population-risk), whose second difference is the squared
    mean of one noise token's term, 2 (E[erf(lam U) V])^2 = 2 rho^2 C_lambda^2; here C_lambda is
    recomputed as E[erf(lam Z) Z] by quadrature, independently of ``gate_correlation``.
    """
    for i in range(30):
        problem, overlaps = random_point(rng, i)
        one = dataclasses.replace(problem, L=1)
        q = population_risk_quad(one, overlaps)
        assert abs(float(population_risk(one, overlaps)) - q.value) <= (
            q.abserr + float(population_risk_roundoff(one, overlaps)))
        values = [float(population_risk(dataclasses.replace(problem, L=L), overlaps)) for L in (1, 2, 3, 4)]
        floor = float(population_risk_roundoff(dataclasses.replace(problem, L=4), overlaps))
        c_lam, c_err = _gate_correlation_quad(float(problem.lam))
        second = values[2] - 2 * values[1] + values[0]
        expected = 2 * (float(overlaps.rho) * c_lam) ** 2
        assert abs(second - expected) <= 4 * floor + 4 * float(overlaps.rho) ** 2 * c_lam * c_err
        assert abs(values[3] - 3 * values[2] + 3 * values[1] - values[0]) <= 8 * floor


def _oracle_reference(problem, dps=30):
    """eps^2 + gamma^2 E[(1 - erf(lam (s + gamma Z)))^2] + (L-1) E[erf(lam Z)^2] with mpmath quadrature.

    docs/math/baselines.md#ordering-of-the-risks with zeta(0, lam) also written as its defining expectation; 1 - erf = erfc.
    Returns (value, error estimate), both as floats.
    """
    with mpmath.workdps(dps):
        d, L, gamma, eps, lam = (mpmath.mpf(float(x)) for x in
                                 (problem.d, problem.L, problem.gamma, problem.eps, problem.lam))
        s = mpmath.sqrt(d / 2)
        z0, w = -s / gamma, 1 / (lam * gamma)   # the gate's transition, and its width in z
        pts = sorted({-mpmath.inf, z0 - 8 * w, z0, z0 + 8 * w, -10, 0, 10, mpmath.inf})
        gate, gate_err = mpmath.quad(
            lambda z: mpmath.npdf(z) * mpmath.erfc(lam * (s + gamma * z)) ** 2, pts, error=True)
        # E[erf(lam Z)^2] = 2 int_0^inf (the integrand is even in z)
        pts0 = sorted({0, 8 / lam, 10, mpmath.inf})
        leak, leak_err = (2 * x for x in mpmath.quad(
            lambda z: mpmath.npdf(z) * mpmath.erf(lam * z) ** 2, pts0, error=True))
        value = eps**2 + gamma**2 * gate + (L - 1) * leak
        return float(value), float(gamma**2 * gate_err + (L - 1) * leak_err)


@pytest.mark.parametrize("d, L, gamma, eps, lam", [
    (400, 10, np.sqrt(0.5), 0.0, 0.1), (400, 10, np.sqrt(0.5), 0.1, 0.9), (2, 1, 0.3, 0.0, 0.02),
    (80, 10, np.sqrt(0.5), 0.1, 2.0), (10**5, 1000, 5.0, 1.0, 0.001), (50, 1, 0.05, 0.0, 0.4),
])
def test_oracle_risk(d, L, gamma, eps, lam):
    problem = Problem(d=d, L=L, gamma=gamma, eps=eps, lam=lam)
    oracle = Overlaps.oracle()
    ref, ref_err = _oracle_reference(problem)
    floor = float(population_risk_roundoff(problem, oracle))
    assert ref_err <= 1e-20 * max(ref, 1.0)
    tol = floor + ref_err + EPS * ref     # + the rounding of the 30-digit reference to float64
    assert abs(float(oracle_risk(problem)) - ref) <= tol
    assert abs(float(population_risk(problem, oracle)) - ref) <= tol
    q = population_risk_quad(problem, oracle)
    assert abs(q.value - ref) <= q.abserr + ref_err + EPS * ref


# ---------------------------------------------------------------- broadcasting

def test_array_fields_equal_a_loop(rng):
    """population_risk and population_risk_grad on array fields equal the scalar loop.

    Array and scalar evaluations may use different libm/SIMD paths for erf and exp, so each may
    differ from exact by the closed form's floor: allow twice the floor.
    """
    points = [random_point(rng, i) for i in range(50)]
    fields = {name: np.array([getattr(p, name) for p, _ in points]).reshape(5, 10)
              for name in ("d", "L", "gamma", "eps", "lam")}
    ov = {name: np.array([float(getattr(o, name)) for _, o in points]).reshape(5, 10)
          for name in OVERLAP_NAMES}
    problem, overlaps = Problem(**fields), Overlaps(**ov)
    risk = population_risk(problem, overlaps)
    grad = population_risk_grad(problem, overlaps)
    floor = population_risk_roundoff(problem, overlaps)
    assert risk.shape == (5, 10) and all(g.shape == (5, 10) for g in grad.values())
    gfloor = {x: gradient_floor(problem, x) for x in OVERLAP_NAMES}
    for idx, (p, o) in zip(np.ndindex(5, 10), points):
        assert abs(risk[idx] - float(population_risk(p, o))) <= 2 * floor[idx]
        gp = population_risk_grad(p, o)
        for x in OVERLAP_NAMES:
            assert abs(grad[x][idx] - float(gp[x])) <= 2 * gfloor[x][idx]
    # broadcasting a scalar problem against array overlaps
    p0 = points[0][0]
    assert np.allclose(population_risk(p0, overlaps)[0, 3], float(population_risk(p0, points[3][1])),
                       rtol=0, atol=2 * float(population_risk_roundoff(p0, points[3][1])))
