"""Compiled PGD on explicit vectors: ``numerics.dynamics.pgd_vectors.vector_pgd``'s inner loop for all runs.

Per run and step, as the reference route: the five overlaps read off the vectors (inner products in
R^d), the five partials of the closed form at them (``partials_kernel`` of
``numerics.kernels.pgd_step``, with the constants of ``lambda_constants_kernel`` recomputed only
when lambda_t changes: ``refresh_constants``, shared with the overlap kernel), the Euclidean
gradients g_k = R_kappa k* + R_eta v* + R_rho v and g_v = R_nu v* + R_theta k* + R_rho k, the
projected step k - alpha (g_k - <g_k, k> k) (and for v, both from the old iterate) and the
normalisation. The reference takes its partials from ``theory.risk.risk_grad_from_arrays``, the
kernel from the lean transcription that the compiled overlap PGD uses; both are the same closed
form, each within a few ulps of exact arithmetic, and the inner products are summed sequentially
here: the routes part at round-off (bound in ``docs/math/kernels.md#pgd-on-vectors``). The
projection and normalisation stay on the vectors, so the route still shares only the partials with
the overlap recursion it checks (paper Definition 1).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import jit
from .pgd_step import N_CONSTANTS, log_overlaps, partials_kernel, refresh_constants

__all__ = ["vector_pgd_kernel"]


@jit
def _dot(a, b):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    return acc


@jit
def vector_pgd_kernel(k, v, k_star, v_star, d, L, gamma, alpha, lam, log_rows, logs, nodes, weights):
    """Advance every run len(lam) - 1 steps of PGD on vectors, in place.

    k, v, k_star, v_star (n_runs, d_vec): the vectors (k, v updated); d, L, gamma: the problem's
    scalars (d as a float); alpha (n_runs,); lam (n_steps + 1, n_runs): lambda_t of each run (the
    last row is not used for a step); log_rows (n_steps + 1,) int: the row of ``logs``
    (n_log, 5, n_runs) that receives the overlaps (kappa, nu, theta, eta, rho) before step i, or -1.
    """
    n_runs, dim = k.shape
    n_steps = lam.shape[0] - 1
    c = np.empty(N_CONSTANTS)
    gl_x2 = np.empty(nodes.shape[0])
    gl_w = np.empty(nodes.shape[0])
    g_k = np.empty(dim)
    g_v = np.empty(dim)
    for j in range(n_runs):
        kj, vj, ks, vs = k[j], v[j], k_star[j], v_star[j]
        lam_now = math.nan
        for i in range(n_steps + 1):
            kappa, nu, theta = _dot(kj, ks), _dot(vj, vs), _dot(vj, ks)
            eta, rho = _dot(kj, vs), _dot(kj, vj)
            log_overlaps(logs, log_rows[i], j, kappa, nu, theta, eta, rho)
            if i == n_steps:
                break
            lam_now = refresh_constants(lam[i, j], lam_now, d, L, gamma, nodes, weights, c, gl_x2, gl_w)
            r_kappa, r_nu, r_theta, r_eta, r_rho = partials_kernel(c, gl_x2, gl_w, kappa, nu, theta, eta, rho)
            for m in range(dim):
                g_k[m] = r_kappa * ks[m] + r_eta * vs[m] + r_rho * vj[m]
                g_v[m] = r_nu * vs[m] + r_theta * ks[m] + r_rho * kj[m]
            gk_k, gv_v = _dot(g_k, kj), _dot(g_v, vj)
            a = alpha[j]
            for m in range(dim):  # new k and v from the old ones (simultaneous update)
                g_k[m] = kj[m] - a * (g_k[m] - gk_k * kj[m])
                g_v[m] = vj[m] - a * (g_v[m] - gv_v * vj[m])
            norm_k, norm_v = math.sqrt(_dot(g_k, g_k)), math.sqrt(_dot(g_v, g_v))
            for m in range(dim):
                kj[m] = g_k[m] / norm_k
                vj[m] = g_v[m] / norm_v
