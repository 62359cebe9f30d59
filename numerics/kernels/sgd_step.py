"""Compiled step of the exact reduced online-SGD simulator (``numerics.sgd.reduced``).

One step of one run, in the notation of ``numerics.sgd.reduced``'s module docstring (steps 2-4):
the projections p, q of the B L tokens in the frame F, the gate erf(lambda p) (or the softmax
weights of ``theory.nonlinearity``'s softmax member), the residuals and
the gradient coefficients (c, e); the Cholesky factor of their 2x2 covariance and the Bartlett
pair (u5; w5, w6); the projected step in the 6-dim frame, normalisation and the Gram-Schmidt step
back to Cholesky coordinates. The random numbers (tokens in F, targets, Bartlett variables) are
drawn by NumPy exactly as on the reference route and passed in; the kernel only does arithmetic,
in the reference's order except for the summation order of its short sums (bound and test in
``docs/math/kernels.md#reduced-sgd``).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = ["ERF", "SOFTMAX", "sgd_reduced_kernel"]

_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))
_TINY = float(np.finfo(float).tiny)


ERF, SOFTMAX = 0, 1  # the members the kernel computes (``member`` argument)


@jit
def _projections(KV, x, PQ):
    """PQ = KV x (2, BL)."""
    for i in range(x.shape[1]):
        PQ[0, i] = KV[0, 0] * x[0, i] + KV[0, 1] * x[1, i] + KV[0, 2] * x[2, i] + KV[0, 3] * x[3, i]
        PQ[1, i] = KV[1, 0] * x[0, i] + KV[1, 1] * x[1, i] + KV[1, 2] * x[2, i] + KV[1, 3] * x[3, i]


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
def _coefficients(KV, x, y, lam, two_over_b, L, PQ, CE, r, member):
    """PQ = KV x (2, BL), the coefficients CE (2, BL) of g_k, g_v; r (B,) is work space."""
    _projections(KV, x, PQ)
    if member == SOFTMAX:
        _softmax_coefficients(PQ, y, lam, two_over_b, L, CE)
        return
    BL = x.shape[1]
    B = BL // L
    for b in range(B):
        acc = 0.0
        for l in range(b * L, (b + 1) * L):
            gate = math.erf(lam * PQ[0, l])
            CE[1, l] = gate
            acc += gate * PQ[1, l]
        r[b] = (acc - y[b]) * two_over_b
    scale = lam * _TWO_OVER_SQRT_PI
    for b in range(B):
        rb = r[b]
        rs = rb * scale
        for l in range(b * L, (b + 1) * L):
            lp = lam * PQ[0, l]
            CE[1, l] = rb * CE[1, l]
            CE[0, l] = rs * (math.exp(-(lp * lp)) * PQ[1, l])


@jit
def _step(KV, x, y, lam, alpha, two_over_b, L, scale2, u_a11, u_n21, u_a22, PQ, CE, r, F, member):
    """One step on KV (2, 4) in place; u_* = -alpha (a11, n21, a22) of this step."""
    _coefficients(KV, x, y, lam, two_over_b, L, PQ, CE, r, member)
    BL = x.shape[1]
    s00 = s01 = s11 = 0.0
    for i in range(BL):
        c0 = CE[0, i] * scale2[i]
        c1 = CE[1, i] * scale2[i]
        s00 += c0 * CE[0, i]
        s01 += c0 * CE[1, i]
        s11 += c1 * CE[1, i]
    l11 = math.sqrt(s00)
    l21 = s01 / max(l11, _TINY)  # |S01| <= l11 sqrt(S11): l11 = 0 forces S01 = 0
    l22 = math.sqrt(max(s11 - l21 * l21, 0.0))
    u5, w5, w6 = l11 * u_a11, l21 * u_a11 + l22 * u_n21, l22 * u_a22
    for a in range(2):
        A = 0.0
        for i in range(BL):
            A += CE[a, i] * PQ[a, i]
        A = A * alpha + 1.0
        for c in range(4):
            g = 0.0
            for i in range(BL):
                g += CE[a, i] * x[c, i]
            F[a, c] = KV[a, c] * A - g * alpha
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
def sgd_reduced_kernel(KV, X, Y, u_a11, u_n21, u_a22, lam, alpha, two_over_b, L, scale2,
                       snap_rows, snaps, member=ERF):
    """Advance every run through the n pre-drawn steps of a chunk, in place.

    KV (R, 2, 4): Cholesky coordinates; X (R, n, 4, B L) tokens in F; Y (R, n, B) targets;
    u_* (R, n): -alpha times the Bartlett variables; lam (n,): lambda of each step;
    snap_rows (n,) int: the row of ``snaps`` (n_snap, R, 2, 4) that receives KV after step j, or -1;
    member: ERF (the paper's gate) or SOFTMAX (``theory.nonlinearity``'s softmax member).
    """
    R, n = X.shape[0], X.shape[1]
    BL = X.shape[3]
    PQ = np.empty((2, BL))
    CE = np.empty((2, BL))
    r = np.empty(BL // L)
    F = np.empty((2, 6))
    for k in range(R):
        kv = KV[k]
        for j in range(n):
            _step(kv, X[k, j], Y[k, j], lam[j], alpha, two_over_b, L, scale2, u_a11[k, j],
                  u_n21[k, j], u_a22[k, j], PQ, CE, r, F, member)
            row = snap_rows[j]
            if row >= 0:
                snaps[row, k] = kv
