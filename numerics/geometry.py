"""Unit vectors k, v, k*, v* in R^d with prescribed overlaps, and the overlaps read back (SPEC §3).

Used to put every route (closed form, quadrature, Monte Carlo, vector dynamics) at the same point.
"""

from __future__ import annotations

import numpy as np

from theory.parameters import Overlaps

__all__ = ["vectors_from_overlaps", "overlaps_from_vectors", "random_orthonormal"]

# A Cholesky pivot below this is treated as zero (the vectors are then linearly dependent).
_PIVOT_TOL = 1e-12


def random_orthonormal(d: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """m orthonormal vectors in R^d drawn uniformly (Haar), as the rows of an (m, d) array."""
    if not 1 <= m <= d:
        raise ValueError(f"m={m!r} is not allowed: need 1 <= m <= d (d={d})")
    q, r = np.linalg.qr(rng.standard_normal((d, m)))
    return (q * np.sign(np.diag(r))).T


def vectors_from_overlaps(overlaps: Overlaps, d: int, rng: np.random.Generator | None = None):
    """Return (k, v, k_star, v_star), unit vectors in R^d with the given (scalar) overlaps.

    Built by Gram-Schmidt in the order (k*, v*, k, v) inside a 4-dimensional frame; with ``rng``
    the frame is a uniformly random orthonormal 4-frame of R^d (else the first canonical axes).
    Requires d >= the rank of the Gram matrix of (k, v, k*, v*).
    """
    kappa, nu, theta, eta, rho = (float(x) for x in overlaps.as_tuple())
    coords = np.zeros((4, 4))  # rows: k*, v*, k, v in an orthonormal basis
    coords[0, 0] = 1.0
    coords[1, 1] = 1.0
    gram = np.array([[1.0, 0.0, kappa, theta], [0.0, 1.0, eta, nu],
                     [kappa, eta, 1.0, rho], [theta, nu, rho, 1.0]])
    # Cholesky with zero pivots allowed (positive semidefinite Gram matrix).
    for i in (2, 3):
        for j in range(i):
            if j < 2 or coords[j, j] > _PIVOT_TOL:
                pivot = coords[j, j] if j >= 2 else 1.0
                coords[i, j] = (gram[i, j] - coords[i, :j] @ coords[j, :j]) / pivot
        coords[i, i] = np.sqrt(max(gram[i, i] - coords[i, :i] @ coords[i, :i], 0.0))
    rank = int(np.sum(np.abs(np.diag(coords)) > _PIVOT_TOL))
    if d < rank:
        raise ValueError(f"d={d!r} is not allowed: these overlaps need d >= {rank}")
    width = min(d, 4)
    if np.any(np.abs(coords[:, width:]) > _PIVOT_TOL):
        raise ValueError(f"d={d!r} is not allowed: these overlaps need d >= 4")
    coords = coords[:, :width]
    if rng is None:
        frame = np.eye(width, d)
    else:
        frame = random_orthonormal(d, width, rng)
    k_star, v_star, k, v = coords @ frame
    unit = lambda x: x / np.linalg.norm(x)  # remove the roundoff of the construction
    return unit(k), unit(v), unit(k_star), unit(v_star)


def overlaps_from_vectors(k, v, k_star, v_star) -> Overlaps:
    """Overlaps of (k, v) with (k*, v*); the vectors may carry leading batch axes (..., d)."""
    dot = lambda a, b: np.sum(np.asarray(a) * np.asarray(b), axis=-1)
    return Overlaps(kappa=dot(k, k_star), nu=dot(v, v_star), theta=dot(v, k_star),
                    eta=dot(k, v_star), rho=dot(k, v))
