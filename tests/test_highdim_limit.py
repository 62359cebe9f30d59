"""The d -> infinity limit of the drift of one run at lambda = lambda_bar / s in closed form, and its
aligned fixed point (docs/math/highdim.md#the-limit-in-closed-form,
docs/math/highdim.md#the-fixed-point-of-the-limit)."""

import math

import numpy as np
import pytest

from numerics.highdim import extrapolate_in_d, extrapolated_per_run_drift, limit_fixed_point
from numerics.highdim.limit_check import DECADES, FLOOR
from numerics.highdim.fluctuations import population_velocity
from theory import Problem
from theory.highdim import LimitFastModeUnstable, limit_drift

# (kappa, nu, lambda_bar, c, B, L, eps): both signs of kappa, nu below and above the gate, B = 1, 2, 5,
# L = 3 and 10 (L drops out of the limit), eps = 0 and > 0, c g^2 from 0.02 to 0.9
CASES = [(0.3, 0.5, 2.0, 1.0, 1, 10, 0.1), (0.7, 0.2, 1.0, 3.0, 5, 10, 0.1), (0.5, 0.9, 0.5, 0.5, 2, 3, 0.3),
         (-0.4, 0.6, 3.0, 0.2, 1, 10, 0.0)]


def _problem(d, lam_bar, L, eps):
    return Problem(d=d, L=L, gamma=np.sqrt(0.5), eps=eps, lam=lam_bar / np.sqrt(d / 2.0))


@pytest.mark.parametrize("kappa, nu, lam_bar, c, B, L, eps", CASES)
def test_closed_form_limit_is_the_extrapolated_finite_d_drift(kappa, nu, lam_bar, c, B, L, eps):
    """G_infinity (closed form) equals the drift of one run (quadrature of the full model, fast mode by
    its numerical Jacobian) extrapolated from d = 1e5, 1e6, 1e7 at lambda = lambda_bar / s, within the
    extrapolation's error estimate plus the numerical floor; and the finite-d drift at d = 1e7 itself is
    off by its 1/d remainder (which the test must resolve: at least 100 times the tolerance)."""
    ext = extrapolated_per_run_drift(kappa, nu, lam_bar=lam_bar, c=c, batch_size=B, L=L, gamma=np.sqrt(0.5), eps=eps)
    closed = limit_drift(kappa, nu, lam_bar=lam_bar, c=c, batch_size=B, L=L, eps=eps, gamma=np.sqrt(0.5)).drift
    assert np.all(np.abs(ext.limit - closed) <= ext.error), (ext.limit - closed, ext.error)
    assert np.max(np.abs(ext.values[2] - closed)) >= 100 * np.max(ext.error), (ext.values[2] - closed, ext.error)


def test_at_c_zero_the_limit_is_the_population_flow_limit():
    """c -> 0: G_infinity at c = 0 is its ``population`` field, the extrapolated closed-form population flow
    (docs/math/dynamics.md#overlap-ode) at lambda = lambda_bar / s, and G_infinity(c) - G_infinity(0) is
    linear in c at small c (halving c halves it up to the relative O(c g^2) of V's denominator)."""
    kappa, nu, lam_bar = 0.3, 0.5, 2.0
    x = np.array([kappa, nu, 0.0, 0.0, 0.0])
    ext = extrapolate_in_d([population_velocity(_problem(d, lam_bar, 10, 0.1), x)[0, :2] for d in DECADES])
    at_zero = limit_drift(kappa, nu, lam_bar=lam_bar, c=0.0, eps=0.1)
    # the same terms grouped differently (g (gamma^2 + V) - gamma^2 nu against gamma^2 (g - nu)): a few ulps
    assert np.all(np.abs(at_zero.drift - at_zero.population) <= 8 * np.finfo(float).eps), at_zero
    assert np.all(np.abs(ext.limit - at_zero.drift) <= ext.error), ext.limit - at_zero.drift
    small = [limit_drift(kappa, nu, lam_bar=lam_bar, c=c, eps=0.1).drift - at_zero.drift for c in (2e-3, 1e-3)]
    ratio = small[0] / small[1]
    assert np.all(np.abs(ratio - 2.0) <= 2.0 * 2e-3 * 2), ratio   # |ratio - 2| <= 2 c g^2 at c = 2e-3 (g^2 < 1)


def test_limit_drift_fields_and_the_fast_mode_limit():
    """mu_f / d -> -g^2 and s^2 Var(theta) -> V: the finite-d fast mode at d = 1e7 against the closed form,
    within the measured 1/d remainder (the next decade's difference divided by 9, times 2) plus the floor;
    the fast mode's step limit c g^2 >= 2 raises."""
    from numerics.highdim import fast_mode
    kappa, nu, lam_bar, c = 0.3, 0.5, 2.0, 1.0
    x = np.array([kappa, nu, 0.0, 0.0, 0.0])
    modes = [fast_mode(_problem(d, lam_bar, 10, 0.1), x, c=c, batch_size=1) for d in (10**6, 10**7)]
    r = limit_drift(kappa, nu, lam_bar=lam_bar, c=c, eps=0.1)
    for got, want in (([m.mu / d for m, d in zip(modes, (1e6, 1e7))], r.fast_rate),
                      ([m.s2_theta_variance for m in modes], r.theta_variance)):
        remainder = 2.0 * abs(got[0] - got[1]) / 9.0
        assert abs(got[1] - want) <= remainder + FLOOR, (got, want)
    assert abs(got[1] - want) >= 0.1 * remainder   # the remainder is resolved, not hidden by the floor
    with pytest.raises(LimitFastModeUnstable):
        limit_drift(0.9, 0.5, lam_bar=2.0, c=3.0)


@pytest.mark.parametrize("kwargs, name", [
    (dict(kappa=1.5), "kappa"), (dict(nu=-1.01), "nu"), (dict(lam_bar=0.0), "lam_bar"), (dict(c=-1.0), "c"),
    (dict(batch_size=0), "batch_size"), (dict(L=0), "L"), (dict(gamma=0.0), "gamma"), (dict(eps=-0.1), "eps"),
    (dict(c=True), "c"), (dict(kappa="0.3"), "kappa")])
def test_limit_drift_rejects_bad_input(kwargs, name):
    args = dict(kappa=0.3, nu=0.5, lam_bar=1.0, c=1.0, batch_size=1, L=10, gamma=0.7, eps=0.1) | kwargs
    with pytest.raises(ValueError, match=f"{name}=.* is not allowed"):
        limit_drift(args.pop("kappa"), args.pop("nu"), **args)


def test_limit_fixed_point_is_a_stable_zero_and_tends_to_its_large_c_asymptote():
    """The aligned fixed point of G_infinity at lambda_bar = 1 (the lambda = 1/s of the largest-step pages):
    at c = 0.5 on the boundary kappa = 1 (G_kappa = 0 there, h < 0); at c = 2 and 100 an interior zero of
    G_infinity (to the brackets' 1e-14, times the drift's slope <= 1e2: 1e-12) with stable eigenvalues; as
    c -> infinity kappa* c -> sqrt(pi) B gamma^2 / (sqrt(2) lambda_bar (gamma^2 + eps^2)) and nu* -> 1/sqrt(2)
    (docs/math/highdim.md#the-fixed-point-of-the-limit), with corrections O(1/c): the relative distance
    falls by ~10 per decade of c."""
    kw = dict(lam_bar=1.0, eps=0.1)
    assert limit_fixed_point(0.5, **kw).boundary and limit_fixed_point(0.5, **kw).kappa == 1.0
    for c, B in ((2.0, 1), (100.0, 1), (10.0, 5)):
        fp = limit_fixed_point(c, batch_size=B, **kw)
        assert not fp.boundary and fp.stable and fp.fast_contraction < 2.0
        G = limit_drift(fp.kappa, fp.nu, c=c, batch_size=B, **kw).drift
        assert np.max(np.abs(G)) <= 1e-12, G
    for B in (1, 5):
        asymptote = np.sqrt(np.pi) * B * 0.5 / (np.sqrt(2.0) * 0.51)
        dev = [abs(limit_fixed_point(c, batch_size=B, **kw).kappa * c / asymptote - 1.0) for c in (1e3, 1e4)]
        assert 5.0 <= dev[0] / dev[1] <= 20.0 and dev[1] <= 1e-2, dev
        assert abs(limit_fixed_point(1e4, batch_size=B, **kw).nu - np.sqrt(0.5)) <= 1e-3 * B


def test_extrapolation_rejects_other_than_three_decades():
    with pytest.raises(ValueError, match="ds=.* is not allowed"):
        extrapolate_in_d(np.zeros((3, 2)), ds=(10**4, 10**5, 10**7))


def test_limit_fixed_point_rejects_bad_input():
    for kwargs, name in ((dict(c=0.0), "c"), (dict(lam_bar=-1.0), "lam_bar"), (dict(batch_size=0), "batch_size"),
                         (dict(eps=-1.0), "eps")):
        args = dict(c=1.0, lam_bar=1.0) | kwargs
        with pytest.raises(ValueError, match=f"{name}=.* is not allowed"):
            limit_fixed_point(args.pop("c"), **args)


def test_finite_d_fixed_point_converges_to_the_limit_fixed_point():
    """The aligned fixed point of the finite-d drift of one run (``aligned_fixed_point``, lambda = 1/s, c = 2,
    B = 1) at d = 1e4, 1e5, 1e6, extrapolated like the drift (a + b/d + e/d^2), is the limit's fixed point
    (0.5453, 0.8606; 0.093 and 0.035 away at d = 1e3): within the extrapolation's error estimate plus the
    position error of Newton's stopping rule, |G| <= 1e-9 over the slowest rate (0.73 here), times the fit's
    weights (sum of moduli 1.25)."""
    from numerics.highdim import aligned_fixed_point

    limit = limit_fixed_point(2.0, lam_bar=1.0, eps=0.1)
    ds = (10**4, 10**5, 10**6)
    points = [aligned_fixed_point(_problem(d, 1.0, 10, 0.1), c=2.0, batch_size=1, start=(limit.kappa, limit.nu))
              for d in ds]
    ext = extrapolate_in_d([[p.kappa, p.nu] for p in points], ds)
    newton = 1.25 * 1e-9 / abs(limit.eigenvalues[-1].real)
    got = np.array([limit.kappa, limit.nu])
    assert np.all(np.abs(ext.limit - got) <= ext.error + newton), (ext.limit - got, ext.error)
    assert np.all(np.abs(ext.values[2] - got) >= 1e-5)   # d = 1e6 itself is off by ~1e-4: resolved


def test_hand_written_limit_is_the_symbolic_derivation():
    """theory.highdim.limit_drift against theory.symbolic.limit_drift_symbolic (the limit derived by sympy from the
    model: the risk as a Gaussian expectation, the flow in partials, the normalisation, the fast mode) at 40 random
    settings with c g^2 < 1.9: the same numbers up to rounding, the terms grouped differently and divided by
    2 - c g^2 >= 0.1 (a relative 1e-12 covers 20 roundings amplified tenfold)."""
    from theory.symbolic import limit_drift_symbolic

    rng = np.random.default_rng(18)
    f = limit_drift_symbolic()
    checked = 0
    while checked < 40:
        kappa, nu = rng.uniform(-1, 1, 2)
        lam_bar, c, gamma, eps = rng.uniform(0.2, 3), rng.uniform(0, 6), rng.uniform(0.3, 1.5), rng.uniform(0, 0.5)
        B = int(rng.integers(1, 8))
        if c * math.erf(lam_bar * kappa) ** 2 >= 1.9:
            continue
        r = limit_drift(kappa, nu, lam_bar=lam_bar, c=c, batch_size=B, gamma=gamma, eps=eps)
        want = np.array(f(kappa, nu, lam_bar, c, B, gamma, eps), dtype=float)
        got = np.array([*r.drift, r.theta_variance, r.fast_rate])
        assert np.all(np.abs(got - want) <= 1e-12 * np.maximum(1.0, np.abs(want))), (got, want)
        checked += 1


@pytest.mark.slow
def test_critical_step_at_large_d_started_from_the_limit_fixed_point():
    """At d = 1e5 (lambda = 1/s) the continuation of ``critical_step`` started at c = 2 from the limit's fixed point
    (``start``) brackets a loss of stability (the fixed point stable 3 tolerances below c_crit, unstable or lost
    above), and c_crit exceeds its value at d = 1e3: the limit keeps its branch on M at every c
    (docs/math/highdim.md#the-fixed-point-of-the-limit), so at finite d the loss moves out with d."""
    from numerics.highdim import aligned_fixed_point, critical_step

    lim = limit_fixed_point(2.0, lam_bar=1.0, eps=0.1)
    crits = {}
    for d in (10**3, 10**5):
        problem = _problem(d, 1.0, 10, 0.1)
        crit = critical_step(problem, batch_size=1, c_start=2.0, factor=2.0, c_tol=0.01, c_max=1e4,
                             start=(lim.kappa, lim.nu))
        start = (crit.below.kappa, crit.below.nu)
        lo = aligned_fixed_point(problem, c=crit.c_crit * 0.97, batch_size=1, start=start)
        try:
            hi_stable = aligned_fixed_point(problem, c=crit.c_crit * 1.03, batch_size=1, start=start).stable
        except RuntimeError:   # no fixed point near the branch beyond a fold
            hi_stable = False
        assert lo.stable and not hi_stable, (d, crit)
        crits[d] = crit.c_crit
    assert crits[10**5] > crits[10**3], crits
    assert limit_fixed_point(crits[10**5], lam_bar=1.0, eps=0.1).stable
