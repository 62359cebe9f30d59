"""The frame of the exact reduced SGD simulator (docs/math/sgd-reduced.md#exact-reduced-simulator,
step 2): k, v, k*, v* lie in a 4-dim subspace with orthonormal basis (k*, v*, f3, f4), in which
k = (kappa, eta, k3, 0) and v = (theta, nu, v3, v4) with k3, v4 >= 0 (Cholesky form;
rho = kappa theta + eta nu + k3 v3). Conversions between the overlaps and these coordinates.
"""

from __future__ import annotations

import numpy as np

from theory.parameters import Overlaps

__all__ = ["cholesky_coordinates", "frame_overlaps"]

_PIVOT_TOL = 1e-12  # as numerics.montecarlo.geometry: a smaller Cholesky pivot is a zero pivot


def cholesky_coordinates(overlaps: Overlaps) -> np.ndarray:
    """Coordinates of k and v in a frame (k*, v*, f3, f4) (step 2 of the module docstring):
    an array KV of shape (n_runs, 2, 4) with KV[:, 0] = (kappa, eta, k3, 0) and
    KV[:, 1] = (theta, nu, v3, v4)."""
    kappa, nu, theta, eta, rho = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(x, dtype=float)) for x in overlaps.as_tuple()))
    k3 = np.sqrt(np.maximum(1.0 - kappa**2 - eta**2, 0.0))
    pivot = k3 > _PIVOT_TOL
    v3 = np.where(pivot, (rho - kappa * theta - eta * nu) / np.where(pivot, k3, 1.0), 0.0)
    v4 = np.sqrt(np.maximum(1.0 - theta**2 - nu**2 - v3**2, 0.0))
    K = np.stack([kappa, eta, k3, np.zeros_like(k3)], axis=-1)
    V = np.stack([theta, nu, v3, v4], axis=-1)
    return np.stack([K, V], axis=1)


def frame_overlaps(KV) -> dict:
    """The five overlaps of the frame coordinates KV (n_runs, 2, 4 or more): the inverse of
    ``cholesky_coordinates``."""
    return dict(kappa=KV[:, 0, 0].copy(), nu=KV[:, 1, 1].copy(), theta=KV[:, 1, 0].copy(),
                eta=KV[:, 0, 1].copy(), rho=np.sum(KV[:, 0] * KV[:, 1], axis=-1))
