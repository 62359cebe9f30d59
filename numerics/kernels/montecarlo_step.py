"""Compiled loss of the span-reduced Monte-Carlo risk (``numerics.montecarlo``).

From the random numbers of ``numerics.montecarlo.task.sequence_draws`` (locations J, normals Z, noise xi),
per sequence: the informative token X_J = s k* + gamma Z_J, the target Y = <X_J, v*> + eps xi,
the attention output T = sum_l erf(lambda <X_l, k>) <X_l, v> and the loss (Y - T)^2, in the
order of ``numerics.montecarlo.task.sample_sequences`` and ``numerics.montecarlo.task.attention_predictor``; only the
order of the short sums (r coordinates, L tokens) may differ from NumPy's (bound and test in
``docs/math/kernels.md#monte-carlo``). One pass over the draws, no (n, L, r) temporaries. On an SFC64
generator the kernel draws Z and xi itself, in that order, from the generator's state (``sfc64.sfc64_normal``:
NumPy's numbers bit for bit), each token's coordinates consumed as they are drawn: the same losses, bit for bit,
as from the arrays. ``sfc64_normals``: the draws alone, NumPy's ``standard_normal`` stream of an SFC64 generator.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from .sfc64 import sfc64_normal

__all__ = ["span_risk_kernel", "sfc64_normals"]


@jit
def sfc64_normals(S, out):
    """out[i] = the i-th next standard normal of the SFC64 state S (``sfc64.sfc64_state``), which is advanced:
    ``Generator.standard_normal(out=out)`` for a flat float64 ``out``, the same numbers in the same order."""
    a, b, c, w = S[0], S[1], S[2], S[3]
    for i in range(out.size):
        out[i], a, b, c, w = sfc64_normal(a, b, c, w)
    S[0], S[1], S[2], S[3] = a, b, c, w


@jit
def span_risk_kernel(J, Z, xi, eps, s, gamma, lam, k, v, k_star, v_star, loss, S):
    """loss[i] = (Y_i - T(X_i))^2 for the n = J.size sequences; k, v, k_star, v_star: vectors of length r.
    The normals: Z (n, L, r) and xi (n,) (not read when eps = 0) when S is empty; when S is an SFC64 state
    (4 words), drawn from it in the order of Z, then xi (eps > 0), and S advanced (Z, xi are then not read:
    Z only gives L = Z.shape[1])."""
    n, L, r = J.size, Z.shape[1], k.size
    draw = S.size == 4
    zero = np.uint64(0)
    a, b, c64, w = (S[0], S[1], S[2], S[3]) if draw else (zero, zero, zero, zero)
    T = np.empty(n)
    for i in range(n):
        j = J[i]
        y = 0.0
        t = 0.0
        for l in range(L):
            p = 0.0
            q = 0.0
            for c in range(r):
                if draw:
                    z, a, b, c64, w = sfc64_normal(a, b, c64, w)
                else:
                    z = Z[i, l, c]
                if l == j:  # X_J = s k* + gamma Z_J and its share of Y = <X_J, v*>
                    x = s * k_star[c] + gamma * z
                    y += x * v_star[c]
                    z = x  # the attention reads the informative token
                p += z * k[c]
                q += z * v[c]
            t += math.erf(lam * p) * q
        loss[i] = y
        T[i] = t
    for i in range(n):
        y = loss[i]
        if eps > 0:
            if draw:
                noise, a, b, c64, w = sfc64_normal(a, b, c64, w)
            else:
                noise = xi[i]
            y += eps * noise
        loss[i] = (y - T[i]) * (y - T[i])
    if draw:
        S[0], S[1], S[2], S[3] = a, b, c64, w
