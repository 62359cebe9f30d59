"""The noise tokens' aggregated draw in the compiled reduced-SGD step (``numerics.kernels.sgd_step``):
the plane basis (e_a, e_b) of k and v, and the noise tokens' in-frame gradient parts from their plane
sums and the two complement normals (``numerics.sgd.plane``, docs/math/sgd-reduced.md#aggregated-noise-tokens).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = ["plane", "chol2", "in_frame"]

_TINY = float(np.finfo(float).tiny)


@jit(inline=True)
def plane(KV, E):
    """``numerics.sgd.plane.plane_basis`` of one run, its sums formed in the same order (the same bits
    from the same state): E (2, 4) = (e_a, e_b) in place, e_b = 0 where v is parallel to k; returns
    (|k|, <v, e_a>, <v, e_b>)."""
    nk = math.sqrt(KV[0, 0] * KV[0, 0] + KV[0, 1] * KV[0, 1] + KV[0, 2] * KV[0, 2] + KV[0, 3] * KV[0, 3])
    for c in range(4):
        E[0, c] = KV[0, c] / nk
    va = KV[1, 0] * E[0, 0] + KV[1, 1] * E[0, 1] + KV[1, 2] * E[0, 2] + KV[1, 3] * E[0, 3]
    for c in range(4):
        E[1, c] = KV[1, c] - va * E[0, c]
    nw = math.sqrt(E[1, 0] * E[1, 0] + E[1, 1] * E[1, 1] + E[1, 2] * E[1, 2] + E[1, 3] * E[1, 3])
    if not nw > _TINY:
        nw = 0.0
    for c in range(4):
        E[1, c] = E[1, c] / nw if nw > 0.0 else 0.0
    return nk, va, nw


@jit(inline=True)
def chol2(s00, s01, s11):
    """(l11, l21, l22) with L L^T = ((s00, s01), (s01, s11)), rank 0 or 1 included."""
    l11 = math.sqrt(s00)
    l21 = s01 / max(l11, _TINY)  # |S01| <= l11 sqrt(S11): l11 = 0 forces S01 = 0
    return l11, l21, math.sqrt(max(s11 - l21 * l21, 0.0))


@jit(inline=True)
def in_frame(KV, E, Z, P, n_noise, n00, n01, n11, alpha, A0, A1, F):
    """F[:, :4] = KV (1 + alpha A) - alpha g^F, on entry F[:, :4] = the informative tokens' in-frame
    gradient parts; g^F adds the noise tokens' plane parts P E (P = ((sum c a, sum c b), (sum e a,
    sum e b))) and their parts off the plane (U, W) = (m11 Q Z_1, Q (m21 Z_1 + m22 Z_2)), M M^T the
    noise tokens' coefficient covariance ((n00, n01), (n01, n11)), Q Z = Z - e_a <e_a, Z> - e_b <e_b, Z>
    (Z overwritten by Q Z); n_noise: the number of noise tokens (below 2, M has rank <= 1: m22 = 0)."""
    for r in range(2):
        da = E[0, 0] * Z[r, 0] + E[0, 1] * Z[r, 1] + E[0, 2] * Z[r, 2] + E[0, 3] * Z[r, 3]
        db = E[1, 0] * Z[r, 0] + E[1, 1] * Z[r, 1] + E[1, 2] * Z[r, 2] + E[1, 3] * Z[r, 3]
        for c in range(4):
            Z[r, c] = Z[r, c] - da * E[0, c] - db * E[1, c]
    m11, m21, m22 = chol2(n00, n01, n11)
    if n_noise < 2:
        m22 = 0.0
    A0, A1 = A0 * alpha + 1.0, A1 * alpha + 1.0
    for c in range(4):
        gk = F[0, c] + P[0] * E[0, c] + P[1] * E[1, c] + m11 * Z[0, c]
        gv = F[1, c] + P[2] * E[0, c] + P[3] * E[1, c] + (m21 * Z[0, c] + m22 * Z[1, c])
        F[0, c] = KV[0, c] * A0 - gk * alpha
        F[1, c] = KV[1, c] * A1 - gv * alpha
