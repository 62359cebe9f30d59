"""Compiled step of the exact reduced online-SGD simulator (``numerics.sgd.reduced``).

One step of one run, in the notation of ``numerics.sgd.reduced``'s module docstring (steps 2-4):
the projections p, q of the B L tokens in the frame F, the gate erf(lambda p) (or the softmax
weights of ``theory.nonlinearity``'s softmax member), the residuals and
the gradient coefficients (c, e); the Cholesky factor of their 2x2 covariance and the Bartlett
pair (u5; w5, w6); the projected step in the 6-dim frame, normalisation and the Gram-Schmidt step
back to Cholesky coordinates. The tokens in F are drawn here from the run's own
``numpy.random.Generator`` (numba's ``standard_normal``: NumPy's numbers, in the reference's order);
the targets' noise and the Bartlett variables are drawn by NumPy and passed in, as on the reference
route. erf is ``erf_poly`` (piecewise polynomials, ~1 ulp); the rest is the reference's arithmetic
in its order except for the summation order of its short sums (bound and test in
``docs/math/kernels.md#reduced-sgd``).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from .erf_poly import erf_poly

__all__ = ["ERF", "SOFTMAX", "sgd_reduced_kernel"]

_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))
_TINY = float(np.finfo(float).tiny)


ERF, SOFTMAX = 0, 1  # the members the kernel computes (``member`` argument)


@jit
def _softmax_coefficients(PQ, y, lam, two_over_b, L, CE):
    """Softmax member (``theory.nonlinearity``): w = softmax(lambda p) over each sequence's L tokens
    (shifted by its maximum), T = sum w q, c = r lambda w (q - T), e = r w, r = (2/B)(T - y)."""
    B = PQ.shape[1] // L
    for b in range(B):
        lo, hi = b * L, (b + 1) * L
        zmax = lam * PQ[0, lo]
        for l in range(lo + 1, hi):
            zmax = max(zmax, lam * PQ[0, l])
        total = 0.0
        for l in range(lo, hi):
            CE[1, l] = math.exp(lam * PQ[0, l] - zmax)
            total += CE[1, l]
        T = 0.0
        for l in range(lo, hi):
            CE[1, l] = CE[1, l] / total
            T += CE[1, l] * PQ[1, l]
        rb = (T - y[b]) * two_over_b
        for l in range(lo, hi):
            CE[0, l] = rb * (lam * CE[1, l] * (PQ[1, l] - T))
            CE[1, l] = rb * CE[1, l]


@jit
def _erf_coefficients(PQ, y, lam, two_over_b, L, CE):
    """erf member (the paper's gate): with g = erf(lambda p) and r = (2/B)(sum g q - y) per sequence,
    c = r lambda erf'(lambda p) q, e = r g (erf' = (2/sqrt(pi)) exp(-x^2)); on entry CE[1] = g and
    CE[0] = exp(-(lambda p)^2) (``_draw_step``)."""
    scale = lam * _TWO_OVER_SQRT_PI
    for b in range(PQ.shape[1] // L):
        acc = 0.0
        for l in range(b * L, (b + 1) * L):
            acc += CE[1, l] * PQ[1, l]
        rb = (acc - y[b]) * two_over_b
        rs = rb * scale
        for l in range(b * L, (b + 1) * L):
            CE[1, l] = rb * CE[1, l]
            CE[0, l] = rs * (CE[0, l] * PQ[1, l])


@jit
def _draw_step(gen, gamma, mean, L, noise, KV, lam, member, table, x, y, PQ, CE):
    """The step's tokens in F, x (4, B L), their projections PQ = KV x (2, B L) and the targets y (B,)
    from the run's token generator: 4 B L standard normals in the reference's order
    (``numerics.sgd.reduced._draw_chunk``: C order of (4, B L)), the informative tokens (b L) times
    gamma, mean added to their first coordinate, y_b = x[1, b L] + noise_b (noise = eps xi, drawn by
    NumPy). Token i is projected as soon as its last coordinate is drawn and, for the erf member, its
    gate erf(lambda p) and exp(-(lambda p)^2) go to CE[1, i], CE[0, i] (``_erf_coefficients``), so
    that this arithmetic overlaps the generator's sequential work."""
    BL, b, b_next = x.shape[1], 0, 0
    k0, k1, k2, k3, v0, v1, v2, v3 = KV[0, 0], KV[0, 1], KV[0, 2], KV[0, 3], KV[1, 0], KV[1, 1], KV[1, 2], KV[1, 3]
    for c in range(3):
        for i in range(BL):
            x[c, i] = gen.standard_normal()
    for i in range(BL):
        x[3, i] = gen.standard_normal()
        if i == b_next:  # the informative token of sequence b
            for c in range(4):
                x[c, i] = x[c, i] * gamma
            x[0, i] = x[0, i] + mean
            y[b] = x[1, i] + noise[b]
            b, b_next = b + 1, b_next + L
        x0, x1, x2, x3 = x[0, i], x[1, i], x[2, i], x[3, i]
        p = k0 * x0 + k1 * x1 + k2 * x2 + k3 * x3
        PQ[0, i], PQ[1, i] = p, v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3
        if member == ERF:
            lp = lam * p
            CE[1, i] = erf_poly(lp, table)
            CE[0, i] = math.exp(-(lp * lp))  # erf'(lp) sqrt(pi) / 2, scaled in _erf_coefficients


@jit
def _sums(x, PQ, CE, scale2, F):
    """One pass over the B L tokens: the 2x2 covariance (s00, s01, s11) of (u, w), the inner
    products A = (<c, p>, <e, q>) and, into F[:, :4], the in-frame gradient parts sum c x, sum e x
    (accumulated in locals, token by token)."""
    s00 = s01 = s11 = A0 = A1 = 0.0
    g0 = g1 = g2 = g3 = h0 = h1 = h2 = h3 = 0.0
    for i in range(x.shape[1]):
        ci, ei = CE[0, i], CE[1, i]
        c0, c1 = ci * scale2[i], ei * scale2[i]
        s00 += c0 * ci
        s01 += c0 * ei
        s11 += c1 * ei
        A0 += ci * PQ[0, i]
        A1 += ei * PQ[1, i]
        x0, x1, x2, x3 = x[0, i], x[1, i], x[2, i], x[3, i]
        g0, g1, g2, g3 = g0 + ci * x0, g1 + ci * x1, g2 + ci * x2, g3 + ci * x3
        h0, h1, h2, h3 = h0 + ei * x0, h1 + ei * x1, h2 + ei * x2, h3 + ei * x3
    F[0, 0], F[0, 1], F[0, 2], F[0, 3] = g0, g1, g2, g3
    F[1, 0], F[1, 1], F[1, 2], F[1, 3] = h0, h1, h2, h3
    return s00, s01, s11, A0, A1


@jit
def _step(KV, x, y, lam, alpha, two_over_b, L, scale2, u_a11, u_n21, u_a22, PQ, CE, F, member, table):
    """One step on KV (2, 4) in place, given the tokens x and their projections PQ = KV x (``_draw_step``);
    u_* = -alpha (a11, n21, a22) of this step; CE (2, B L) and F (2, 6) are work space."""
    if member == SOFTMAX:
        _softmax_coefficients(PQ, y, lam, two_over_b, L, CE)
    else:
        _erf_coefficients(PQ, y, lam, two_over_b, L, CE)
    s00, s01, s11, A0, A1 = _sums(x, PQ, CE, scale2, F)
    l11 = math.sqrt(s00)
    l21 = s01 / max(l11, _TINY)  # |S01| <= l11 sqrt(S11): l11 = 0 forces S01 = 0
    l22 = math.sqrt(max(s11 - l21 * l21, 0.0))
    u5, w5, w6 = l11 * u_a11, l21 * u_a11 + l22 * u_n21, l22 * u_a22
    A0, A1 = A0 * alpha + 1.0, A1 * alpha + 1.0
    for c in range(4):
        F[0, c] = KV[0, c] * A0 - F[0, c] * alpha
        F[1, c] = KV[1, c] * A1 - F[1, c] * alpha
    F[0, 4], F[0, 5], F[1, 4], F[1, 5] = u5, 0.0, w5, w6
    for a in range(2):
        n2 = 0.0
        for c in range(6):
            n2 += F[a, c] * F[a, c]
        norm = math.sqrt(n2)
        for c in range(6):
            F[a, c] = F[a, c] / norm
    m0 = m1 = 0.0
    for c in range(2, 6):
        m0 += F[0, c] * F[0, c]
        m1 += F[0, c] * F[1, c]
    k_rest = math.sqrt(m0)
    beta = m1 / max(m0, _TINY)  # M0 = 0 forces M1 = 0
    res2 = 0.0
    for c in range(2, 6):
        e = F[1, c] - beta * F[0, c]
        res2 += e * e
    KV[0, 0], KV[0, 1], KV[0, 2], KV[0, 3] = F[0, 0], F[0, 1], k_rest, 0.0
    KV[1, 0], KV[1, 1], KV[1, 2], KV[1, 3] = F[1, 0], F[1, 1], beta * k_rest, math.sqrt(res2)


@jit
def sgd_reduced_kernel(KV, gen, gamma, mean, noise, u_a11, u_n21, u_a22, lam, alpha, two_over_b, L,
                       scale2, snap_rows, snaps, member, table):
    """Advance one run through the n steps of a chunk, in place, drawing its tokens.

    KV (2, 4): Cholesky coordinates; gen: the run's token Generator (numba draws the same stream as
    NumPy's ``standard_normal`` from it, advancing its state); gamma, mean: the informative token's
    spread and mean sqrt(d/2); noise (n, B): eps xi of the targets; u_* (n,): -alpha times the
    Bartlett variables; lam (n,): lambda of each step; snap_rows (n,) int: the row of ``snaps``
    (n_snap, 2, 4) that receives KV after step j, or -1; member: ERF (the paper's gate) or SOFTMAX
    (``theory.nonlinearity``'s softmax member); table: ``erf_poly.erf_table()``.
    """
    n, B = noise.shape
    BL = B * L
    x = np.empty((4, BL))
    y = np.empty(B)
    PQ = np.empty((2, BL))
    CE = np.empty((2, BL))
    F = np.empty((2, 6))
    for j in range(n):
        _draw_step(gen, gamma, mean, L, noise[j], KV, lam[j], member, table, x, y, PQ, CE)
        _step(KV, x, y, lam[j], alpha, two_over_b, L, scale2, u_a11[j], u_n21[j], u_a22[j],
              PQ, CE, F, member, table)
        row = snap_rows[j]
        if row >= 0:
            snaps[row] = KV
