"""Gaussian token expectations by panelled Gauss-Legendre quadrature (docs/math/nonlinearities.md#quadrature).

A token's projections (a, b, y) = (<X, k>, <X, v>, <X, v*>) are jointly Gaussian with mean mu and
covariance C (informative token: mu = s (kappa, theta, 0), C = gamma^2 G; noise token: mu = 0,
C = G restricted to (a, b), y absent; G the Gram matrix of (k, v, v*)). Conditioning on
a = mu_a + sd_a z leaves (b, y) Gaussian with means affine in z and a constant covariance, so

    E[f(a) b^p y^q] = int phi(z) f(mu_a + sd_a z) P_pq(z) dz,

P_pq a polynomial of degree p + q (exact for p + q <= 3: central moments of order 1 and 3 vanish).
The integrals over z in [-Z_MAX, Z_MAX] are composite Gauss-Legendre rules on panels of width
<= 1 in z, refined by breakpoints where f changes (given by the caller in z): they are computed
as the power moments int phi f z^j, j = 0..3, from which every P_pq follows.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial import polynomial as P

__all__ = ["TokenLaw", "informative_law", "noise_law", "panel_nodes", "panel_rule", "Z_MAX"]

# phi(10) = 7.7e-23: the neglected tails of int phi |z|^j f, j <= 3, |f| <= 1, are below
# (z^2 + 2) phi(z) < 1e-20 at z = 10.
Z_MAX = 10.0
_BASE_BREAKS = np.arange(-Z_MAX, Z_MAX + 0.5, 1.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@functools.lru_cache(maxsize=None)
def _legendre(n):
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


def panel_nodes(breaks, n):
    """Nodes and weights (without phi(z)) of n-point Gauss-Legendre on each panel between sorted
    breakpoints ``breaks`` (..., m): arrays of shape (..., (m - 1) n). Zero-width panels get
    zero weight."""
    x, w = _legendre(n)
    lo, hi = breaks[..., :-1, None], breaks[..., 1:, None]
    half = 0.5 * (hi - lo)
    z = (lo + half * (x + 1.0)).reshape(*breaks.shape[:-1], -1)
    return z, (half * w).reshape(z.shape)


def panel_rule(breaks, n):
    """``panel_nodes`` with the weights times phi(z)."""
    z, w = panel_nodes(breaks, n)
    return z, w * (_INV_SQRT_2PI * np.exp(-0.5 * z * z))


def z_breaks(extra_z):
    """Sorted breakpoints: the unit grid on [-Z_MAX, Z_MAX] and ``extra_z`` (..., k) clipped to it."""
    extra = np.clip(np.asarray(extra_z, dtype=float), -Z_MAX, Z_MAX)
    base = np.broadcast_to(_BASE_BREAKS, (*extra.shape[:-1], _BASE_BREAKS.size))
    return np.sort(np.concatenate([base, extra], axis=-1), axis=-1)


class TokenLaw:
    """The law of one token's (a, b, y) given as a = mu_a + sd_a z with (b, y) | z Gaussian:
    E[b | z] = alpha_b + beta_b z, E[y | z] = alpha_y + beta_y z, Cov[(b, y) | z] = cond_cov."""

    def __init__(self, mean, cov):
        mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
        self.mu_a, self.sd_a = float(mean[0]), math.sqrt(cov[0, 0])
        slopes = cov[1:, 0] / self.sd_a
        self.alpha, self.beta = mean[1:], slopes
        self.cond_cov = cov[1:, 1:] - np.outer(slopes, slopes)
        self._polys = {}

    def poly(self, p, q=0):
        """Coefficients (in z, ascending, length 4) of E[b^p y^q | z]; needs p + q <= 3."""
        if (p, q) not in self._polys:
            self._polys[p, q] = self._poly(p, q)
        return self._polys[p, q]

    def _poly(self, p, q):
        if p + q > 3 or p < 0 or q < 0:
            raise ValueError(f"(p, q)=({p}, {q}) is not allowed: need p, q >= 0 and p + q <= 3")
        mb, my = [self.alpha[0], self.beta[0]], [self.alpha[-1], self.beta[-1]]
        if q > 0 and len(self.alpha) < 2:
            raise ValueError("q > 0 is not allowed for a noise token (y is the informative token's)")
        c = self.cond_cov
        central = {(0, 0): 1.0, (2, 0): c[0, 0], (1, 1): c[0, -1], (0, 2): c[-1, -1]}
        out = np.zeros(4)
        for (i, j), mom in central.items():
            if i <= p and j <= q:
                term = P.polymul(P.polypow(mb, p - i), P.polypow(my, q - j))
                out[:len(term)] += math.comb(p, i) * math.comb(q, j) * mom * term
        return out


def informative_law(s, gamma, kappa, nu, theta, eta, rho) -> TokenLaw:
    """(a, b, y) of the informative token: N(s (kappa, theta, 0), gamma^2 G(k, v, v*))."""
    G = np.array([[1.0, rho, eta], [rho, 1.0, nu], [eta, nu, 1.0]])
    return TokenLaw([s * kappa, s * theta, 0.0], gamma * gamma * G)


def noise_law(rho) -> TokenLaw:
    """(a, b) of a noise token: N(0, [[1, rho], [rho, 1]])."""
    return TokenLaw([0.0, 0.0], np.array([[1.0, rho], [rho, 1.0]]))
