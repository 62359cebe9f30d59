"""Compiled overlap PGD: ``numerics.dynamics.pgd.overlap_pgd``'s inner loop for all runs, with schedules.

Per run and step: the constants of ``numerics.dynamics.risk_partials.lambda_constants`` at (d, L, gamma,
lambda_t) (recomputed only when lambda_t changes, once for all the runs of a group: the steps run in chunks, each
group's constants of a chunk computed before its runs take the chunk's steps), the five partials of
``numerics.dynamics.risk_partials.partials``, transcribed operation by operation in the same order,
and the step ``numerics.dynamics.overlap_steps.pgd_step`` itself, compiled. The IEEE-rounded operations (+, -, *, /,
sqrt) therefore give the same bits; erf and exp come from the C library instead of SciPy/NumPy
(each within an ulp or two), which is where the two routes part, at round-off (bound and test in
``docs/math/kernels.md#pgd``). Runs are independent: the outer loop is over runs, the state of a
run stays in registers for all the steps of a chunk.
"""

from __future__ import annotations

import math

import numpy as np

from ..dynamics.overlap_steps import pgd_step
from ._jit import jit

__all__ = ["pgd_kernel", "lambda_constants_kernel", "partials_kernel", "refresh_constants", "log_overlaps",
           "N_CONSTANTS", "GL_NODES", "GL_WEIGHTS"]

N_CONSTANTS = 30
GL_NODES, GL_WEIGHTS = np.polynomial.legendre.leggauss(20)
# The same float64 values as numerics.dynamics.risk_partials and theory.special (computed the same way).
_LOG_TWO_OVER_SQRT_PI = float(np.log(2.0 / np.sqrt(np.pi)))
_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))


@jit
def lambda_constants_kernel(d, L, gamma, lam, nodes, weights, out, gl_x2, gl_w):
    """``lambda_constants`` at one (d, L, gamma, lambda), into out (30,), gl_x2, gl_w (20,)."""
    s = math.sqrt(d / 2.0)
    g2 = gamma * gamma
    g = lam * gamma
    c2 = math.sqrt(1.0 + 2.0 * g * g)
    c1 = math.sqrt(1.0 + 4.0 * g * g) * c2
    if abs(lam) <= 1.0:  # theory.special.gate_correlation
        C = 2.0 * lam / math.sqrt(math.pi * (1.0 + 2.0 * lam * lam))
    else:
        C = 2.0 * math.copysign(1.0, lam) / math.sqrt(math.pi * (1.0 / (lam * lam) + 2.0))
    lam_s = lam * s
    da = lam_s / c2
    lg2 = lam * g2
    p, q, w, m, r = lg2 * s / c2, (lg2 / c2) * (lg2 / c2), lg2 * s, lg2 * lg2, lg2 / c2
    nc = (L - 1) * C
    h2 = lam * lam  # theory.zeta.zeta_tt(0, lam) = (2/b2) erf'(0)^2 / b1 (b1, b2: its c1, c2)
    b2 = math.sqrt(1.0 + 2.0 * h2)
    b1 = math.sqrt(1.0 + 4.0 * h2) * b2
    ztt0 = (2.0 / b2) * (_TWO_OVER_SQRT_PI * _TWO_OVER_SQRT_PI / b1)
    noise_rr = 2.0 * (L - 1) * lam * lam * ztt0 + 2.0 * (L - 1) * (L - 2) * C * C
    c2sq = c2 * c2
    vals = (lam_s, 1.0 / c1, 1.0 / c2,
            2.0 / c2, 2.0 / (c1 * c2), -4.0 / c2sq, -4.0 / math.pow(c1, 3.0) - 8.0 / (c1 * c2sq),
            2.0 / math.pow(c2, 3.0),
            -2.0 * g2 * da, -2.0 * p * da, -2.0 * q * da,
            lam_s * s * s, lam_s * g2, 2.0 * lam_s * w, lam_s * m,
            2.0 * nc * da * s, 2.0 * nc * da * r,
            -2.0 * g2,
            2.0 * s * s, 2.0 * w, 2.0 * nc * s, -2.0 * p,
            -2.0 * p, -2.0 * q,
            2.0 * m, 4.0 * nc * r, 2.0 * w, 2.0 * nc * s, -2.0 * q, noise_rr)
    for i in range(N_CONSTANTS):
        out[i] = vals[i]
    root = math.sqrt(1.0 + 4.0 * g * g)
    half = 2.0 * g * g / (root * (root + 1.0))
    for j in range(nodes.shape[0]):
        x = 1.0 - half * (1.0 - nodes[j])
        gl_x2[j] = 1.0 + x * x
        gl_w[j] = (4.0 / math.pi) * half * weights[j] / gl_x2[j]


@jit
def partials_kernel(c, gl_x2, gl_w, kappa, nu, theta, eta, rho):
    """``numerics.dynamics.risk_partials.partials`` at one point; c: the 30 constants."""
    A = c[0] * kappa
    a = A * c[2]
    u = A * c[1]
    a2 = a * a
    ea = math.erf(a)
    eud1 = math.erf(u)
    d1 = math.exp(_LOG_TWO_OVER_SQRT_PI - a2)
    f1d1 = math.exp(2.0 * _LOG_TWO_OVER_SQRT_PI - a2 - u * u)
    eud1 *= d1
    d2 = -2.0 * a * d1
    q4 = 4.0 * a2 - 2.0
    z1 = c[3] * eud1
    z2 = c[4] * f1d1 + c[5] * (a * eud1)
    z3 = c[6] * (a * f1d1) + c[7] * (q4 * eud1)
    acc = 0.0
    for j in range(gl_x2.shape[0]):
        acc += math.exp(a2 * -gl_x2[j]) * gl_w[j]
    z0 = ea * ea + acc
    theta_rho = theta * rho
    rho_rho = rho * rho
    r_kappa = (c[8] * (nu * d1) + c[9] * (eta * theta * d2) + c[10] * (eta * rho * q4 * d1)
               + (c[11] * (theta * theta) + c[12]) * z1 + c[13] * (theta_rho * z2)
               + c[14] * (rho_rho * z3) + c[15] * (theta_rho * d1) + c[16] * (rho_rho * d2))
    r_nu = c[17] * ea
    r_theta = c[18] * (theta * z0) + rho * (c[19] * z1 + c[20] * ea) + c[21] * (eta * d1)
    r_eta = c[22] * (theta * d1) + c[23] * (rho * d2)
    r_rho = (rho * (c[24] * z2 + c[25] * d1 + c[29]) + theta * (c[26] * z1 + c[27] * ea)
             + c[28] * (eta * d2))
    return r_kappa, r_nu, r_theta, r_eta, r_rho


@jit(inline=True)
def refresh_constants(lam_i, lam_now, d, L, gamma, nodes, weights, c, gl_x2, gl_w):
    """Returns lambda_i, after recomputing the constants c, gl_x2, gl_w (``lambda_constants_kernel``) if
    lambda_i differs from lam_now, the lambda whose constants they hold (lam_now = nan: none yet)."""
    if lam_i != lam_now:
        lambda_constants_kernel(d, L, gamma, lam_i, nodes, weights, c, gl_x2, gl_w)
    return lam_i


@jit(inline=True)
def log_overlaps(logs, row, j, kappa, nu, theta, eta, rho):
    """Into logs[row, :, j] the overlaps (kappa, nu, theta, eta, rho) of run j, if row >= 0 (row -1: not a
    logged step)."""
    if row >= 0:
        logs[row, 0, j], logs[row, 1, j], logs[row, 2, j] = kappa, nu, theta
        logs[row, 3, j], logs[row, 4, j] = eta, rho


# The step itself is ``numerics.dynamics.overlap_steps.pgd_step``, compiled: one piece of code for
# both routes (numba compiles its np.sqrt of a float as the IEEE sqrt, as math.sqrt).
_pgd_step = jit(pgd_step)


_CHUNK = 256  # steps whose constants are held at once: 256 x (30 + 2 x 20) floats, 140 KB, in cache


@jit(inline=True)
def _chunk_constants(lam, g, i0, i1, d, L, gamma, nodes, weights, C, X2, W, at):
    """Group g's constants for the steps i0 <= i < i1 (``lambda_constants_kernel`` at lam[i, g]) into rows of
    C, X2, W; at[i - i0]: step i's row. A row is computed only when lambda_t changes, so a constant lambda
    costs one row per chunk."""
    k = -1
    for i in range(i0, i1):
        if k < 0 or lam[i, g] != lam[i - 1, g]:
            k += 1
            lambda_constants_kernel(d, L, gamma, lam[i, g], nodes, weights, C[k], X2[k], W[k])
        at[i - i0] = k


@jit
def pgd_kernel(state, d, L, gamma, alpha, lam, cols, log_rows, logs, nodes, weights):
    """Advance every run len(lam) - 1 steps of population PGD, in place.

    state (5, n_runs): the overlaps (kappa, nu, theta, eta, rho) at the block's first step;
    d, L, gamma, alpha (n_runs,); lam (n_steps + 1, n_groups): lambda_t of each group of runs
    (step i uses lam[i, cols[run]]; the last row is not used for a step); the runs of a group share d, L and
    gamma (``numerics.dynamics.pgd``'s groups); log_rows (n_steps + 1,) int: the row of ``logs``
    (n_log, 5, n_runs) that receives the state before step i, or -1.
    The steps run in chunks of ``_CHUNK``: each group's constants for a chunk are computed once
    (``_chunk_constants``), then each of its runs takes the chunk's steps; a run's arithmetic is that of a
    run alone, so the bits do not depend on the chunking or on the other runs.
    Returns the index of the first run whose iterate became non-finite, or -1 (that run stops).
    """
    n_runs = state.shape[1]
    n_steps = lam.shape[0] - 1
    n_groups = lam.shape[1]
    C = np.empty((_CHUNK, N_CONSTANTS))
    X2 = np.empty((_CHUNK, nodes.shape[0]))
    W = np.empty((_CHUNK, nodes.shape[0]))
    at = np.empty(_CHUNK, dtype=np.int64)
    first = np.full(n_groups, -1, dtype=np.int64)
    for j in range(n_runs):
        if first[cols[j]] < 0:
            first[cols[j]] = j
    stopped = np.zeros(n_runs, dtype=np.bool_)
    failed = -1
    for i0 in range(0, n_steps + 1, _CHUNK):
        i1 = min(i0 + _CHUNK, n_steps + 1)
        for g in range(n_groups):
            f = first[g]
            if f < 0:
                continue
            _chunk_constants(lam, g, i0, min(i1, n_steps), d[f], L[f], gamma[f], nodes, weights, C, X2, W, at)
            for j in range(f, n_runs):
                if cols[j] != g or stopped[j]:
                    continue
                kappa, nu, theta, eta, rho = state[0, j], state[1, j], state[2, j], state[3, j], state[4, j]
                for i in range(i0, i1):
                    log_overlaps(logs, log_rows[i], j, kappa, nu, theta, eta, rho)
                    if i == n_steps:
                        break
                    k = at[i - i0]
                    r = partials_kernel(C[k], X2[k], W[k], kappa, nu, theta, eta, rho)
                    kappa, nu, theta, eta, rho = _pgd_step(alpha[j], kappa, nu, theta, eta, rho, *r)
                    if not (math.isfinite(kappa) and math.isfinite(nu) and math.isfinite(theta)
                            and math.isfinite(eta) and math.isfinite(rho)):
                        stopped[j] = True
                        if failed < 0 or j < failed:
                            failed = j
                        break
                state[0, j], state[1, j], state[2, j], state[3, j], state[4, j] = kappa, nu, theta, eta, rho
    return failed
