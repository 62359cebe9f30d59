"""Compiled loss of the span-reduced Monte-Carlo risk (``numerics.montecarlo``).

From the random numbers of ``numerics.montecarlo.task.sequence_draws`` (locations J, normals Z, noise xi),
per sequence: the informative token X_J = s k* + gamma Z_J, the target Y = <X_J, v*> + eps xi,
the attention output T = sum_l erf(lambda <X_l, k>) <X_l, v> and the loss (Y - T)^2, in the
order of ``numerics.montecarlo.task.sample_sequences`` and ``numerics.montecarlo.task.attention_predictor``; only the
order of the short sums (r coordinates, L tokens) may differ from NumPy's (bound and test in
``docs/math/kernels.md#monte-carlo``). One pass over the draws, no (n, L, r) temporaries.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit

__all__ = ["span_risk_kernel"]


@jit
def span_risk_kernel(J, Z, xi, eps, s, gamma, lam, k, v, k_star, v_star, loss):
    """loss[i] = (Y_i - T(X_i))^2 for the n sequences of the draws (J (n,), Z (n, L, r),
    xi (n,), ignored when eps = 0); k, v, k_star, v_star: vectors of length r."""
    n, L, r = Z.shape
    x = np.empty(r)
    for i in range(n):
        j = J[i]
        y = 0.0
        for c in range(r):
            x[c] = s * k_star[c] + gamma * Z[i, j, c]
            y += x[c] * v_star[c]
        if eps > 0:
            y += eps * xi[i]
        t = 0.0
        for l in range(L):
            p = 0.0
            q = 0.0
            for c in range(r):
                z = x[c] if l == j else Z[i, l, c]
                p += z * k[c]
                q += z * v[c]
            t += math.erf(lam * p) * q
        loss[i] = (y - t) * (y - t)
