"""Online SGD for every member: the toolkit's full and exact reduced simulators with the member's
minibatch gradient (docs/math/nonlinearities.md#online-sgd).

The loss is (1/B) sum_b (Y_b - T(X_b))^2 with Euclidean gradients g_k = sum_bl c_bl X_bl,
g_v = sum_bl e_bl X_bl, c_bl = (2/B) r_b dT/dp_bl, e_bl = (2/B) r_b dT/dq_bl, r_b = T(X_b) - Y_b,
p = <X, k>, q = <X, v> (``Nonlinearity.predict_grads``). The reduced simulator's derivation
(``numerics.sgd.reduced`` module docstring) uses only that the gradients are combinations of the
tokens with coefficients computed from the in-frame parts of the tokens, which holds for every
predictor of (<X_l, k>, <X_l, v>): the same exactness in law for every member.
"""

from __future__ import annotations

import numpy as np

from numerics.sgd.full import online_sgd_full
from numerics.sgd.reduced import online_sgd_reduced
from theory.nonlinearity import nonlinearity

__all__ = ["ReducedCoefficients", "MinibatchLossGrad", "online_sgd_reduced_sigma",
           "online_sgd_full_sigma"]


class ReducedCoefficients:
    """(PQ, CE) of the reduced simulator for a member: PQ = (p, q) and CE = (c, e), (R, 2, B L),
    from the in-frame tokens x (R, 4, B L) and the targets y (R, B). A class (not a closure) so that
    it pickles for the process executors. ``kernel_member``: the member's name if the compiled
    reduced-SGD kernel computes it (erf and softmax, ``numerics.kernels.sgd_step``), else None; with it
    ``online_sgd_reduced`` runs the kernel (engine "kernel"), this class being the reference route."""

    def __init__(self, sigma):
        self.member = nonlinearity(sigma)
        self.kernel_member = self.member.name if self.member.name in ("erf", "softmax") else None

    def __call__(self, KV, x, y, lam, two_over_b, B):
        R = x.shape[0]
        PQ = KV @ x
        p, q = PQ[:, 0].reshape(R, B, -1), PQ[:, 1].reshape(R, B, -1)
        T, dp, dq = self.member.predict_grads(lam, p, q)
        r = (T - y) * two_over_b
        CE = np.stack([(r[..., None] * dp).reshape(R, -1), (r[..., None] * dq).reshape(R, -1)], axis=1)
        return PQ, CE


class MinibatchLossGrad:
    """Loss and Euclidean gradients (g_k, g_v) per run for a member (full simulator):
    X (n_runs, B, L, d), Y (n_runs, B), k, v (n_runs, d)."""

    def __init__(self, sigma):
        self.member = nonlinearity(sigma)

    def __call__(self, X, Y, k, v, lam):
        p = np.einsum("rnld,rd->rnl", X, k)
        q = np.einsum("rnld,rd->rnl", X, v)
        T, dp, dq = self.member.predict_grads(lam, p, q)
        r = T - Y
        scale = (2.0 / X.shape[1]) * r[..., None]
        g_k = np.einsum("rbl,rbld->rd", scale * dp, X)
        g_v = np.einsum("rbl,rbld->rd", scale * dq, X)
        return np.mean(r * r, axis=1), g_k, g_v


def online_sgd_reduced_sigma(problem, overlaps, sigma, **kwargs):
    """``numerics.online_sgd_reduced`` for member ``sigma`` (test_size must be 0)."""
    return online_sgd_reduced(problem, overlaps, coefficients=ReducedCoefficients(sigma), **kwargs)


def online_sgd_full_sigma(problem, k, v, k_star, v_star, sigma, **kwargs):
    """``numerics.online_sgd_full`` for member ``sigma`` (test_size must be 0)."""
    return online_sgd_full(problem, k, v, k_star, v_star, loss_grad=MinibatchLossGrad(sigma), **kwargs)
