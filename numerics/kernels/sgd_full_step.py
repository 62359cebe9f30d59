"""Compiled loop of the full d-dimensional online-SGD simulator (``numerics.sgd.full.online_sgd_full``).

One run through n steps, each in the notation of ``numerics.sgd.full``'s module docstring: the B L d token
coordinates and the B target noises are drawn from the run's own ``numpy.random.Generator`` (its SFC64 state,
``sfc64.sfc64_normal``: NumPy's numbers, in the order of ``numerics.sgd.full.sample_batch``), each token's
projections p = <X, k>, q = <X, v> summed once its coordinates are drawn (the informative token's target
<X_0, v*> too), then the gates erf(lambda p), the residuals, the coefficients (c, e), the gradients
(g_k, g_v) and the projected, normalised step of both vectors. erf is ``erf_poly`` (~1 ulp); the rest is
the reference's arithmetic in its order except for the summation order of its sums (bound and test in
``docs/math/kernels.md#full-sgd``).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from .erf_poly import erf_poly
from .sfc64 import sfc64_normal

__all__ = ["sgd_full_kernel"]

_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))


@jit(inline=True)
def _draw_batch(S, k, v, v_star, shift, gamma, eps, B, L, X, PQ, y):
    """The step's numbers into X (B L, d) in the reference's order (token by token, then the B noises),
    the informative token scaled by gamma and shifted by ``shift`` = sqrt(d/2) k*; PQ (2, B L) = (p, q)
    and y (B,) = <X_b0, v*> + eps xi_b."""
    d = k.size
    s0, s1, s2, s3 = S[0], S[1], S[2], S[3]
    for i in range(B * L):
        # The token's coordinates first, its sums after, each in the order j = 0..d-1 (the same
        # numbers as summing while drawing): the draw loop then carries no chain of dependent
        # additions, which cost ~10% of the kernel at d = 20 and 80 (docs/math/kernels.md#full-sgd).
        if i % L == 0:
            for j in range(d):
                x, s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
                X[i, j] = x * gamma + shift[j]
        else:
            for j in range(d):
                x, s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
                X[i, j] = x
        p = q = 0.0
        for j in range(d):
            p += k[j] * X[i, j]
            q += v[j] * X[i, j]
        PQ[0, i], PQ[1, i] = p, q
        if i % L == 0:
            t = 0.0
            for j in range(d):
                t += X[i, j] * v_star[j]
            y[i // L] = t
    for b in range(B):
        xi, s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
        y[b] = y[b] + eps * xi
    S[0], S[1], S[2], S[3] = s0, s1, s2, s3


@jit(inline=True)
def _coefficients(PQ, y, lam, B, L, table, CE):
    """CE (2, B L) = (c, e): with g = erf(lambda p), r_b = sum_l g q - y_b,
    e = ((2/B) r) g, c = ((2/B) r) (lambda 2/sqrt(pi)) exp(-(lambda p)^2) q (the reference's order)."""
    scale = lam * _TWO_OVER_SQRT_PI
    for b in range(B):
        T = 0.0
        for i in range(b * L, (b + 1) * L):
            CE[1, i] = erf_poly(lam * PQ[0, i], table)
            T += CE[1, i] * PQ[1, i]
        rb = (2.0 / B) * (T - y[b])
        rs = rb * scale
        for i in range(b * L, (b + 1) * L):
            lp = lam * PQ[0, i]
            CE[0, i] = rs * math.exp(-(lp * lp)) * PQ[1, i]
            CE[1, i] = rb * CE[1, i]


@jit(inline=True)
def _sphere_step(x, g, alpha):
    """x <- normalise(x - alpha (g - <x, g> x)) in place (``numerics.sgd.full.sphere_step``)."""
    s = 0.0
    for j in range(x.size):
        s += x[j] * g[j]
    n2 = 0.0
    for j in range(x.size):
        g[j] = x[j] - alpha * (g[j] - s * x[j])
        n2 += g[j] * g[j]
    norm = math.sqrt(n2)
    for j in range(x.size):
        x[j] = g[j] / norm


@jit
def sgd_full_kernel(k, v, v_star, shift, S, gamma, eps, lam, alpha, B, L, snap_rows, snaps, table):
    """Advance one run's (k, v) (each (d,), in place) through the len(lam) steps, drawing its numbers.

    v_star (d,): the target direction; shift (d,): sqrt(d/2) k*, the informative token's mean; S: the
    SFC64 state of the run's training Generator (``sfc64.sfc64_state``; the kernel draws NumPy's
    ``standard_normal`` stream from it and advances it); lam (n,): lambda of each step; snap_rows (n + 1,) int: the row of ``snaps`` (n_snap, 2, d)
    that receives (k, v) after j steps (j = 0..n), or -1; table: ``erf_poly.erf_table()``.
    """
    d, n = k.size, lam.size
    X = np.empty((B * L, d))
    PQ, CE, y = np.empty((2, B * L)), np.empty((2, B * L)), np.empty(B)
    gk, gv = np.empty(d), np.empty(d)
    for j in range(n + 1):
        row = snap_rows[j]
        if row >= 0:
            snaps[row, 0] = k
            snaps[row, 1] = v
        if j == n:
            break
        _draw_batch(S, k, v, v_star, shift, gamma, eps, B, L, X, PQ, y)
        _coefficients(PQ, y, lam[j], B, L, table, CE)
        gk[:] = 0.0
        gv[:] = 0.0
        for i in range(B * L):
            c, e = CE[0, i], CE[1, i]
            for m in range(d):
                gk[m] += c * X[i, m]
                gv[m] += e * X[i, m]
        _sphere_step(k, gk, alpha)
        _sphere_step(v, gv, alpha)
