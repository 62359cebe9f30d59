"""Compiled step of the exact reduced online-SGD simulator (``numerics.sgd.reduced``).

One step of one run, in the notation of ``numerics.sgd.reduced``'s module docstring (steps 2-4):
the projections p, q of the B L tokens in the frame F, the gate erf(lambda p) (or the softmax
weights of ``theory.nonlinearity``'s softmax member), the residuals and
the gradient coefficients (c, e); the Cholesky factor of their 2x2 covariance and the Bartlett
pair (u5; w5, w6); the projected step in the 6-dim frame, normalisation and the Gram-Schmidt step
back to Cholesky coordinates. The informative tokens in F, the noise tokens' plane coordinates and the
complement normals (``numerics.sgd.plane``, ``sgd_plane``) are drawn here from the run's token stream
(its SFC64 state, ``sfc64.sfc64_normal``: NumPy's numbers, in the reference's order); the targets' noise and the
Bartlett variables are drawn ahead for a block of steps, all runs in one call (``sgd_noise.noise_draws``: NumPy's numbers
from the runs' other streams, ``sfc64.sfc64_chisquare``) and passed in, as on the reference route; ``sgd_reduced_runs``
advances every run of a block in one call. The members' gradient coefficients are ``sgd_gates``'; erf and exp(-x^2)
are ``erf_poly.erf_block`` and ``exp_block`` (polynomials without table lookups, vectorised over the step's tokens, within
2 eps and 1 ulp); the rest is the reference's arithmetic in its order except for the summation order of its short sums
(bound and test in ``docs/math/kernels.md#reduced-sgd``). The loop over the steps (``_advance``) is compiled without
reference counts (``_jit.jit(refcounts=False)``), on work space allocated once per run and block.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from .sfc64 import sfc64_normal
from .sgd_gates import erf_coefficients, softmax_coefficients
from .sgd_plane import chol2, in_frame, plane

__all__ = ["ERF", "SOFTMAX", "sgd_reduced_kernel", "sgd_reduced_runs"]

_TINY = float(np.finfo(float).tiny)


ERF, SOFTMAX = 0, 1  # the members the kernel computes (``member`` argument)


@jit(inline=True)
def _gate(lam, p, i, member, CE):
    """For the erf member, lambda p and -(lambda p)^2 of token i into CE[1, i], CE[0, i]
    (``sgd_gates.erf_coefficients`` takes the exp and the erf)."""
    if member == ERF:
        lp = lam * p
        CE[1, i] = lp
        CE[0, i] = -(lp * lp)  # its exp: erf'(lp) sqrt(pi) / 2, scaled in erf_coefficients


@jit(inline=True)
def _draw_step(S, gamma, mean, L, noise, KV, lam, member, x, ab, Z, E, y, PQ, CE):
    """The step's token-stream numbers in the reference's order (``numerics.sgd.plane.draw_tokens``):
    the informative tokens in F, x (4, B) (times gamma, mean added to the first coordinate), the noise
    tokens' plane coordinates ab (2, B (L-1)), the complement normals Z (2, 4); the projections PQ
    (2, B L) (informative: KV x; noise: p = |k| a, q = <v, e_a> a + <v, e_b> b, ``sgd_plane.plane``), the targets
    y_b = x[1, b] + noise_b (noise = eps xi, drawn ahead) and, for the erf member, each token's lambda p
    and -(lambda p)^2 as soon as its p is known (``_gate``: this arithmetic overlaps the generator's
    sequential work). E (2, 4): (e_a, e_b) of KV, in place."""
    B = x.shape[1]
    s0, s1, s2, s3 = S[0], S[1], S[2], S[3]
    k0, k1, k2, k3, v0, v1, v2, v3 = KV[0, 0], KV[0, 1], KV[0, 2], KV[0, 3], KV[1, 0], KV[1, 1], KV[1, 2], KV[1, 3]
    for c in range(3):
        for i in range(B):
            x[c, i], s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
    for i in range(B):
        x[3, i], s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
        for c in range(4):
            x[c, i] = x[c, i] * gamma
        x[0, i] = x[0, i] + mean
        y[i] = x[1, i] + noise[i]
        x0, x1, x2, x3 = x[0, i], x[1, i], x[2, i], x[3, i]
        p = k0 * x0 + k1 * x1 + k2 * x2 + k3 * x3
        PQ[0, i * L], PQ[1, i * L] = p, v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3
        _gate(lam, p, i * L, member, CE)
    nk, va, vb = plane(KV, E)
    for j in range(ab.shape[1]):
        ab[0, j], s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
    j = 0
    for b in range(B):
        for i in range(b * L + 1, (b + 1) * L):  # noise token j of the draw is token i = b L + l, l >= 1
            ab[1, j], s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
            p = nk * ab[0, j]
            PQ[0, i], PQ[1, i] = p, va * ab[0, j] + vb * ab[1, j]
            _gate(lam, p, i, member, CE)
            j += 1
    for r in range(2):
        for c in range(4):
            Z[r, c], s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
    S[0], S[1], S[2], S[3] = s0, s1, s2, s3


@jit(inline=True)
def _sums(x, ab, L, gamma2, PQ, CE, F, P):
    """One pass over the B L tokens: the 2x2 covariance (s00, s01, s11) of the perpendicular pair (u, w)
    (informative tokens weighted by gamma^2), that of the noise tokens alone (n00, n01, n11) and the inner
    products A = (<c, p>, <e, q>), returned; into F[:, :4] the informative tokens' in-frame gradient parts
    sum c x, sum e x, into P the noise tokens' plane sums (sum c a, sum c b, sum e a, sum e b)."""
    s00 = s01 = s11 = n00 = n01 = n11 = A0 = A1 = 0.0
    g0 = g1 = g2 = g3 = h0 = h1 = h2 = h3 = ca = cb = ea = eb = 0.0
    for b in range(x.shape[1]):
        i = b * L
        ci, ei = CE[0, i], CE[1, i]
        c0, c1 = ci * gamma2, ei * gamma2
        s00 += c0 * ci
        s01 += c0 * ei
        s11 += c1 * ei
        A0 += ci * PQ[0, i]
        A1 += ei * PQ[1, i]
        x0, x1, x2, x3 = x[0, b], x[1, b], x[2, b], x[3, b]
        g0, g1, g2, g3 = g0 + ci * x0, g1 + ci * x1, g2 + ci * x2, g3 + ci * x3
        h0, h1, h2, h3 = h0 + ei * x0, h1 + ei * x1, h2 + ei * x2, h3 + ei * x3
        for l in range(1, L):
            j, i = b * (L - 1) + l - 1, i + 1
            ci, ei = CE[0, i], CE[1, i]
            n00 += ci * ci
            n01 += ci * ei
            n11 += ei * ei
            A0 += ci * PQ[0, i]
            A1 += ei * PQ[1, i]
            a, bj = ab[0, j], ab[1, j]
            ca, cb, ea, eb = ca + ci * a, cb + ci * bj, ea + ei * a, eb + ei * bj
    F[0, 0], F[0, 1], F[0, 2], F[0, 3] = g0, g1, g2, g3
    F[1, 0], F[1, 1], F[1, 2], F[1, 3] = h0, h1, h2, h3
    P[0], P[1], P[2], P[3] = ca, cb, ea, eb
    return s00 + n00, s01 + n01, s11 + n11, n00, n01, n11, A0, A1


@jit(inline=True)
def _step(KV, x, ab, Z, E, y, lam, alpha, two_over_b, L, gamma2, u_a11, u_n21, u_a22, PQ, CE, F, P, K, G, member):
    """One step on KV (2, 4) in place, given the step's numbers and projections (``_draw_step``);
    u_* = -alpha (a11, n21, a22) of this step; CE (2, B L), F (2, 6), P (4,), K (2, B L) int64 and G (2, B L + 7) are
    work space."""
    if member == SOFTMAX:
        softmax_coefficients(PQ, y, lam, two_over_b, L, CE, K)
    else:
        erf_coefficients(PQ, y, lam, two_over_b, L, CE, K, G)
    s00, s01, s11, n00, n01, n11, A0, A1 = _sums(x, ab, L, gamma2, PQ, CE, F, P)
    l11, l21, l22 = chol2(s00, s01, s11)
    u5, w5, w6 = l11 * u_a11, l21 * u_a11 + l22 * u_n21, l22 * u_a22
    in_frame(KV, E, Z, P, ab.shape[1], n00, n01, n11, alpha, A0, A1, F)
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
def sgd_reduced_kernel(KV, S, gamma, mean, noise, u_a11, u_n21, u_a22, lam, alpha, two_over_b, L,
                       snap_rows, snaps, member):
    """Advance one run through the n steps of a chunk, in place, drawing its tokens.

    KV (2, 4): Cholesky coordinates; gen: the run's token Generator (numba draws the same stream as
    NumPy's ``standard_normal`` from it, advancing its state); gamma, mean: the informative token's
    spread and mean sqrt(d/2); noise (n, B): eps xi of the targets; u_* (n,): -alpha times the
    Bartlett variables; lam (n,): lambda of each step; snap_rows (n,) int: the row of ``snaps``
    (n_snap, 2, 4) that receives KV after step j, or -1; member: ERF (the paper's gate) or SOFTMAX
    (``theory.nonlinearity``'s softmax member).
    """
    n, B = noise.shape
    x = np.empty((4, B))
    ab = np.empty((2, B * (L - 1)))
    Z = np.empty((2, 4))
    y = np.empty(B)
    PQ = np.empty((2, B * L))
    CE = np.empty((2, B * L))
    F, E, P, K = np.empty((2, 6)), np.empty((2, 4)), np.empty(4), np.empty((2, B * L), np.int64)
    G = np.empty((2, B * L + 7))
    _advance(KV, S, gamma, mean, noise, u_a11, u_n21, u_a22, lam, alpha, two_over_b, L, snap_rows, snaps, member,
             (x, ab, Z, y, PQ, CE, F, E, P, K, G))


@jit(refcounts=False)
def _advance(KV, S, gamma, mean, noise, u_a11, u_n21, u_a22, lam, alpha, two_over_b, L, snap_rows, snaps, member,
             work):
    """``sgd_reduced_kernel``'s loop over the steps, given its work space ``work`` (x, ab, Z, y, PQ, CE, F, E, P, K, G),
    compiled without reference counts (``_jit.jit``): the rows and arrays its inlined parts take are not counted, which
    cost two atomic operations and two calls each, 28 per step (0.2 us of 1.0), and nothing is allocated."""
    x, ab, Z, y, PQ, CE, F, E, P, K, G = work
    for j in range(noise.shape[0]):
        _draw_step(S, gamma, mean, L, noise[j], KV, lam[j], member, x, ab, Z, E, y, PQ, CE)
        _step(KV, x, ab, Z, E, y, lam[j], alpha, two_over_b, L, gamma * gamma, u_a11[j], u_n21[j], u_a22[j],
              PQ, CE, F, P, K, G, member)
        row = snap_rows[j]
        if row >= 0:
            for a in range(2):
                for c in range(4):
                    snaps[row, a, c] = KV[a, c]


@jit
def sgd_reduced_runs(KV, S, gamma, mean, noise, u_a11, u_n21, u_a22, lam, alpha, two_over_b, L,
                     snap_rows, snaps, member):
    """``sgd_reduced_kernel`` for every run r of a block in one call: KV (R, 2, 4), S (R, 4, 4) the runs' SFC64
    stream states (row 0: the token stream, drawn and advanced here), noise (R, n, B), u_* (R, n), snaps
    (n_snap, R, 2, 4); the rest as there."""
    for r in range(KV.shape[0]):
        sgd_reduced_kernel(KV[r], S[r, 0], gamma, mean, noise[r], u_a11[r], u_n21[r], u_a22[r], lam, alpha,
                           two_over_b, L, snap_rows, snaps[:, r], member)
