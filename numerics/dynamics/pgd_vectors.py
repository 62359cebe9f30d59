"""Reference PGD on explicit vectors in R^d (paper Definition 1; docs/math/dynamics.md#pgd-step-in-overlaps).

    k_{t+1} = normalize(k_t - alpha (I - k_t k_t^T) g_k),   v_{t+1} = normalize(v_t - alpha (I - v_t v_t^T) g_v),

simultaneous updates, with the Euclidean gradients built as vectors,
g_k = R_kappa k* + R_eta v* + R_rho v and g_v = R_nu v* + R_theta k* + R_rho k, where the partials
come from ``theory.risk.risk_grad_from_arrays`` at the overlaps read off the current vectors. The
projection and normalisation are done on the vectors (inner products and norms in R^d), so this
route shares with ``numerics.dynamics.pgd.overlap_pgd`` only the partial derivatives of the closed form.
Cost O(d) per step and run. Exact for every d (up to float64 roundoff, which is why the iterates
leave M by roundoff only, see ``tests/test_theorem5.py``). ``engine="kernel"`` (default) runs the
loop compiled (``numerics.kernels.pgd_vectors_step``), ``engine="numpy"`` the NumPy reference
below; they agree to round-off (``docs/math/kernels.md#pgd-on-vectors``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.risk import risk_from_arrays, risk_grad_from_arrays

from .pgd import PGDTrajectory, lambda_table
from .schedules import lambda_setting
from ..kernels import check_engine

__all__ = ["VectorPGDTrajectory", "vector_pgd"]


@dataclasses.dataclass(frozen=True)
class VectorPGDTrajectory:
    """``log``: the same logs as ``overlap_pgd`` (overlaps read from the vectors); the final vectors
    k, v (and the fixed k*, v*), each of shape (n_runs, d)."""

    log: PGDTrajectory
    k: np.ndarray
    v: np.ndarray
    k_star: np.ndarray
    v_star: np.ndarray


def _dot(a, b):
    return np.einsum("ij,ij->i", a, b)


def vector_pgd(problem, k, v, k_star, v_star, *, alpha, n_steps: int,
               log_every: int = 1, engine: str = "kernel") -> VectorPGDTrajectory:
    """PGD on vectors of shape (n_runs, d); ``problem.d`` must equal the vectors' d. Other
    arguments as in ``numerics.dynamics.pgd.overlap_pgd`` (lambda: a number, a schedule, or one per
    run); d, L, gamma, eps scalars. Sibling of ``overlap_pgd``, which it checks. ``engine``:
    "kernel" (compiled) or "numpy" (the reference route); they agree to round-off."""
    check_engine(engine)
    k, v, k_star, v_star = (np.array(x, dtype=float, ndmin=2) for x in (k, v, k_star, v_star))
    if not (k.shape == v.shape == k_star.shape == v_star.shape):
        raise ValueError(f"k, v, k_star, v_star must have the same shape (n_runs, d); got "
                         f"{k.shape}, {v.shape}, {k_star.shape}, {v_star.shape}")
    if not (isinstance(n_steps, (int, np.integer)) and n_steps >= 0):
        raise ValueError(f"n_steps={n_steps!r} is not allowed: n_steps must be an integer >= 0")
    if not (isinstance(log_every, (int, np.integer)) and log_every >= 1):
        raise ValueError(f"log_every={log_every!r} is not allowed: log_every must be an integer >= 1")
    n_runs, d = k.shape
    lam = lambda_setting(problem)
    if np.ndim(problem.d) > 0 or int(problem.d) != d:
        raise ValueError(f"problem.d={problem.d!r} is not allowed: it must equal the vectors' d = {d}")
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (n_runs,)).copy()
    if not np.all(np.isfinite(alpha) & (alpha > 0)):
        raise ValueError(f"alpha={alpha!r} is not allowed: the step size must be finite and > 0")
    lam_all = lambda_table(lam, 0, n_steps + 1, n_runs)
    log_steps = np.unique(np.r_[np.arange(0, n_steps + 1, log_every), n_steps])
    logs = np.empty((len(log_steps), 7, n_runs))
    k, v = _ROUTES[engine](k, v, k_star, v_star, problem, alpha, lam_all, log_steps, logs)
    log = PGDTrajectory(log_steps, *(logs[:, i] for i in range(7)), alpha=alpha)
    return VectorPGDTrajectory(log, k, v, k_star, v_star)


def _iterate(k, v, k_star, v_star, problem, alpha, lam_all, log_steps, logs):
    """The loop of ``vector_pgd`` (the NumPy reference route): fills ``logs`` and returns the final (k, v)."""
    d, L, gamma, eps = float(k.shape[1]), problem.L, problem.gamma, problem.eps
    n_steps = lam_all.shape[0] - 1
    j = 0
    col = alpha[:, None]
    for t in range(n_steps + 1):
        overlaps = (_dot(k, k_star), _dot(v, v_star), _dot(v, k_star), _dot(k, v_star), _dot(k, v))
        if j < len(log_steps) and t == log_steps[j]:
            logs[j, :5] = overlaps
            logs[j, 5] = risk_from_arrays(d, L, gamma, 0.0, lam_all[t], *overlaps)
            logs[j, 6] = lam_all[t]
            j += 1
        if t == n_steps:
            break
        r_kappa, r_nu, r_theta, r_eta, r_rho = risk_grad_from_arrays(d, L, gamma, eps, lam_all[t], *overlaps)
        g_k = r_kappa[:, None] * k_star + r_eta[:, None] * v_star + r_rho[:, None] * v
        g_v = r_nu[:, None] * v_star + r_theta[:, None] * k_star + r_rho[:, None] * k
        new_k = k - col * (g_k - _dot(g_k, k)[:, None] * k)
        new_v = v - col * (g_v - _dot(g_v, v)[:, None] * v)
        k = new_k / np.linalg.norm(new_k, axis=1, keepdims=True)
        v = new_v / np.linalg.norm(new_v, axis=1, keepdims=True)
    return k, v


def _iterate_kernel(k, v, k_star, v_star, problem, alpha, lam_all, log_steps, logs):
    """The loop of ``vector_pgd`` by the compiled kernel: fills ``logs`` (overlaps by the kernel,
    excess risk and lambda here, as the reference) and returns the final (k, v)."""
    from ..kernels.pgd_step import GL_NODES, GL_WEIGHTS
    from ..kernels.pgd_vectors_step import vector_pgd_kernel

    k, v = np.ascontiguousarray(k), np.ascontiguousarray(v)
    k_star, v_star = np.ascontiguousarray(k_star), np.ascontiguousarray(v_star)
    rows = np.full(lam_all.shape[0], -1, dtype=np.int64)
    rows[log_steps] = np.arange(len(log_steps))
    overlaps = np.empty((len(log_steps), 5, k.shape[0]))
    d, L, gamma = float(k.shape[1]), float(problem.L), float(problem.gamma)
    vector_pgd_kernel(k, v, k_star, v_star, d, L, gamma, alpha, np.ascontiguousarray(lam_all), rows,
                      overlaps, GL_NODES, GL_WEIGHTS)
    lam_log = lam_all[log_steps]
    logs[:, :5] = overlaps
    logs[:, 5] = risk_from_arrays(d, problem.L, problem.gamma, 0.0, lam_log, *(overlaps[:, i] for i in range(5)))
    logs[:, 6] = lam_log
    return k, v


# The loop of each engine (same signature; a table, so that tests can swap a route).
_ROUTES = {"kernel": _iterate_kernel, "numpy": _iterate}
