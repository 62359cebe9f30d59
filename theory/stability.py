"""Local stability of the oracle (k*, v*): rates on M and the Riemannian Hessian (docs/math/critical-lambda.md#hessian-at-the-oracle).

Hand-written closed forms; their symbolic derivations are ``theory.symbolic.manifold``
(rates) and ``theory.symbolic.hessian`` (Hessian), which the tests compare with these.
Notation: s = sqrt(d/2), g = lambda gamma, c2 = sqrt(1 + 2g^2), a_l = lambda s / c2,
b = a_l / sqrt(1 + 4g^2), C = C_lambda, A = lambda s; all exact at finite d.

Rates on M (angles kappa = cos phi, nu = cos psi; phi, psi ~ exp(-r t) near the oracle):
    r_phi = 2 gamma^2 a_l erf'(a_l) erfc(b) = -R_kappa,   r_psi = 2 gamma^2 erf(a_l) = -R_nu.

Riemannian Hessian on the sphere product at the oracle: eigenvalue r_phi (k along a direction
orthogonal to k*, v*; multiplicity d-2), r_psi (v likewise; multiplicity d-2), and the 2x2 block
in (k towards v*, v towards k*) with, at (kappa, nu, theta, eta, rho) = (1, 1, 0, 0, 0),

    R_theta,theta = 2 s^2 zeta(A, g),            R_theta,eta = -2 lambda gamma^2 s erf'(a_l)/c2,
    R_eta,rho = -2 lambda^2 gamma^4 erf''(a_l)/c2^2,  R_eta,eta = 0,
    R_theta,rho = 2 lambda gamma^2 s zeta'(A, g) + 2 (L-1) C s erf(a_l),
    R_rho,rho = 2 lambda^2 gamma^4 zeta''(A, g) + 2 (L-1) lambda^2 zeta''(0, lambda)
                + 2 (L-1)(L-2) C^2 + 4 (L-1) C lambda gamma^2 erf'(a_l)/c2,
    H_xx = r_phi + 2 R_eta,rho + R_rho,rho,    H_yy = r_psi + R_theta,theta + 2 R_theta,rho + R_rho,rho,
    H_xy = R_rho,rho + R_theta,eta + R_eta,rho + R_theta,rho.

The oracle is a strict local minimum iff det H_block > 0 (the trace is then > 0 too, as
r_phi, r_psi > 0 and H_yy > 0). ``critical_lambda`` finds the smallest lambda where det H_block
changes sign (brentq), above which the oracle is a saddle of R on the sphere product.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy  # scipy.optimize loads on first use (scipy's lazy submodules)
from scipy.special import erf, erfc

from .parameters import Problem, Task
from .special import erf_prime, erf_second, gate_correlation
from .zeta import zeta, zeta_t, zeta_tt

__all__ = ["LocalRates", "oracle_local_rates", "OracleHessian", "oracle_hessian",
           "CriticalLambda", "critical_lambda"]


def _scalars(problem: Problem):
    d, L, gamma, lam = (np.asarray(x, dtype=float) for x in (problem.d, problem.L, problem.gamma, problem.lam))
    s = np.sqrt(d / 2.0)
    g = lam * gamma
    c2 = np.sqrt(1.0 + 2.0 * g * g)
    a_l = lam * s / c2
    return d, L, gamma, lam, s, g, c2, a_l, a_l / np.sqrt(1.0 + 4.0 * g * g)


@dataclasses.dataclass(frozen=True)
class LocalRates:
    """Exponential rates of phi = arccos kappa and psi = arccos nu near the oracle, on M."""

    r_phi: np.ndarray
    r_psi: np.ndarray


def oracle_local_rates(problem: Problem) -> LocalRates:
    """r_phi = 2 gamma^2 a_l erf'(a_l) erfc(b), r_psi = 2 gamma^2 erf(a_l) (module docstring)."""
    _, _, gamma, _, _, _, _, a_l, b = _scalars(problem)
    return LocalRates(r_phi=2 * gamma**2 * a_l * erf_prime(a_l) * erfc(b), r_psi=2 * gamma**2 * erf(a_l))


@dataclasses.dataclass(frozen=True)
class OracleHessian:
    """Riemannian Hessian of R at (k*, v*): the 2x2 block, its eigenvalues, the u-eigenvalues."""

    h_xx: np.ndarray
    h_xy: np.ndarray
    h_yy: np.ndarray
    block_eigenvalues: tuple     # (smaller, larger)
    r_phi: np.ndarray            # eigenvalue of multiplicity d-2
    r_psi: np.ndarray            # eigenvalue of multiplicity d-2

    @property
    def min_eigenvalue(self):
        return np.minimum(self.block_eigenvalues[0], np.minimum(self.r_phi, self.r_psi))

    @property
    def block_det(self):
        return self.h_xx * self.h_yy - self.h_xy**2


def oracle_hessian(problem: Problem) -> OracleHessian:
    """The Riemannian Hessian at the oracle in closed form (module docstring); exact at finite d."""
    d, L, gamma, lam, s, g, c2, a_l, _ = _scalars(problem)
    rates = oracle_local_rates(problem)
    g2 = gamma**2
    C = gate_correlation(lam)
    A = lam * s
    r_tt = 2 * s * s * zeta(A, g)
    r_te = -2 * lam * g2 * s * erf_prime(a_l) / c2
    r_er = -2 * lam**2 * g2**2 * erf_second(a_l) / c2**2
    r_tr = 2 * lam * g2 * s * zeta_t(A, g) + 2 * (L - 1) * C * s * erf(a_l)
    r_rr = (2 * lam**2 * g2**2 * zeta_tt(A, g) + 2 * (L - 1) * lam**2 * zeta_tt(0.0, lam)
            + 2 * (L - 1) * (L - 2) * C * C + 4 * (L - 1) * C * lam * g2 * erf_prime(a_l) / c2)
    h_xx = rates.r_phi + 2 * r_er + r_rr
    h_yy = rates.r_psi + r_tt + 2 * r_tr + r_rr
    h_xy = r_rr + r_te + r_er + r_tr
    half_tr = (h_xx + h_yy) / 2
    root = np.hypot((h_xx - h_yy) / 2, h_xy)
    return OracleHessian(h_xx=h_xx, h_xy=h_xy, h_yy=h_yy, block_eigenvalues=(half_tr - root, half_tr + root),
                         r_phi=rates.r_phi, r_psi=rates.r_psi)


@dataclasses.dataclass(frozen=True)
class CriticalLambda:
    """Smallest lambda in [lam_min, lam_max] where the oracle stops being a local minimum.

    ``lam_c`` is None when det H_block keeps its sign on the scanned grid (``found`` False).
    ``bracket`` is the grid cell handed to brentq; ``xtol`` its absolute tolerance.
    """

    lam_c: float | None
    found: bool
    bracket: tuple | None
    xtol: float


def critical_lambda(task: Task, lam_min: float = 1e-3, lam_max: float = 1e2, n_grid: int = 400,
                    xtol: float = 1e-13) -> CriticalLambda:
    """First sign change of det H_block(lambda) on a log grid of ``n_grid`` points, refined by brentq.

    det H_block must be > 0 at ``lam_min`` (checked: it was > 0 at lambda = 1e-3 and 1e-2 for
    3000 random (d <= 1e4, L <= 200, gamma in [0.05, 5])), so the change found is from a strict
    local minimum to a saddle.

    Above lam_c the smallest Hessian eigenvalue is negative: the oracle is a saddle of R on the
    product of spheres (docs/math/critical-lambda.md#critical-lambda, "for large lambda the oracle can be a saddle"). Finite d;
    ``task`` scalar (its eps does not enter; a ``Problem``'s lam is not used).
    """
    if not 0 < lam_min < lam_max:
        raise ValueError(f"lam_min={lam_min!r}, lam_max={lam_max!r} are not allowed: need 0 < lam_min < lam_max")
    if n_grid < 2:
        raise ValueError(f"n_grid={n_grid!r} is not allowed: need >= 2")
    if not isinstance(task, Task):
        raise ValueError(f"task={task!r} is not allowed: need a theory.Task (or Problem)")
    d, L, gamma = task.d, task.L, task.gamma
    det = lambda lam: float(oracle_hessian(Problem(d=d, L=L, gamma=gamma, lam=lam)).block_det)
    grid = np.geomspace(lam_min, lam_max, n_grid)
    # One vectorised evaluation on the grid (the same elementwise formulas as ``det``): the grid only
    # brackets the sign change, which brentq then refines with ``det``.
    values = np.asarray(oracle_hessian(Problem(d=d, L=L, gamma=gamma, lam=grid)).block_det, dtype=float)
    if not values[0] > 0:
        raise ArithmeticError(f"det H_block = {values[0]:.3g} <= 0 already at lam_min={lam_min!r} "
                              f"(d={d}, L={L}, gamma={gamma}): choose a smaller lam_min")
    change = np.nonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)[0]
    if change.size == 0:
        return CriticalLambda(lam_c=None, found=False, bracket=None, xtol=xtol)
    lo, hi = grid[change[0]], grid[change[0] + 1]
    lam_c, info = scipy.optimize.brentq(det, lo, hi, xtol=xtol, full_output=True)
    if not info.converged:
        raise ArithmeticError(f"brentq did not converge for lam_c in [{lo}, {hi}]: {info.flag}")
    return CriticalLambda(lam_c=float(lam_c), found=True, bracket=(float(lo), float(hi)), xtol=xtol)
