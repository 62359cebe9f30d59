"""Risk and gradient of an element-wise member by 1-D Gaussian quadrature
(docs/math/nonlinearities.md#element-wise-members).

T = sum_l sigma(lambda a_l) b_l. Put the informative token first; the tokens are independent, the
L - 1 noise tokens i.i.d., so with m = E_n[sigma b] (E_i, E_n: expectations over the informative
and a noise token, sigma = sigma(lambda a), sigma' = sigma'(lambda a)):

    R = eps^2 + gamma^2 - 2 E_i[sigma y b] + E_i[sigma^2 b^2] + 2 (L-1) E_i[sigma b] m
        + (L-1) E_n[sigma^2 b^2] + (L-1)(L-2) m^2.

The five partials follow from Price's theorem (derivatives in the mean and in off-diagonal
covariances of a Gaussian are expectations of derivatives of the loss; docs page, same anchor):

    R_nu    = -2 gamma^2 E_i[sigma],      R_eta = -2 gamma^2 lambda E_i[sigma' b],
    R_theta = -2 s (E_i[sigma y] - E_i[sigma^2 b] - (L-1) m E_i[sigma]),
    R_kappa = -2 s lambda (E_i[sigma' y b] - E_i[sigma sigma' b^2] - (L-1) m E_i[sigma' b]),
    R_rho   = 2 lambda gamma^2 (2 E_i[sigma sigma' b] - E_i[sigma' y] + (L-1) m E_i[sigma'])
              + 2 lambda (L-1) (2 E_n[sigma sigma' b] + E_n[sigma'] (E_i[sigma b] + (L-2) m)).

Exact for every finite d, L >= 1 and feasible overlaps, for any sigma with sigma' defined almost
everywhere and no Dirac mass (ReLU included). Each expectation is ``theory.nonlinearity.gauss``'s
panelled Gauss-Legendre rule at orders 10 and 20 per panel; the value is the order-20 one and the
error estimate |Q20 - Q10|, propagated, plus a roundoff floor (see ``_combine``).
"""

from __future__ import annotations

import numpy as np

from .gauss import Z_MAX, informative_law, noise_law, panel_rule, z_breaks

__all__ = ["QUAD_ORDERS", "elementwise_moments", "risk_elementwise", "grad_elementwise"]

QUAD_ORDERS = (10, 20)   # two Gauss-Legendre orders per panel: their difference is the error estimate
_EPS = np.finfo(float).eps
_FUNCS = ("s", "s2", "d", "sd")   # sigma, sigma^2, sigma', sigma sigma'


def _power_moments(member, lam, law, n):
    """int phi(z) f(lambda a(z)) z^j dz for f in _FUNCS and j = 0..3, with the |.| bounds."""
    extra = (np.asarray(member.breakpoints, dtype=float) / lam - law.mu_a) / law.sd_a
    breaks = np.unique(z_breaks(extra[None, :] if extra.size else np.empty((1, 0)))[0])
    z, w = panel_rule(breaks, n)
    u = lam * (law.mu_a + law.sd_a * z)
    sig, dsig = member.sigma(u), member.sigma_prime(u)
    f = np.stack([sig, sig * sig, dsig, sig * dsig])
    zp = np.stack([np.ones_like(z), z, z * z, z * z * z])
    return f @ (w * zp).T, np.abs(f) @ (w * np.abs(zp)).T   # (4 funcs, 4 powers)


def elementwise_moments(member, lam, law, n):
    """E[f b^p y^q] for f in _FUNCS as a callable ``mom(f, p, q) -> (value, bound)``."""
    moments, bounds = _power_moments(member, lam, law, n)
    index = {name: i for i, name in enumerate(_FUNCS)}

    def mom(f, p=0, q=0):
        c = law.poly(p, q)
        return float(moments[index[f]] @ c), float(bounds[index[f]] @ np.abs(c))
    return mom


def _laws(problem, overlaps):
    d, gamma = float(problem.d), float(problem.gamma)
    kappa, nu, theta, eta, rho = (float(x) for x in overlaps.as_tuple())
    s = np.sqrt(d / 2.0)
    return s, informative_law(s, gamma, kappa, nu, theta, eta, rho), noise_law(rho)


def _combine(terms, mi, mn):
    """Evaluate sum_i c_i prod_j E(...) given by ``terms(Ei, En) -> [(c_i, product_i)]`` at both
    orders. The error estimate is |Q20 - Q10| plus a floor: 64 ulps of sum_i |c_i| times the
    products of the |.| bounds (each moment is a sum rounded to an ulp of its bound, a term is a
    product of at most three of them) and the 1e-20 relative truncation of z to [-Z_MAX, Z_MAX].
    Given the moments of one order only: its value, error nan."""
    vals = [sum(c * x for c, x in terms(lambda *a, e=ei: e(*a)[0], lambda *a, e=en: e(*a)[0]))
            for ei, en in zip(mi, mn)]
    if len(vals) == 1:
        return vals[0], np.nan
    bound = sum(abs(c) * x for c, x in terms(lambda *a: mi[-1](*a)[1], lambda *a: mn[-1](*a)[1]))
    return vals[-1], abs(vals[-1] - vals[0]) + (64.0 * _EPS + 1e-20) * bound


def _moments_both_orders(member, problem, overlaps, orders=QUAD_ORDERS):
    s, li, ln = _laws(problem, overlaps)
    lam = float(problem.lam)
    mi = [elementwise_moments(member, lam, li, n) for n in orders]
    mn = [elementwise_moments(member, lam, ln, n) for n in orders]
    return s, mi, mn


def risk_elementwise(member, problem, overlaps, with_error=True):
    """(R, abserr) by quadrature for an element-wise member (module docstring). Scalars only.
    Without ``with_error``: the order-20 rule alone, the same value to the bit, abserr nan."""
    s, mi, mn = _moments_both_orders(member, problem, overlaps, QUAD_ORDERS if with_error else QUAD_ORDERS[-1:])
    L, gamma, eps = float(problem.L), float(problem.gamma), float(problem.eps)

    def terms(Ei, En):
        m = En("s", 1)
        return [(1.0, eps * eps + gamma * gamma), (-2.0, Ei("s", 1, 1)), (1.0, Ei("s2", 2)),
                (2.0 * (L - 1), Ei("s", 1) * m), (L - 1, En("s2", 2)), ((L - 1) * (L - 2), m * m)]
    return _combine(terms, mi, mn)


def _grad_terms(s, L, g2, lam):
    """The five partials of the module docstring as term lists for ``_combine``."""
    def r_kappa(Ei, En):
        c = -2.0 * s * lam
        return [(c, Ei("d", 1, 1)), (-c, Ei("sd", 2)), (-c * (L - 1), En("s", 1) * Ei("d", 1))]

    def r_nu(Ei, En):
        return [(-2.0 * g2, Ei("s"))]

    def r_theta(Ei, En):
        c = -2.0 * s
        return [(c, Ei("s", 0, 1)), (-c, Ei("s2", 1)), (-c * (L - 1), En("s", 1) * Ei("s"))]

    def r_eta(Ei, En):
        return [(-2.0 * g2 * lam, Ei("d", 1))]

    def r_rho(Ei, En):
        m, ci, cn = En("s", 1), 2.0 * lam * g2, 2.0 * lam * (L - 1)
        return [(2.0 * ci, Ei("sd", 1)), (-ci, Ei("d", 0, 1)), (ci * (L - 1), m * Ei("d")),
                (2.0 * cn, En("sd", 1)), (cn, En("d") * Ei("s", 1)), (cn * (L - 2), En("d") * m)]
    return dict(kappa=r_kappa, nu=r_nu, theta=r_theta, eta=r_eta, rho=r_rho)


def grad_elementwise(member, problem, overlaps):
    """{name: (R_name, abserr)} for the five overlaps by quadrature (module docstring)."""
    s, mi, mn = _moments_both_orders(member, problem, overlaps)
    L, gamma, lam = float(problem.L), float(problem.gamma), float(problem.lam)
    return {name: _combine(t, mi, mn) for name, t in _grad_terms(s, L, gamma * gamma, lam).items()}
