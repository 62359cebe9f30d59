"""Finite-difference Riemannian Hessian of the population risk at the oracle, in explicit R^d.

The sibling of the closed form ``theory.stability.oracle_hessian`` (docs/math/critical-lambda.md#hessian-at-the-oracle, derived). k and v move
on their spheres through the retraction z -> normalise(k* + B_k z_k), normalise(v* + B_v z_v),
with B_k, B_v orthonormal bases of the tangent spaces; at a critical point the Hessian of the
pull-back through any retraction is the Riemannian Hessian (Absil, Mahony, Sepulchre 2008,
Prop. 5.5.6), and the oracle is critical (R_theta = R_eta = R_rho = 0 on M, R_kappa, R_nu act
along the normal directions). The risk itself is the closed form ``theory.risk``; the second
derivatives are central differences, twice Richardson-extrapolated, with an error bound.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.risk import risk_from_arrays

from ..montecarlo.geometry import random_orthonormal

__all__ = ["FDSpectrum", "tangent_frame", "riemannian_hessian_fd", "oracle_spectrum_fd"]

_EPS = np.finfo(float).eps


@dataclasses.dataclass(frozen=True)
class FDSpectrum:
    """Eigenvalues (ascending) of the extrapolated Hessian and a bound on their error."""

    eigenvalues: np.ndarray
    error_bound: float


def tangent_frame(d: int, rng: np.random.Generator):
    """(k*, v*, B_k, B_v): k*, v* orthonormal (uniform) and orthonormal bases (d, d-1) of the
    tangent spaces of the sphere at k* and at v*."""
    ks, vs = random_orthonormal(d, 2, rng)
    Bk = np.linalg.qr(np.column_stack([ks, rng.standard_normal((d, d - 1))]))[0][:, 1:]
    Bv = np.linalg.qr(np.column_stack([vs, rng.standard_normal((d, d - 1))]))[0][:, 1:]
    return ks, vs, Bk, Bv


def riemannian_hessian_fd(d, L, gamma, lam, h, frame) -> np.ndarray:
    """Central-difference Hessian, shape (2(d-1), 2(d-1)), of the pull-back of R at z = 0."""
    ks, vs, Bk, Bv = frame
    n = 2 * (d - 1)

    def risk(Z):
        k = ks + Z[:, : d - 1] @ Bk.T
        v = vs + Z[:, d - 1:] @ Bv.T
        k /= np.linalg.norm(k, axis=1, keepdims=True)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        return risk_from_arrays(float(d), float(L), gamma, 0.0, lam,
                                k @ ks, v @ vs, v @ ks, k @ vs, np.sum(k * v, axis=1))

    idx = [(i, j) for i in range(n) for j in range(i, n)]
    E = np.eye(n)
    signs = ((1, 1), (1, -1), (-1, 1), (-1, -1))
    f = risk(np.array([h * (si * E[i] + sj * E[j]) for i, j in idx for si, sj in signs])).reshape(len(idx), 4)
    H = np.empty((n, n))
    for m, (i, j) in enumerate(idx):
        H[i, j] = H[j, i] = (f[m, 0] - f[m, 1] - f[m, 2] + f[m, 3]) / (4 * h * h)
    return H


def oracle_spectrum_fd(d, L, gamma, lam, frame, *, scale: float, h: float = 2e-3) -> FDSpectrum:
    """Eigenvalues of the twice Richardson-extrapolated Hessian (steps h, 2h, 4h) and an error bound.

    Truncation: R1 = (4 H(h) - H(2h))/3 has error O(h^4) and R2, the same from 2h, 16x that, so
    |R1 - R2| ~ 15 |error of R1|; it is taken whole as the bound (a 15x margin). Roundoff: each
    entry combines 4 risks of absolute error <= 64 eps ``scale`` (scale: the sum of |terms| of R
    at the oracle) over 4 h^2, amplified 5/3 by the extrapolation; n entries per row in the
    Frobenius norm. Weyl: eigenvalues move by at most ||dH||_F.
    """
    H = [riemannian_hessian_fd(d, L, gamma, lam, m * h, frame) for m in (1, 2, 4)]
    R1, R2 = (4 * H[0] - H[1]) / 3, (4 * H[1] - H[2]) / 3
    err = float(np.linalg.norm(R1 - R2)) + R1.shape[0] * 64 * _EPS * scale / h**2
    return FDSpectrum(np.linalg.eigvalsh(R1), err)
