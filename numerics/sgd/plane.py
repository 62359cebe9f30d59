"""The noise tokens' in-frame draw of the exact reduced simulator, aggregated
(docs/math/sgd-reduced.md#aggregated-noise-tokens).

A noise token's in-frame part X^F ~ N(0, I_4) splits as a e_a + b e_b + Q X^F, with (e_a, e_b) an
orthonormal basis of a plane containing k and v (e_a = k/|k|, e_b = the normalised part of v
orthogonal to k, or 0 where v is parallel to k) and Q = I - e_a e_a^T - e_b e_b^T: (a, b) ~ N(0, I_2)
give p = |k| a and q = <v, e_a> a + <v, e_b> b, and the step needs the parts Q X^F only through the
two sums U = sum c_i Q X_i^F, W = sum e_i Q X_i^F over the noise tokens, which given the
coefficients are Gaussian with covariance Sigma_N (x) Q, Sigma_N = sum over noise tokens of
((c^2, c e), (c e, e^2)): (U, W) = (m11 Q Z_1, Q (m21 Z_1 + m22 Z_2)) in law, M M^T = Sigma_N,
Z_1, Z_2 ~ N(0, I_4). Per step: 4 numbers per informative token, 2 per noise token, 8 shared.
"""

from __future__ import annotations

import numpy as np

__all__ = ["plane_basis", "draw_tokens", "frame_tokens", "project_complement", "cholesky2", "complement_parts",
           "token_numbers"]

_TINY = np.finfo(float).tiny


def token_numbers(B, L):
    """Standard normals of one step in a run's token stream: 4 per informative token, 2 per noise
    token, 8 for the complement (module docstring)."""
    return 4 * B + 2 * B * (L - 1) + 8


def plane_basis(KV):
    """E (R, 2, 4) = (e_a, e_b) and the coordinates (|k|, <v, e_a>, <v, e_b>), each (R,), from the
    Cholesky coordinates KV (R, 2, 4); e_b = 0 where |v - <v, e_a> e_a| is not a normal float (v
    parallel to k: then q = <v, e_a> a and Q has rank 3, still exact). Each sum of four products is
    formed left to right, as the kernel forms it (the same bits from the same state)."""
    k, v = KV[:, 0], KV[:, 1]
    nk = np.sqrt(k[:, 0] * k[:, 0] + k[:, 1] * k[:, 1] + k[:, 2] * k[:, 2] + k[:, 3] * k[:, 3])
    ea = k / nk[:, None]
    va = v[:, 0] * ea[:, 0] + v[:, 1] * ea[:, 1] + v[:, 2] * ea[:, 2] + v[:, 3] * ea[:, 3]
    w = v - va[:, None] * ea
    nw = np.sqrt(w[:, 0] * w[:, 0] + w[:, 1] * w[:, 1] + w[:, 2] * w[:, 2] + w[:, 3] * w[:, 3])
    planar = nw > _TINY
    eb = np.where(planar[:, None], w / np.where(planar, nw, 1.0)[:, None], 0.0)
    return np.stack([ea, eb], axis=1), nk, va, np.where(planar, nw, 0.0)


def draw_tokens(streams, n, d, B, L, gamma, mean):
    """The token-stream numbers of n steps for every run, in the stream's order per step
    (``token_numbers``): the informative tokens in F, (R, n, 4, B), times gamma with ``mean`` added to
    their first coordinate; the noise tokens' (a, b), (R, n, 2, B (L-1)), sequence b's token l >= 1 at
    b (L-1) + l - 1; the complement normals (Z_1, Z_2), (R, n, 2, 4). streams[i][0] is run i's token
    stream, consumed in order."""
    m = 4 * B + 2 * B * (L - 1)
    buf = np.empty((len(streams), n, token_numbers(B, L)))
    for s, out in zip(streams, buf):
        s[0].standard_normal(out=out)  # C order: step by step
    inf = buf[:, :, :4 * B].reshape(len(streams), n, 4, B)
    inf *= gamma
    inf[:, :, 0] += mean
    return inf, buf[:, :, 4 * B:m].reshape(len(streams), n, 2, -1), buf[:, :, m:].reshape(len(streams), n, 2, 4)


def frame_tokens(E, inf, ab, L):
    """The tokens in F for the step (R, 4, B L), token (b, l) at b L + l: the informative ones as drawn,
    the noise ones reduced to their plane part a e_a + b e_b (their p and q are exact; the rest enters
    through ``complement_parts``)."""
    R, _, B = inf.shape
    x = np.empty((R, 4, B, L))
    x[..., 0] = inf
    a, b = (ab[:, j].reshape(R, 1, B, L - 1) for j in (0, 1))
    x[..., 1:] = E[:, 0, :, None, None] * a + E[:, 1, :, None, None] * b
    return x.reshape(R, 4, B * L)


def project_complement(E, Z):
    """Q Z_j = Z_j - e_a <e_a, Z_j> - e_b <e_b, Z_j> for the two normal vectors Z (R, 2, 4)."""
    out = Z.copy()
    for e in (E[:, 0], E[:, 1]):
        dot = (e[:, None, 0] * Z[:, :, 0] + e[:, None, 1] * Z[:, :, 1] + e[:, None, 2] * Z[:, :, 2]
               + e[:, None, 3] * Z[:, :, 3])
        out -= dot[:, :, None] * e[:, None, :]
    return out


def cholesky2(S):
    """(l11, l21, l22) with L L^T = S for a stack of 2x2 covariances S (R, 2, 2), rank 0 or 1 included."""
    l11 = np.sqrt(S[:, 0, 0])
    l21 = S[:, 0, 1] / np.maximum(l11, _TINY)  # |S01| <= l11 sqrt(S11): l11 = 0 forces S01 = 0
    l22 = np.sqrt(np.maximum(S[:, 1, 1] - l21 * l21, 0.0))
    return l11, l21, l22


def complement_parts(CE, noise, QZ):
    """(U, W) (R, 2, 4): the noise tokens' parts off the plane in g_k, g_v (module docstring), from the
    coefficients CE (R, 2, B L), the noise tokens' indicator ``noise`` (B L,) and QZ (R, 2, 4)."""
    m11, m21, m22 = cholesky2((CE * noise) @ CE.transpose(0, 2, 1))
    if np.count_nonzero(noise) < 2:  # Sigma_N has rank <= 1: m22 = 0 exactly, not the root of a rounding error
        m22 = np.zeros_like(m22)
    return np.stack([m11[:, None] * QZ[:, 0], m21[:, None] * QZ[:, 0] + m22[:, None] * QZ[:, 1]], axis=1)
