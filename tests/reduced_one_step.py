"""One step of the reduced SGD simulator against one full d-dimensional step on the same samples,
for any member's coefficients and minibatch gradient (shared by test_sgd_reduced and
test_nonlinearity_sgd)."""

import numpy as np

import numerics.sgd.reduced as sr
from numerics.montecarlo.geometry import vectors_from_overlaps
from numerics.sgd.frame import frame_overlaps
from numerics.sgd.full import sample_batch, sphere_step
from numerics.sgd.reduced import cholesky_coordinates
from theory import OVERLAP_NAMES


def reduced_and_full_step(start, coefficients, loss_grad, rng):
    """(reduced, full): the five overlaps after one step of each route from ``start`` at d = 12,
    L = 4, B = 3, lambda = 0.8, alpha = 0.07, with ``coefficients(KV, x, Y, lam, scale, B)`` and
    ``loss_grad(X, Y, k, v, lam)`` the member's reduced coefficients and minibatch gradient."""
    d, L, B, gamma, eps, lam, alpha = 12, 4, 3, np.sqrt(0.5), 0.1, 0.8, 0.07
    k, v, ks, vs = vectors_from_overlaps(start, d, rng)
    KV = cholesky_coordinates(start)  # (1, 2, 4)
    (kappa, eta, k3, _), (theta, nu, v3, v4) = KV[0]
    f3 = (k - kappa * ks - eta * vs) / k3
    f4 = (v - theta * ks - nu * vs - v3 * f3) / v4
    basis = np.stack([ks, vs, f3, f4])
    X, Y = sample_batch([rng], ks[None], vs[None], B, L, gamma, eps)
    _, g_k, g_v = loss_grad(X, Y, k[None], v[None], lam)
    k1, v1 = sphere_step(k[None], g_k, alpha), sphere_step(v[None], g_v, alpha)

    x = np.einsum("rnd,id->rin", X.reshape(1, B * L, d), basis)  # (1, 4, B L), token b L + l
    PQ, CE = coefficients(KV, x, Y, lam, 2.0 / B, B)
    X_perp = X.reshape(1, B * L, d) - np.einsum("rin,id->rnd", x, basis)
    u = CE[0, 0] @ X_perp[0]
    w = CE[0, 1] @ X_perp[0]
    nu_ = np.linalg.norm(u)
    w5 = w @ u / nu_
    w6 = np.linalg.norm(w - w5 * u / nu_)
    KV1 = sr._advance(KV, x, PQ, CE, alpha, np.array([-alpha * nu_]), np.array([-alpha * w5]),
                      np.array([-alpha * w6]), np.zeros((1, 2, 6)))
    got = frame_overlaps(KV1)
    want = dict(kappa=k1[0] @ ks, nu=v1[0] @ vs, theta=v1[0] @ ks, eta=k1[0] @ vs, rho=k1[0] @ v1[0])
    return ({name: float(got[name][0]) for name in OVERLAP_NAMES},
            {name: float(want[name]) for name in OVERLAP_NAMES})
