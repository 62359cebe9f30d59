"""The one-token second moments of the per-sample gradient that reduce to closed forms, against the quadrature
(docs/math/highdim.md#second-moments-of-the-per-sample-gradient): E[u^2] = zeta (Owen's T), E[w^2] and E[w u]
(a Gaussian weight times a polynomial, times erf for E[w u]) in elementary functions.

A token X = m k* + sd Z (frame coordinates), p = <X, k> ~ N(m kappa, sd^2), q = <X, v> with E[q | p] =
m theta + rho (p - m kappa) and Var[q | p] = sd^2 (1 - rho^2) (<k, v> = rho, |k| = |v| = 1). A weight exp(-a p^2)
tilts p: E[exp(-a p^2) g(p)] = exp(-a mu^2 / t) / sqrt(t) E[g(p')], t = 1 + 2 a sd^2, p' ~ N(mu / t, sd^2 / t).
For p' ~ N(m', s'^2): E erf(lam p') = erf(lam m' / r), E[p' erf(lam p')] = m' E erf(lam p') + s'^2 lam erf'(lam m' / r) / r,
r = sqrt(1 + 2 lam^2 s'^2) (Stein's lemma). The remaining moments (E[A^j F], j >= 1, with erf^3 and erf^4) have no
such form and are checked against Monte Carlo (tests/test_highdim_effective.py)."""

import numpy as np
import pytest
from scipy.special import erf

from theory.highdim import frame_coordinates
from theory.highdim.token_moments import token_moments
from theory.zeta import zeta

EPS = np.finfo(float).eps
STATES = [(0.3, 0.2, 0.1, -0.2, 0.15), (0.6, -0.4, 0.2, 0.1, -0.3), (0.9, 0.95, 0.0, 0.0, 0.0)]
TOKENS = [dict(mean=np.sqrt(50.0), sd=np.sqrt(0.5), informative=True), dict(mean=0.0, sd=1.0, informative=False)]


def _erf_prime(x):
    return 2.0 / np.sqrt(np.pi) * np.exp(-x * x)


def _tilt(mu, sd, a):
    """(factor, mean, sd) of exp(-a p^2) N(mu, sd^2) = factor N(mean, sd^2)."""
    t = 1.0 + 2.0 * a * sd * sd
    return np.exp(-a * mu * mu / t) / np.sqrt(t), mu / t, sd / np.sqrt(t)


def closed_form(state, lam, *, mean, sd):
    """E[u^2], E[w^2], E[w u] of one token at ``state`` (module docstring)."""
    kappa, _, theta, _, rho = state
    mu_p, mu_q = mean * kappa, mean * theta
    uu = zeta(lam * mu_p, lam * sd)
    # E[w^2] = lam^2 (4/pi) E[exp(-2 lam^2 p^2) E[q^2 | p]]
    f, m, s = _tilt(mu_p, sd, 2.0 * lam * lam)
    q_mean = mu_q + rho * (m - mu_p)
    ww = lam * lam * 4.0 / np.pi * f * (q_mean**2 + rho * rho * s * s + sd * sd * (1.0 - rho * rho))
    # E[w u] = lam (2/sqrt(pi)) E[exp(-lam^2 p^2) erf(lam p) E[q | p]]
    f, m, s = _tilt(mu_p, sd, lam * lam)
    r = np.sqrt(1.0 + 2.0 * lam * lam * s * s)
    e_erf = erf(lam * m / r)
    e_p_erf = m * e_erf + s * s * lam * _erf_prime(lam * m / r) / r
    wu = lam * 2.0 / np.sqrt(np.pi) * f * ((mu_q - rho * mu_p) * e_erf + rho * e_p_erf)
    return np.array([uu, ww, wu])


@pytest.mark.parametrize("lam", [0.1, 0.5, 2.0])
@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("state", STATES)
def test_one_token_moments_are_the_closed_forms(state, token, lam):
    """Quadrature (step 0.2) against the closed forms. Tolerance: the quadrature's own error, estimated by its change
    at step 0.1 (the trapezoid rule converges faster than any power of the step), plus round-off: sums over ~1e4
    nodes of products of a few factors, 1e3 eps of the moment's scale (as RTOL_QUAD in test_highdim_effective)."""
    k, v = frame_coordinates(*state)
    moments = [token_moments(k, v, lam, step=h, **token) for h in (0.2, 0.1)]
    quad, fine = (np.array([m["uu"][0], m["ww"][0], m["wu"][0]]) for m in moments)
    expected = closed_form(state, lam, mean=token["mean"], sd=token["sd"])
    tol = np.abs(quad - fine) + 1e3 * EPS * np.maximum(np.abs(expected), lam * lam)
    assert np.all(np.abs(quad - expected) <= tol), (quad, expected, tol)


def test_closed_forms_detect_a_wrong_correlation():
    """Power of the comparison above: the closed forms with rho replaced by 0 (q independent of the gate) miss the
    quadrature's E[w^2] and E[w u] by far more than the tolerance at a state with rho = 0.15."""
    state, lam, token = STATES[0], 0.5, TOKENS[1]
    k, v = frame_coordinates(*state)
    m = token_moments(k, v, lam, **token)
    quad = np.array([m["uu"][0], m["ww"][0], m["wu"][0]])
    wrong = closed_form((*state[:4], 0.0), lam, mean=token["mean"], sd=token["sd"])
    assert np.all(np.abs(quad - wrong)[1:] > 1e6 * 1e3 * EPS * np.abs(quad[1:]))
