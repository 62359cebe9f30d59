"""One-token moments of the per-sample gradient features, by quadrature
(docs/math/highdim.md#quadrature, docs/math/highdim.md#the-directions-the-features-read).

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

``token_moments`` integrates only the r directions of (z2, z3, z4) that the scalars q and <X, v*> read
(r = 1 for a noise token, r <= 2 for the informative one): along the other 3 - r, t_perp, the features
enter only through the vector X, linearly in each factor of a product, so their integral is the
correction E[A^j w^2] E E^T to E[A^j a a^T] (and likewise for b b^T, a b^T), E the 4 x (3 - r) map of
t_perp into X (docs/math/highdim.md#the-directions-the-features-read): 4 r Gauss-Hermite nodes per z1 instead
of 64, the same z1 rule. ``token_moments_reference`` keeps the 4-dim product rule.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import erf

__all__ = ["frame_coordinates", "token_moments", "token_moments_reference"]

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
_EYE4 = np.eye(4)
_EYE4.flags.writeable = False
_Z1_RANGE = 10.0
_N_HERMITE = 4  # exact for polynomials of degree <= 7
# 33 x 11 x 512 multiply-adds per product: below OpenBLAS's threshold for a second thread
_CHUNK = 512


def frame_coordinates(kappa, nu, theta, eta, rho):
    """k = (kappa, eta, k3, 0) and v = (theta, nu, v3, v4) in the frame (k*, v*, f3, f4)
    (Cholesky form, as ``numerics.sgd.reduced.cholesky_coordinates``)."""
    k3 = np.sqrt(max(1.0 - kappa**2 - eta**2, 0.0))
    v3 = (rho - kappa * theta - eta * nu) / k3 if k3 > 1e-12 else 0.0
    v4 = np.sqrt(max(1.0 - theta**2 - nu**2 - v3**2, 0.0))
    return np.array([kappa, eta, k3, 0.0]), np.array([theta, nu, v3, v4])


@functools.lru_cache(maxsize=16)
def _grid(step, n_hermite_dims):
    """Nodes (1 + n_hermite_dims, N), one row per coordinate (z1 first, trapezoid step ``step``; the
    others 4-point Gauss-Hermite), and weights (N,) of the standard Gaussian in 1 + n_hermite_dims dimensions."""
    t = np.arange(-_Z1_RANGE, _Z1_RANGE + step / 2, step)
    w1 = step * np.exp(-t * t / 2.0) / np.sqrt(2.0 * np.pi)
    x, wx = hermegauss(_N_HERMITE)
    wx = wx / np.sqrt(2.0 * np.pi)
    mesh = np.meshgrid(t, *([x] * n_hermite_dims), indexing="ij")
    weights = w1
    for _ in range(n_hermite_dims):
        weights = np.multiply.outer(weights, wx)
    return np.stack([m.ravel() for m in mesh]), weights.ravel()


def _basis(k):
    """Orthonormal 4x4 matrix whose first column is k."""
    q, _ = np.linalg.qr(np.column_stack([k, np.eye(4)]))
    return q * np.sign(q[:, 0] @ k)


def _node_moments(k, v, lam, frame, mean, step, informative):
    """The moments of ``token_moments`` (without the t_perp correction) for X = mean e1 + frame @ z,
    z ~ N(0, I) on the product rule of ``_grid`` (frame's first column sd k, the others orthogonal to k), as
    arrays over j = 0, 1, 2."""
    # the gates vary on the scale 1/(lambda sd) of z1 (sd = |frame[:, 0]|, as np.linalg.norm: sqrt(x . x) of the
    # contiguous copy, whose dot product sums in another order than the strided column's): the step is taken in that unit
    sd_k = frame[:, 0].ravel(order="K")
    Z, W = _grid(step / max(1.0, lam * math.sqrt(sd_k.dot(sd_k))), frame.shape[1] - 1)
    X = np.einsum("ij,jn->in", frame, Z)
    X[0] += mean
    p, q = np.einsum("i,in->n", k, X), np.einsum("i,in->n", v, X)
    # one Gram product: G[j] = E[A^j phi phi^T] for phi = (1, a (4), b (4), w, u), its rows written in place
    phi = np.empty((11, W.size))
    phi[0] = 1.0
    lp = lam * p
    u = erf(lp, out=phi[10])
    w = np.multiply(lam * _TWO_OVER_SQRT_PI * np.exp(-lp * lp), q, out=phi[9])
    A = u * q - (X[1] if informative else 0.0)
    np.multiply(w, X - k[:, None] * p, out=phi[1:5])           # a
    np.multiply(u, X - v[:, None] * q, out=phi[5:9])           # b
    powers = np.empty((3, W.size))                             # (W, W A, W A A)
    powers[0] = W
    np.multiply(W, A, out=powers[1])
    np.multiply(powers[1], A, out=powers[2])
    G = _gram((powers[:, None, :] * phi[None]).reshape(33, -1), phi).reshape(3, 11, 11)
    return _views(G)


def _views(G):
    """The dict of ``token_moments`` as views of G (3, 11, 11): "f" = E[A^j (a, b)] (3, 8) and
    "ff" = E[A^j (a, b) (a, b)^T] (3, 8, 8) besides the named blocks."""
    return {"A": G[:, 0, 0], "f": G[:, 0, 1:9], "ff": G[:, 1:9, 1:9], "a": G[:, 0, 1:5], "b": G[:, 0, 5:9],
            "aa": G[:, 1:5, 1:5], "bb": G[:, 5:9, 5:9], "ab": G[:, 1:5, 5:9],
            "ww": G[:, 9, 9], "uu": G[:, 10, 10], "wu": G[:, 9, 10]}


def _gram(left, right):
    """left @ right^T summed over the node axis in chunks of _CHUNK nodes: products small enough that
    BLAS runs them on one thread (no thread pool contending with other processes)."""
    n = left.shape[1]
    return sum(left[:, i:i + _CHUNK] @ right[:, i:i + _CHUNK].T for i in range(0, n, _CHUNK))


def token_moments_reference(k, v, lam, *, mean, sd, informative, step=0.2):
    """``token_moments`` on the 4-dim product rule (module docstring): 64 Gauss-Hermite nodes per z1."""
    out = _node_moments(k, v, lam, sd * _basis(k), mean, step, informative)
    out["s2"] = sd * sd
    return out


def token_moments(k, v, lam, *, mean, sd, informative, step=0.2):
    """Moments E[A^j F], j = 0, 1, 2, of one token's features (module docstring), as a dict:
    "A": [1, E A, E A^2]; "a", "b": three (4,) vectors; "aa", "bb", "ab": E[A^j a a^T] etc. (4, 4);
    "ww", "uu", "wu": E[A^j w^2], E[A^j u^2], E[A^j w u]; "f" = ("a", "b") (3, 8) and "ff" (3, 8, 8) the
    block matrix of "aa", "ab", "bb" (views of one array); "s2": sd^2.

    Given z1, X = mu + sd (I - k k^T)^(1/2) z' (z' ~ N(0, I_3) in the complement of k); the scalars p, q,
    <X, v*> read X along k, v (and v* for the informative token). Q: the QR basis of (k, v[, v*]), first
    column k, its other r columns F span the parts of v (and v*) orthogonal to k; the 3 - r directions left,
    t_perp, enter X alone, X = mu + sd F t + E t_perp with E E^T = sd^2 (I - Q Q^T). Then
    E[A^j a a^T] = E_t[...] + E[A^j w^2] E E^T, E[A^j b b^T] = E_t[...] + E[A^j u^2] M E E^T M^T,
    E[A^j a b^T] = E_t[...] + E[A^j w u] E E^T M^T (M = I - v v^T), the rest E_t alone
    (docs/math/highdim.md#the-directions-the-features-read)."""
    cols = np.empty((4, 3 if informative else 2))
    cols[:, 0], cols[:, 1] = k, v
    if informative:
        cols[:, 2] = _EYE4[1]
    Q, _ = np.linalg.qr(cols)
    Q[:, 0] *= np.sign(Q[:, 0] @ k)
    out = _node_moments(k, v, lam, sd * Q, mean, step, informative)
    EE = sd * sd * (_EYE4 - Q @ Q.T)           # E E^T = sd^2 (I - k k^T - F F^T)
    EM = EE - (EE @ v)[:, None] * v            # E E^T M^T
    MEM = EM - v[:, None] * (v @ EM)           # M E E^T M^T
    # in place on the views of the Gram matrix (its b a^T block too)
    out["aa"] += out["ww"][:, None, None] * EE
    out["bb"] += out["uu"][:, None, None] * MEM
    out["ab"] += out["wu"][:, None, None] * EM
    out["ff"][:, 4:, :4] += out["wu"][:, None, None] * EM.T
    out["s2"] = sd * sd
    return out
