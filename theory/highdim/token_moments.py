"""One-token moments of the per-sample gradient features, by quadrature
(docs/math/highdim.md#quadrature).

A token X^F = m k* + sd Z in the 4-dim frame (k*, v*, f3, f4) (m = s, sd = gamma for the
informative token, m = 0, sd = 1 otherwise; Z ~ N(0, I_4)). Rotate Z so that its first coordinate
z1 lies along k: p = <X, k> = m kappa + sd z1 and every gate erf(lambda p), erf'(lambda p) depends
on z1 only. Given z1 the features A = u q (- <X, v*> for the informative token), w = lambda erf'(lambda p) q,
u = erf(lambda p), a = w (X^F - p k), b = u (X^F - q v) are polynomials of degree <= 2 in (z2, z3, z4),
and the moments needed (``theory.highdim.moments``) are polynomials of degree <= 6: a 4-point
Gauss-Hermite rule per coordinate integrates them exactly. Along z1 the trapezoid rule with step h
on [-10, 10] with h = step / max(1, lambda sd): the integrands are entire and vary on the
scale 1/(lambda sd) of z1 (erf'(lambda p)^2 is a Gaussian of width 1/(2 lambda sd)), and the
trapezoid rule's error on such integrands falls like exp(-const / h); at step = 0.2 the change
from step 0.1 is <= 1e-13 relative for lambda in [0.1, 8] (``GradientMoments.abserr`` reports
it). The tails beyond |z1| = 10 weigh < 1e-22.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import erf

__all__ = ["frame_coordinates", "token_moments"]

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
_Z1_RANGE = 10.0
_N_HERMITE = 4  # exact for polynomials of degree <= 7


def frame_coordinates(kappa, nu, theta, eta, rho):
    """k = (kappa, eta, k3, 0) and v = (theta, nu, v3, v4) in the frame (k*, v*, f3, f4)
    (Cholesky form, as ``numerics.sgd.reduced.cholesky_coordinates``)."""
    k3 = np.sqrt(max(1.0 - kappa**2 - eta**2, 0.0))
    v3 = (rho - kappa * theta - eta * nu) / k3 if k3 > 1e-12 else 0.0
    v4 = np.sqrt(max(1.0 - theta**2 - nu**2 - v3**2, 0.0))
    return np.array([kappa, eta, k3, 0.0]), np.array([theta, nu, v3, v4])


@functools.lru_cache(maxsize=8)
def _grid(step):
    """Nodes (4, N), one row per coordinate, and weights (N,) of the standard Gaussian in 4 dimensions."""
    t = np.arange(-_Z1_RANGE, _Z1_RANGE + step / 2, step)
    w1 = step * np.exp(-t * t / 2.0) / np.sqrt(2.0 * np.pi)
    x, wx = hermegauss(_N_HERMITE)
    wx = wx / np.sqrt(2.0 * np.pi)
    mesh = np.meshgrid(t, x, x, x, indexing="ij")
    weights = np.einsum("i,j,k,l->ijkl", w1, wx, wx, wx).ravel()
    return np.stack([m.ravel() for m in mesh]), weights


def _basis(k):
    """Orthonormal 4x4 matrix whose first column is k."""
    q, _ = np.linalg.qr(np.column_stack([k, np.eye(4)]))
    return q * np.sign(q[:, 0] @ k)


def token_moments(k, v, lam, *, mean, sd, informative, step=0.2):
    """Moments E[A^j F], j = 0, 1, 2, of one token's features (module docstring), as a dict:
    "A": [1, E A, E A^2]; "a", "b": three (4,) vectors; "aa", "bb", "ab": E[A^j a a^T] etc. (4, 4);
    "ww", "uu", "wu": E[A^j w^2], E[A^j u^2], E[A^j w u]; "s2": sd^2."""
    # the gates vary on the scale 1/(lambda sd) of z1: the step is taken in that unit
    Z, W = _grid(step / max(1.0, lam * sd))
    # einsum, not BLAS: small products, and no thread pool contending with other processes; the
    # arrays are feature-major (4, N), where a two-operand einsum over the nodes is ~9x faster than
    # a three-operand one over (N, 4) arrays
    X = np.einsum("ij,jn->in", sd * _basis(k), Z)
    X[0] += mean
    p, q = np.einsum("i,in->n", k, X), np.einsum("i,in->n", v, X)
    lp = lam * p
    u = erf(lp)
    w = lam * _TWO_OVER_SQRT_PI * np.exp(-lp * lp) * q
    A = u * q - (X[1] if informative else 0.0)
    a = w * (X - k[:, None] * p)
    b = u * (X - v[:, None] * q)
    powers = [W, W * A, W * A * A]
    out = {"A": [float(np.sum(P)) for P in powers], "s2": sd * sd}
    for name, vec in (("a", a), ("b", b)):
        out[name] = [np.einsum("in,n->i", vec, P) for P in powers]
    for name, (x, y) in (("aa", (a, a)), ("bb", (b, b)), ("ab", (a, b))):
        out[name] = [np.einsum("in,jn->ij", x * P, y) for P in powers]
    for name, val in (("ww", w * w), ("uu", u * u), ("wu", w * u)):
        out[name] = [float(np.einsum("n,n->", P, val)) for P in powers]
    return out
