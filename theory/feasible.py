"""Feasible overlaps next to drifted ones: the projection that removes the roundoff or integration
drift of iterated or integrated dynamics (``numerics.dynamics.pgd``, ``numerics.dynamics.flow``),
which stay feasible, and realisable in R^d, in exact arithmetic (docs/math/task.md#overlaps-and-the-manifold-m).
"""

from __future__ import annotations

import numpy as np

from .parameters import PSD_TOL, gram_matrix

__all__ = ["nearest_feasible"]


def nearest_feasible(kappa, nu, theta, eta, rho, d=None):
    """Feasible overlaps next to (kappa, nu, theta, eta, rho), realisable in R^d if ``d`` is given;
    returns the five arrays.

    The Gram matrix of (k, v, k*, v*) is G = I + E with E holding the overlaps. Where its
    smallest eigenvalue mu is negative, all five overlaps are multiplied by t = 1 / (1 - mu + 8 eps):
    G(t) = I + t E has eigenvalues 1 + t (mu_i - 1) >= 8 eps t > 0, and each overlap moves by at
    most |mu| + 8 eps, the size of the infeasibility itself. With d = 2 or 3, entries whose Gram
    rank exceeds d, or with mu < 0, are first mapped to rank <= d (``_rank_at_most``). Entries already feasible (and
    realisable) are returned bit for bit (M, theta = eta = rho = 0, is kept). Used to remove the
    roundoff or integration drift of iterated or integrated dynamics, which stay feasible and in
    R^d in exact arithmetic. Broadcasts over the overlaps (``d`` a scalar).
    """
    fields = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (kappa, nu, theta, eta, rho)))
    if d is not None and d < 4:
        eig = np.linalg.eigvalsh(gram_matrix(*fields))
        over = (eig[..., -d - 1] > PSD_TOL) | (eig[..., 0] < 0)   # rank > d, or not PSD
        if np.any(over):
            fields = [np.where(over, y, x) for x, y in zip(fields, _rank_at_most(int(d), *fields))]
    mu = np.linalg.eigvalsh(gram_matrix(*fields))[..., 0]
    if not np.any(mu < 0):
        return tuple(fields)
    t = np.where(mu < 0, 1.0 / (1.0 - np.minimum(mu, 0.0) + 8 * np.finfo(float).eps), 1.0)
    return tuple(np.where(mu < 0, x * t, x) for x in fields)


def _rank_at_most(d, kappa, nu, theta, eta, rho):
    """Overlaps of unit vectors k, v in R^d (d = 2, 3) next to the given ones.

    With k = kappa k* + eta v* + k_perp and v = theta k* + nu v* + v_perp, the Gram matrix G has
    rank 2 + rank(P), P = [[a2, c], [c, b2]] the Gram matrix of (k_perp, v_perp):
    a2 = 1 - kappa^2 - eta^2, b2 = 1 - theta^2 - nu^2, c = rho - kappa theta - eta nu. P is
    replaced by its best PSD approximation of rank d - 2 (its clipped top eigenpair for d = 3,
    0 for d = 2), (kappa, eta) and (theta, nu) are rescaled so that |k| = |v| = 1 again, and rho
    is rebuilt from the parts. Each overlap moves by O(the dropped eigenvalue of P), the size of
    the drift that made the rank exceed d.
    """
    a2 = 1.0 - kappa * kappa - eta * eta
    b2 = 1.0 - theta * theta - nu * nu
    c = rho - kappa * theta - eta * nu
    if d == 2:
        a2, b2, c = (np.zeros_like(a2),) * 3
    else:
        w, u = np.linalg.eigh(np.stack([np.stack([a2, c], -1), np.stack([c, b2], -1)], -2))
        top = np.maximum(w[..., 1], 0.0)
        a2, b2, c = top * u[..., 0, 1] ** 2, top * u[..., 1, 1] ** 2, top * u[..., 0, 1] * u[..., 1, 1]

    def rescale(x, y, perp2):
        norm2 = x * x + y * y
        scale = np.sqrt(np.maximum(1.0 - perp2, 0.0) / np.where(norm2 > 0, norm2, 1.0))
        return np.where(norm2 > 0, x * scale, x), np.where(norm2 > 0, y * scale, y)

    kappa, eta = rescale(kappa, eta, a2)
    theta, nu = rescale(theta, nu, b2)
    return kappa, nu, theta, eta, kappa * theta + eta * nu + c
