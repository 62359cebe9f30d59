"""Population risk by one-dimensional Gaussian quadrature (docs/math/task.md#the-task), independent of docs/math/risk.md#closed-form-population-risk.

Put the informative token first (J = 1; R does not depend on J because T is permutation
invariant, docs/math/task.md#the-predictor). With T_l = erf(lambda U_l) V_l, U_l = <X_l, k>, V_l = <X_l, v>,
A = <X_1, v*> - T_1 and S = sum_{l >= 2} T_l, the tokens are independent, the L-1 noise tokens
are i.i.d. and the output noise xi is centred and independent of X, so expanding
(Y - T)^2 = (xi + A - S)^2 gives

    R = eps^2 + E[A^2] - 2 (L-1) E[A] m + (L-1) E[T_2^2] + (L-1)(L-2) m^2,    m = E[T_2].

Each expectation is a 1-D Gaussian integral over U = <X_l, k>: the projections of a token on
(k, v, v*) are jointly Gaussian with mean s G[., k*] (informative token, s = sqrt(d/2)) or 0
(noise token) and covariance gamma^2 G or G, G the Gram matrix of (k, v, k*, v*). Conditioning
on U (a Schur complement, done numerically) leaves conditional means affine in U and a constant
conditional covariance, so E[A^2 | U], E[A | U], E[T | U], E[T^2 | U] are explicit and the outer
integral, in the standardised variable z = (U - E U) / sd(U), is done by
``scipy.integrate.quad``. None of the zeta / C_lambda algebra of the closed form is used.

Exact for every finite d, L and feasible overlaps (scalars only). Siblings:
``theory.risk.population_risk`` (closed form) and ``numerics.montecarlo.population_risk.population_risk_mc``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy  # scipy.integrate loads on first use (scipy's lazy submodules)

from .parameters import Overlaps, Problem, check_realisable, check_representable, gram_matrix
from .quad_result import QuadResult

__all__ = ["QuadResult", "population_risk_quad"]

# Limits in z: phi(z) < 2^-1074 (the smallest float64) for |z| >= 38.6, so beyond +-40 the
# integrands (at most quadratic in z times phi(z)) are exactly 0 in float64; the neglected tails
# are below (c0 + c2 z^2) phi(z) / z at z = 40, i.e. < 1e-340 times the coefficients.
_Z_MAX = 40.0
_EPSREL = 1e-13
_EPSABS_REL = 1e-13   # absolute tolerance, relative to a bound of int |integrand| phi
# A gate erf(w (z - z0)) is within erfc(8) < 1e-28 of +-1 outside z0 +- 8/w: breakpoints there
# isolate its transition, which a Gauss-Kronrod rule on a long interval could step over.
_GATE_HALF_WIDTH = 8.0
_BUMP = 10.0          # breakpoints at 0, +-10 isolate the Gaussian weight phi(z)
_LIMIT = 500
_EPS = np.finfo(float).eps
# QUADPACK stops ("extremely bad integrand behavior") when it must bisect an interval whose
# half-width is below ~100 eps |midpoint| + 1000 * tiny. Breakpoints closer than
# _MIN_GAP * max(1, |p|) to a kept one are dropped, so every interval can still be bisected
# >= 12 times (2^20 eps / (200 eps) > 2^12); such a point adds nothing a float64 z can resolve.
_MIN_GAP = 2.0**20 * _EPS
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K, _V, _KSTAR, _VSTAR = range(4)   # order of the Gram matrix (k, v, k*, v*)


def _condition_on_first(mean, cov):
    """Condition a Gaussian vector P on P_0 = mean_0 + sd_0 z.

    Returns (mean_0, sd_0, intercepts, slopes, cond_cov): E[P_rest | z] = intercepts + slopes z
    and Cov[P_rest | z] = cond_cov (the Schur complement of cov_00).
    """
    mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
    sd0 = math.sqrt(cov[0, 0])
    slopes = cov[1:, 0] / sd0
    cond_cov = cov[1:, 1:] - np.outer(slopes, slopes)
    return float(mean[0]), sd0, mean[1:], slopes, cond_cov


def _separated(candidates, low, high):
    """Breakpoints in (low, high) from ``candidates`` (in priority order), each kept only when it
    is more than _MIN_GAP * max(1, |p|, |q|) from the ends and from every point q kept before it."""
    kept = [low, high]
    for p in candidates:
        if low < p < high and all(abs(p - q) > _MIN_GAP * max(1.0, abs(p), abs(q)) for q in kept):
            kept.append(p)
    return sorted(kept[2:])


def _integrate(f, magnitude, points, low=-_Z_MAX, high=_Z_MAX):
    """int f(z) dz over [low, high] with QUADPACK; raises when QUADPACK reports a failure."""
    pts = _separated(points, low, high)
    out = scipy.integrate.quad(f, low, high, points=pts or None, epsabs=_EPSABS_REL * magnitude,
               epsrel=_EPSREL, limit=_LIMIT, full_output=1)
    if len(out) > 3:
        raise RuntimeError(f"population_risk_quad: quadrature lost accuracy: {out[3]}")
    return out[0], out[1]


def _gate(x):
    """(e0, delta) with erf(x) = e0 + delta, e0 = sign(x), delta = -sign(x) erfc(|x|).

    Splitting off the limit +-1 keeps 1 - erf(x) accurate where the gate saturates.
    """
    e0 = math.copysign(1.0, x) if x != 0.0 else 0.0
    return e0, (-e0 * math.erfc(abs(x)) if x != 0.0 else 0.0)


def _gated_integral(f, lam, mu, sd, magnitude):
    """int phi(z) f(z, e0, delta) dz with (e0, delta) = _gate(x), x = lam (mu + sd z).

    The gate crosses 0 at z0 = -mu / sd and saturates outside z0 +- 8 / slope. Where that
    transition is wide enough for QUADPACK to resolve (8 / slope >= _MIN_GAP max(1, |z0|)),
    breakpoints at z0, z0 +- 8 / slope and 0, +-10 suffice. Where it is narrower (a steep gate:
    lam gamma >~ 1e10), the integral is split exactly into the saturated part
    int phi(z) f(z, sign(x), 0) dz (breakpoints z0, 0, +-10) and the transition band
    int phi(z) [f(z, e0, delta) - f(z, e0, 0)] dz, integrated in x over [-8, 8] (z = z0 + x / slope,
    dz = dx / slope with slope = lam sd, breakpoint x = 0); outside it |delta| <= erfc(8) < 1e-28.
    Returns (value, QUADPACK error estimate of the sum).
    """
    weight = lambda z: _INV_SQRT_2PI * math.exp(-0.5 * z * z)
    slope, z0 = lam * sd, -mu / sd     # sd > 0; slope may underflow to 0 or overflow to inf
    edge = _GATE_HALF_WIDTH / slope if slope > 0.0 else math.inf
    anchors = [0.0, -_BUMP, _BUMP]
    if edge >= _MIN_GAP * max(1.0, abs(z0)):
        def gated(z):   # weight(z) * f(z, *_gate(x)) written out: QUADPACK calls it ~10^3 times per integral
            x = lam * (mu + sd * z)
            e0 = math.copysign(1.0, x) if x != 0.0 else 0.0
            delta = -e0 * math.erfc(abs(x)) if x != 0.0 else 0.0
            return _INV_SQRT_2PI * math.exp(-0.5 * z * z) * f(z, e0, delta)
        return _integrate(gated, magnitude, [z0, z0 - edge, z0 + edge] + anchors)
    saturated = lambda z: weight(z) * f(z, _gate(lam * (mu + sd * z))[0], 0.0)
    value, err = _integrate(saturated, magnitude, [z0] + anchors)
    if edge > 0.0 and abs(z0) < _Z_MAX + edge:   # else the band is empty or outside [-40, 40]
        def band(x):
            z = z0 + x / slope
            e0, delta = _gate(x)
            return weight(z) * (f(z, e0, delta) - f(z, e0, 0.0)) / slope
        b_value, b_err = _integrate(band, magnitude, [0.0], -_GATE_HALF_WIDTH, _GATE_HALF_WIDTH)
        value, err = value + b_value, err + b_err
    return value, err


def _informative_token(problem_scalars, G):
    """E[A^2] and E[A] as integrals over z, with A = <X_1, v*> - erf(lam U) <X_1, v>."""
    d, gamma, lam = problem_scalars
    s = math.sqrt(d / 2.0)
    idx = [_K, _V, _VSTAR]
    mean = s * G[idx, _KSTAR]
    # Condition with covariance G and scale afterwards (sd and slopes by gamma, the conditional
    # covariance by gamma^2): gamma^2 G underflows to 0 for gamma < 1e-162, gamma G does not.
    mu_u, sd_u, (a_v, a_y), (b_v, b_y), ((c_vv, c_vy), (_, c_yy)) = _condition_on_first(
        mean, G[np.ix_(idx, idx)])
    sd_u, b_v, b_y = gamma * sd_u, gamma * b_v, gamma * b_y
    c_vv, c_vy, c_yy = (gamma * gamma * c for c in (c_vv, c_vy, c_yy))

    def mean(z, e0, delta):   # E[A | U]
        m_v = a_v + b_v * z
        return ((a_y + b_y * z) - e0 * m_v) - delta * m_v

    def second_moment(z, e0, delta):   # E[A^2 | U] = E[A | U]^2 + Var[A | U]
        m_v = a_v + b_v * z
        mean_a = ((a_y + b_y * z) - e0 * m_v) - delta * m_v
        return mean_a * mean_a + ((c_yy - 2.0 * e0 * c_vy + e0 * e0 * c_vv) + 2.0 * delta * (e0 * c_vv - c_vy)
                                  + delta * delta * c_vv)

    lin = abs(a_v) + abs(a_y) + abs(b_v) + abs(b_y)   # bounds E|E[A|U]| since E|z| <= 1
    mag2 = lin * lin + abs(c_yy) + 2.0 * abs(c_vy) + abs(c_vv)
    a2 = _gated_integral(second_moment, lam, mu_u, sd_u, mag2)    # the gate is erf(lam U)
    a1 = _gated_integral(mean, lam, mu_u, sd_u, lin)
    return a2, a1, mag2, lin


def _noise_token(lam, G):
    """m = E[T_2] and E[T_2^2] for a noise token X ~ N(0, I_d), T_2 = erf(lam U) <X, v>."""
    idx = [_K, _V]
    _, sd_u, (a_v,), (b_v,), ((c_vv,),) = _condition_on_first(np.zeros(2), G[np.ix_(idx, idx)])

    def t1(z, e0, delta):
        return (e0 + delta) * (a_v + b_v * z)

    def t2(z, e0, delta):
        m_v = a_v + b_v * z
        return (e0 + delta) ** 2 * (m_v * m_v + c_vv)

    lin = abs(a_v) + abs(b_v)
    mag2 = lin * lin + abs(c_vv)
    return (_gated_integral(t1, lam, 0.0, sd_u, lin), _gated_integral(t2, lam, 0.0, sd_u, mag2),
            lin, mag2)


def population_risk_quad(problem: Problem, overlaps: Overlaps) -> QuadResult:
    """Population risk R = E[(Y - T(X))^2] by 1-D quadrature (formula in the module docstring).

    Scalar ``problem`` and ``overlaps`` only. Each integral runs over z in [-40, 40] with
    breakpoints at 0, +-10 (the Gaussian weight) and at the gate's zero z0 and z0 +- 8 / slope
    (its transition, sharp when lam gamma is large), epsrel = 1e-13; breakpoints closer than
    float64 can bisect are merged, and a transition narrower than that (lam gamma >~ 1e10) is
    integrated apart in the gate's own variable (``_gated_integral``), so every finite d, L, gamma,
    lam and feasible overlaps are in the domain.
    ``abserr`` propagates QUADPACK's error estimates through R = eps^2 + sum_i c_i P_i (P_i an
    integral or a product of two: |ab - a'b'| <= |a||b - b'| + |b'||a - a'| + |a - a'||b - b'|),
    plus a roundoff floor of 16 ulps of sum_i |c_i| B_i with B_i >= int phi |integrand_i|: the
    conditional moments and the integrands are sums of a few terms each rounded to an ulp of
    these magnitudes, and the final combination adds at most 5 more. The floor is relative to
    the magnitudes, not to R, so it dominates where R is much smaller than gamma^2.
    Raises RuntimeError when QUADPACK reports a failure. Siblings: ``population_risk`` (closed
    form, docs/math/risk.md#closed-form-population-risk) and ``population_risk_mc`` (Monte Carlo).
    """
    fields = dict(d=problem.d, L=problem.L, gamma=problem.gamma, eps=problem.eps, lam=problem.lam,
                  **overlaps.as_dict())
    for name, value in fields.items():
        if np.ndim(value) != 0:
            raise ValueError(f"{name}={value!r} is not allowed: population_risk_quad takes "
                             "scalar fields only (loop, or use population_risk for arrays)")
    check_realisable(problem, overlaps)
    d, L, gamma, eps, lam = (float(problem.d), float(problem.L), float(problem.gamma),
                             float(problem.eps), float(problem.lam))
    if not math.isfinite(gamma * gamma + d):   # E[A^2] ~ gamma^2 + d theta^2 / 2 would overflow
        check_representable(math.inf, problem)
    G = gram_matrix(*(float(x) for x in overlaps.as_tuple()))
    (ea2, ea2_err), (ea1, ea1_err), mag_a2, mag_a1 = _informative_token((d, gamma, lam), G)
    (m, m_err), (et2, et2_err), mag_m, mag_t2 = _noise_token(lam, G)
    n1, n2 = L - 1.0, (L - 1.0) * (L - 2.0)
    value = eps * eps + ea2 - 2.0 * n1 * ea1 * m + n1 * et2 + n2 * m * m
    abserr = (ea2_err + 2.0 * n1 * (abs(m) * ea1_err + abs(ea1) * m_err + ea1_err * m_err)
              + n1 * et2_err + n2 * (2.0 * abs(m) * m_err + m_err * m_err))
    floor = 16.0 * _EPS * (eps * eps + mag_a2 + 2.0 * n1 * mag_a1 * mag_m + n1 * mag_t2
                           + n2 * mag_m * mag_m)
    return QuadResult(value=float(check_representable(value, problem)),
                      abserr=float(abserr + floor))
