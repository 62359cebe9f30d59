"""Unit vectors k, v, k*, v* in R^d with prescribed overlaps, and the overlaps read back (docs/math/task.md#overlaps-and-the-manifold-m).

Used to put every route (closed form, quadrature, Monte Carlo, vector dynamics) at the same point.
"""

from __future__ import annotations

import numpy as np

from theory.parameters import Overlaps

__all__ = ["vectors_from_overlaps", "overlaps_from_vectors", "random_orthonormal"]

# Eigenvalues of the 4x4 Gram matrix (norm <= 4) below this are roundoff: a few ulps of its norm.
_RANK_TOL = 64 * np.finfo(float).eps


def random_orthonormal(d: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """m orthonormal vectors in R^d drawn uniformly (Haar), as the rows of an (m, d) array."""
    if not 1 <= m <= d:
        raise ValueError(f"m={m!r} is not allowed: need 1 <= m <= d (d={d})")
    q, r = np.linalg.qr(rng.standard_normal((d, m)))
    return (q * np.sign(np.diag(r))).T


def vectors_from_overlaps(overlaps: Overlaps, d: int, rng: np.random.Generator | None = None):
    """Return (k, v, k_star, v_star), unit vectors in R^d with the given (scalar) overlaps.

    Built from the eigendecomposition G = Q diag(mu) Q^T of the Gram matrix of (k*, v*, k, v):
    the rows of Q sqrt(mu), over the eigenvalues above roundoff, are vectors with Gram matrix G
    in R^rank. They are embedded by a uniformly random orthonormal frame of R^d when ``rng`` is
    given (else the first canonical axes). Requires d >= rank(G) (at most 4).
    """
    kappa, nu, theta, eta, rho = (float(x) for x in overlaps.as_tuple())
    gram = np.array([[1.0, 0.0, kappa, theta], [0.0, 1.0, eta, nu],
                     [kappa, eta, 1.0, rho], [theta, nu, rho, 1.0]])
    mu, q = np.linalg.eigh(gram)
    keep = mu > _RANK_TOL
    rank = int(np.sum(keep))
    if d < rank:
        raise ValueError(f"d={d!r} is not allowed: these overlaps need d >= {rank}")
    coords = q[:, keep] * np.sqrt(mu[keep])
    frame = np.eye(rank, d) if rng is None else random_orthonormal(d, rank, rng)
    k_star, v_star, k, v = coords @ frame
    unit = lambda x: x / np.linalg.norm(x)  # remove the roundoff of the construction
    return unit(k), unit(v), unit(k_star), unit(v_star)


def overlaps_from_vectors(k, v, k_star, v_star) -> Overlaps:
    """Overlaps of (k, v) with (k*, v*); the vectors may carry leading batch axes (..., d)."""
    dot = lambda a, b: np.sum(np.asarray(a) * np.asarray(b), axis=-1)
    return Overlaps(kappa=dot(k, k_star), nu=dot(v, v_star), theta=dot(v, k_star),
                    eta=dot(k, v_star), rho=dot(k, v))
