"""Finite-difference Riemannian Hessian of the population risk at the oracle, in explicit R^d.

The sibling of the closed form ``theory.stability.oracle_hessian`` (docs/math/critical-lambda.md#hessian-at-the-oracle, derived). k and v move
on their spheres through the retraction z -> normalise(k* + B_k z_k), normalise(v* + B_v z_v),
with B_k, B_v orthonormal bases of the tangent spaces; at a critical point the Hessian of the
pull-back through any retraction is the Riemannian Hessian (Absil, Mahony, Sepulchre 2008,
Prop. 5.5.6), and the oracle is critical (R_theta = R_eta = R_rho = 0 on M, R_kappa, R_nu act
along the normal directions). The risk itself is the closed form ``theory.risk``; the second
derivatives are central differences, twice Richardson-extrapolated, with an error bound.

``local_oracle_hessian_fd``: the Hessian of R on the sphere product at the oracle (k, v) = (k*, v*),
in local coordinates k = (k* + x1 v* + x2 w)/|.|, v = (v* + y1 k* + y2 w)/|.| (w a unit vector
orthogonal to k*, v*), so kappa = 1/|k~|, eta = x1/|k~|, nu = 1/|v~|, theta = y1/|v~|,
rho = (x1 + y1 + x2 y2)/(|k~| |v~|). Every other tangent direction (k and v moving along
distinct unit vectors orthogonal to k*, v*) only lowers kappa or nu at second order, like x2
and y2 alone, so these four coordinates carry the whole second-order structure. Central
differences of the closed-form risk with step h (error O(h^2) + O(eps R / h^2)).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import Problem
from theory.risk import risk_from_arrays

from ..montecarlo.geometry import random_orthonormal

__all__ = ["FDSpectrum", "tangent_frame", "riemannian_hessian_fd", "oracle_spectrum_fd",
           "LocalOracleHessian", "local_oracle_hessian_fd", "overlaps_near_oracle"]

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

    # The points h (s_i e_i + s_j e_j), (s_i, s_j) in {+-1}^2, for i <= j: entry i is h s_i, then
    # entry j gets h s_j added (2h s_i or 0 when i = j), the same floats as h (s_i e_i + s_j e_j).
    i, j = np.triu_indices(n)
    si, sj = np.array([1.0, 1.0, -1.0, -1.0]), np.array([1.0, -1.0, 1.0, -1.0])
    rows = np.arange(i.size)[:, None]
    Z = np.zeros((i.size, 4, n))
    Z[rows, np.arange(4), i[:, None]] = h * si
    Z[rows, np.arange(4), j[:, None]] += h * sj
    f = risk(Z.reshape(-1, n)).reshape(i.size, 4)
    H = np.empty((n, n))
    H[i, j] = H[j, i] = (f[:, 0] - f[:, 1] - f[:, 2] + f[:, 3]) / (4 * h * h)
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


def overlaps_near_oracle(x1, x2, y1, y2):
    """(kappa, nu, theta, eta, rho) at the local coordinates of the module docstring (broadcasts)."""
    x1, x2, y1, y2 = (np.asarray(z, dtype=float) for z in (x1, x2, y1, y2))
    nk = np.sqrt(1.0 + x1 * x1 + x2 * x2)
    nv = np.sqrt(1.0 + y1 * y1 + y2 * y2)
    return 1.0 / nk, 1.0 / nv, y1 / nv, x1 / nk, (x1 + y1 + x2 * y2) / (nk * nv)


@dataclasses.dataclass(frozen=True)
class LocalOracleHessian:
    """Hessian in the coordinates (x1, x2, y1, y2), its eigenvalues (ascending) and eigenvectors
    (columns). ``resolution`` bounds the roundoff of the second differences, 16 eps R / h^2 (four
    risk values of size R, each with relative error <= 4 eps, over 4 h^2); an eigenvalue within it
    of 0 is undetermined. ``kind``: "local minimum" (all eigenvalues > resolution), "saddle" (one
    < -resolution), else "degenerate" (a direction flat to working precision)."""

    hessian: np.ndarray
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    h: float
    resolution: float

    @property
    def kind(self) -> str:
        if self.eigenvalues[0] > self.resolution:
            return "local minimum"
        if self.eigenvalues[0] < -self.resolution:
            return "saddle"
        return "degenerate"


def local_oracle_hessian_fd(problem: Problem, *, h=1e-4) -> LocalOracleHessian:
    """Central-difference Hessian of R at the oracle in the local coordinates (x1, x2, y1, y2) of
    the module docstring; eps does not enter. Sibling: ``theory.stability.oracle_hessian`` (the
    closed form, in the tangent coordinates of the Riemannian Hessian)."""
    d, L, gamma, lam = float(problem.d), problem.L, problem.gamma, problem.lam
    risk = lambda z: risk_from_arrays(d, L, gamma, 0.0, lam, *overlaps_near_oracle(*z))
    hess = np.empty((4, 4))
    eye = np.eye(4) * h
    for i in range(4):
        for j in range(4):
            hess[i, j] = (risk(eye[i] + eye[j]) - risk(eye[i] - eye[j])
                          - risk(-eye[i] + eye[j]) + risk(-eye[i] - eye[j])) / (4 * h * h)
    hess = 0.5 * (hess + hess.T)
    eig, vec = np.linalg.eigh(hess)
    resolution = 16 * np.finfo(float).eps * abs(float(risk(np.zeros(4)))) / h**2
    return LocalOracleHessian(hess, eig, vec, h, resolution)
