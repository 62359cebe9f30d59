"""Compiled fresh test risk of the reduced online-SGD simulator (``numerics.sgd.fresh_risk.fresh_test_risk``).

Per run and logged step: n fresh samples drawn from the run's test generator (``sfc64.sfc64_normal``:
NumPy's numbers, in the C order of the reference's (n, 2 (L - 1) + 5) block), the
noise tokens' projections (p, q) = (z1, rho z1 + sqrt(1 - rho^2) z2), the informative token
x = gamma z3 + sqrt(d/2) e1 in the frame, the target Y = x_2 + eps z4 and the loss
(Y - sum_l erf(lambda p_l) q_l - erf(lambda <x, k>) <x, v>)^2, averaged over the n samples. The
reference's arithmetic in its order, except erf (``erf_poly``, ~1 ulp) and the order of the short sums
and of the mean (bound and test in ``docs/math/kernels.md#reduced-sgd``). One pass, no (n, .) temporaries.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from .erf_poly import erf_poly
from .sfc64 import sfc64_normal

__all__ = ["fresh_risk_kernel", "fresh_risk_runs"]


@jit
def fresh_risk_kernel(S, KV, rho, n, d, L, gamma, eps, lam, table):
    """The mean loss over n fresh samples of one run (KV (2, 4): its frame coordinates; rho: its
    overlap <k, v>; S: its test Generator's SFC64 state (``sfc64.sfc64_state``), advanced by n (2 (L - 1) + 5)
    normals); table:
    ``erf_poly.erf_table()``."""
    z = np.empty(2 * (L - 1) + 5)
    c = math.sqrt(max(1.0 - rho * rho, 0.0))
    mean = math.sqrt(d / 2.0)
    total = 0.0
    s0, s1, s2, s3 = S[0], S[1], S[2], S[3]
    for _ in range(n):
        for i in range(z.size):
            z[i], s0, s1, s2, s3 = sfc64_normal(s0, s1, s2, s3)
        T = 0.0
        for l in range(L - 1):
            z1 = z[l]
            T += erf_poly(lam * z1, table) * (rho * z1 + c * z[L - 1 + l])
        j = 2 * (L - 1)
        x0, x1, x2, x3 = gamma * z[j] + mean, gamma * z[j + 1], gamma * z[j + 2], gamma * z[j + 3]
        p0 = x0 * KV[0, 0] + x1 * KV[0, 1] + x2 * KV[0, 2] + x3 * KV[0, 3]
        q0 = x0 * KV[1, 0] + x1 * KV[1, 1] + x2 * KV[1, 2] + x3 * KV[1, 3]
        r = x1 + eps * z[j + 4] - T - erf_poly(lam * p0, table) * q0
        total += r * r
    S[0], S[1], S[2], S[3] = s0, s1, s2, s3
    return total / n


@jit
def fresh_risk_runs(S, KV, rho, n, d, L, gamma, eps, lam, table, out):
    """``fresh_risk_kernel`` of every run r in one call: S (R, 4) the runs' test-stream SFC64 states (advanced),
    KV (R, 2, 4), rho (R,); the mean losses into out (R,)."""
    for r in range(KV.shape[0]):
        out[r] = fresh_risk_kernel(S[r], KV[r], rho[r], n, d, L, gamma, eps, lam, table)
