"""The effective ODE with the fluctuations of the overlaps: mean and covariance (docs/math/highdim.md#fluctuations-of-the-fast-overlap).

The overlaps of online SGD at step alpha = c/d fluctuate by O(sqrt(c/d)) around their mean. Most
of this is invisible in the mean, but theta = <v, k*> relaxes at a rate ~ d (R has the term
s^2 theta^2 = d theta^2 / 2) while the informative token's mean s k* gives its noise a variance
~ c per unit time: s theta keeps fluctuations of order sqrt(c) that do not vanish as d grows, and
the drift, quadratic in theta with curvature ~ d, turns them into an O(c) change of the mean. The
linear-noise (second-moment) closure keeps this to leading order: with Sigma the covariance,

    dx/dtau     = F(x) + alpha D(x) + (1/2) sum_ij Sigma_ij d_i d_j F(x),
    dSigma/dtau = J Sigma + Sigma J^T + alpha J Sigma J^T + (alpha / B) C(x),

J = dF/dx, C the covariance of the per-sample first-order increment (``GradientMoments.frame_second``
mapped to the overlaps). The term alpha J Sigma J^T makes the covariance equation the exact one-step
recursion Sigma_+ = (I + alpha J) Sigma (I + alpha J)^T + alpha^2 C / B divided by alpha: it is
O(alpha) for the slow modes, but the fast mode's one-step contraction alpha |mu_f| is O(c), and
without it its stationary variance is short by the factor 1 - alpha |mu_f| / 2
(docs/math/highdim.md#the-discrete-time-variance-of-the-fast-mode; ``discrete_time=False`` leaves
it out: the continuous-time closure). The curvature term is evaluated with sigma points along the eigenvectors of
Sigma (exact for a drift cubic in the overlaps, as F is in (theta, eta, rho)); J by central
differences of the closed-form flow. Sibling without fluctuations: ``effective_flow``.

``covariance_jacobian="mean_drift"`` replaces J in the covariance equation by the Jacobian of the mean's
whole drift, d/dx [F + alpha D + (1/2) sum_ij Sigma_ij d_i d_j F] at fixed Sigma: the slow directions
relax at the rate of the drift the mean follows, and at c ~ 1 the fluctuation term is as large as F
(docs/math/highdim.md#the-covariance-with-the-jacobian-of-the-mean-drift). Its fluctuation part by
central differences of the closed-form sigma points; d(alpha D)/dx by forward differences of the
quadrature (step _D_STEP, on the coarser trapezoid step _D_QUADRATURE, on which D and C at x are then also
taken: six quadratures per right-hand side, each at about 0.6 of the cost of one at the default step 0.2).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
from scipy.integrate import solve_ivp

from theory.checks import check_positive_real
from theory.highdim import frame_coordinates, gradient_moments, problem_scalars, second_order_drift

from ..dynamics.ode import OdeOptions, check_solution
from ..dynamics.overlap_steps import flow_velocity
from ..dynamics.risk_partials import lambda_constants, partials
from .closure_jacobian import IMPLICIT_METHODS, closure_jacobian
from .effective_flow import check_highdim_settings, lam_of_tau, start_state

__all__ = ["increment_covariance", "population_velocity", "moment_closure_rhs", "fast_eigenpair", "COVARIANCE_JACOBIANS",
           "MomentClosureTrajectory", "moment_closure_flow"]

_JAC_STEP = 1e-6
# forward differences of alpha D: truncation h/2 |d^2 (alpha D)| and round-off (quadrature error at
# step 0.4, <= 1e-14 of |D|) / h, both <= 1e-5 of the Jacobian's scale (docs/math/highdim.md#the-covariance-with-the-jacobian-of-the-mean-drift)
_D_STEP = 1e-6
# the curvature's Jacobian: truncation (step / scale of F in kappa, nu, O(1) at lambda = lambda_bar / s)^2 ~ 1e-6,
# round-off eps |F| / step^3 ~ 1e-7 |F|; exact along theta, eta, rho (F cubic there)
_CURV_STEP = 1e-3
_D_QUADRATURE = 0.4
COVARIANCE_JACOBIANS = ("population", "mean_drift")
# a quadrature per right-hand side; the covariance entries are ~c/d, so atol well below them
CLOSURE_ODE = OdeOptions(method="LSODA", rtol=1e-7, atol=1e-10)
_IU = np.triu_indices(5)
_risk_constants = functools.lru_cache(maxsize=64)(lambda d, L, gamma, lam: lambda_constants(d, float(L), gamma, lam))


def population_velocity(problem, X):
    """F of the ``theory.Problem`` ``problem`` (scalar fields) at the rows of X (n, 5): ``numerics.flow_velocity`` of the
    closed form's partials regrouped (``numerics.dynamics.risk_partials``; docs/math/highdim.md#the-population-velocity-route)."""
    d, L, gamma, _, lam = problem_scalars(problem)
    cols = np.ascontiguousarray(np.atleast_2d(X).T)  # the overlaps as contiguous rows: faster arithmetic, the same values
    return np.array(flow_velocity(*cols, *partials(_risk_constants(d, L, gamma, lam), *cols)), dtype=float).T


def _increment_map(overlaps):
    """The linear map (5, 8) from y = (P_k h_k, P_v h_v) in the frame to minus the first-order
    increment of (kappa, nu, theta, eta, rho)."""
    k, v = frame_coordinates(*overlaps)
    ell = np.zeros((5, 8))
    ell[0, 0] = ell[1, 5] = ell[2, 4] = ell[3, 1] = 1.0
    ell[4, :4], ell[4, 4:] = v, k
    return ell


def increment_covariance(moments, overlaps) -> np.ndarray:
    """C: the covariance (5, 5) of the per-sample first-order increment / alpha."""
    mean = np.concatenate([moments.grad_k, moments.grad_v])
    cov = moments.frame_second - np.outer(mean, mean)
    ell = _increment_map(overlaps)
    return ell @ cov @ ell.T


def fast_eigenpair(J):
    """(mu_f, w, u) of a Jacobian J (5, 5): the eigenvalue with the most negative real part, its right
    eigenvector w (unit) and left eigenvector u (u . w = 1), real parts
    (docs/math/highdim.md#the-drift-of-one-run)."""
    lam_all, right = np.linalg.eig(J)
    i = int(np.argmin(lam_all.real))
    w, u = right[:, i].real, np.linalg.inv(right)[i].real
    scale = np.linalg.norm(w)
    return float(lam_all[i].real), w / scale, u * scale


def _noise_terms(problem, x, Sigma, J, batch_size, average_fast, step=0.2):
    """(D, C) at x, or (average_fast) their means over x +- sigma_f w, sigma_f^2 = u^T Sigma u the
    variance along the fast mode of J (docs/math/highdim.md#the-discrete-time-variance-of-the-fast-mode);
    ``step`` the trapezoid step of the quadratures."""
    if not average_fast:
        points = [x]
    else:
        _, w, u = fast_eigenpair(J)
        spread = np.sqrt(max(float(u @ Sigma @ u), 0.0)) * w
        points = [x + spread, x - spread]
    D, C = np.zeros(5), np.zeros((5, 5))
    for point in points:
        m = gradient_moments(problem, tuple(point), step=step, check=False)
        D += second_order_drift(m, tuple(point), batch_size) / len(points)
        C += increment_covariance(m, tuple(point)) / len(points)
    return D, C


def _velocity_terms(problem, x, Sigma, spread, curvature_jacobian=True):
    """(F(x), J = dF/dx, curvature term (1/2) sum Sigma_ij d_i d_j F at x, its Jacobian at fixed Sigma), all
    from one vectorised evaluation of the closed-form flow. The curvature by sigma points x +- sigma_k u_k
    (columns of ``spread``), J by central differences (step _JAC_STEP). The curvature's Jacobian,
    (1/2) sum_k w_k d/dx d^2F/du_k^2 over the eigenpairs (w_k, u_k) of Sigma, by a central difference
    (step _CURV_STEP) of second differences (step _CURV_STEP) along the u_k weighted by the signed w_k:
    smooth in Sigma (the sigma points' clamp of negative w_k is not), and exact along theta, eta, rho,
    where F is cubic; None when ``curvature_jacobian`` is False (its 110 points are then not evaluated)."""
    h = _JAC_STEP * np.eye(5)
    points = [x[None], x + spread.T, x - spread.T, x + h, x - h]
    if curvature_jacobian:
        w, U = np.linalg.eigh(Sigma)
        e = _CURV_STEP * np.eye(5)
        centres = np.vstack([x + e, x - e])                                       # (10, 5)
        stencil = np.concatenate([centres[:, None], centres[:, None] + _CURV_STEP * U.T,
                                  centres[:, None] - _CURV_STEP * U.T], axis=1)    # (10, 11, 5)
        points.append(stencil.reshape(-1, 5))
    F = population_velocity(problem, np.vstack(points))
    curvature = 0.5 * np.sum(F[1:6] + F[6:11] - 2.0 * F[0], axis=0)
    J = ((F[11:16] - F[16:21]) / (2.0 * _JAC_STEP)).T
    if not curvature_jacobian:
        return F[0], J, curvature, None
    S = F[21:].reshape(10, 11, 5)
    second = 0.5 * np.einsum("k,ckj->cj", w, S[:, 1:6] + S[:, 6:11] - 2.0 * S[:, :1]) / _CURV_STEP ** 2
    J_curvature = ((second[:5] - second[5:]) / (2.0 * _CURV_STEP)).T
    return F[0], J, curvature, J_curvature


def correction_jacobian(problem, x, *, alpha, batch_size, base=None):
    """d(alpha D)/dx (5, 5) at x by forward differences (module docstring: step _D_STEP, quadrature
    step _D_QUADRATURE, the same grid at x and at the shifted points); ``base``: D at x on that grid
    when the caller has it (five quadratures instead of six)."""
    def drift(point):
        m = gradient_moments(problem, tuple(point), step=_D_QUADRATURE, check=False)
        return second_order_drift(m, tuple(point), batch_size)

    base = drift(x) if base is None else base
    return alpha * np.stack([drift(x + _D_STEP * e) - base for e in np.eye(5)], axis=1) / _D_STEP


def _unpack(z):
    """(x, Sigma, spread) of the closure's state z: spread's columns are sigma_k u_k over the eigenpairs of Sigma."""
    Sigma = np.zeros((5, 5))
    Sigma[_IU] = z[5:]
    Sigma = Sigma + np.triu(Sigma, 1).T
    w, U = np.linalg.eigh(Sigma)
    return z[:5], Sigma, U * np.sqrt(np.maximum(w, 0.0))


def _newton_jacobian(problem, z, *, alpha, discrete_time, covariance_jacobian):
    """``closure_jacobian`` at z with J = dF/dx, plus the curvature's Jacobian for "mean_drift" (its d(alpha D)/dx,
    five quadratures, left out: a Jacobian for Newton's iterations only)."""
    x, Sigma, spread = _unpack(z)
    _, J, _, J_curvature = _velocity_terms(problem, x, Sigma, spread,
                                           curvature_jacobian=covariance_jacobian == "mean_drift")
    return closure_jacobian(J if J_curvature is None else J + J_curvature, alpha=alpha, discrete_time=discrete_time)


def moment_closure_rhs(problem, z, *, alpha, batch_size, discrete_time=True, average_fast=False,
                       covariance_jacobian="population"):
    """d/dtau of z = (x (5), upper triangle of Sigma (15)) (module docstring) for the
    ``theory.Problem`` ``problem`` (scalar fields, d >= 4); ``discrete_time`` keeps alpha J Sigma J^T;
    ``average_fast`` averages D and C over the fast mode's spread (an O(c^2) term, measured in
    docs/math/highdim.md#convergence-in-d-and-in-c); ``covariance_jacobian``: "population" (J = dF/dx)
    or "mean_drift" (the Jacobian of the mean's whole drift at fixed Sigma, in both covariance terms)."""
    if covariance_jacobian not in COVARIANCE_JACOBIANS:
        raise ValueError(f"covariance_jacobian={covariance_jacobian!r} is not allowed: choose among "
                         f"{COVARIANCE_JACOBIANS}")
    x, Sigma, spread = _unpack(z)
    mean_drift = covariance_jacobian == "mean_drift"
    F0, J, curvature, J_curvature = _velocity_terms(problem, x, Sigma, spread, curvature_jacobian=mean_drift)
    # with mean_drift, D and C on the grid of d(alpha D)/dx (step _D_QUADRATURE), whose base point D(x) they
    # then are: six quadratures per right-hand side instead of seven. The quadrature at step 0.4 moves D and C
    # by <= 2e-14 relative at lambda = lambda_bar / s (d >= 10^3, lambda_bar <= 4; measured against step 0.1),
    # by <= 1.3e-7 at the worst gate scale lambda sd = 1
    step = _D_QUADRATURE if mean_drift else 0.2
    D, C = _noise_terms(problem, x, Sigma, J, batch_size, average_fast, step)
    dx = F0 + alpha * D + curvature
    if mean_drift:
        J = J + J_curvature + correction_jacobian(problem, x, alpha=alpha, batch_size=batch_size,
                                                  base=None if average_fast else D)
    dSigma = J @ Sigma + Sigma @ J.T + (alpha / batch_size) * C
    if discrete_time:
        dSigma += alpha * (J @ Sigma @ J.T)
    return np.concatenate([dx, dSigma[_IU]])


@dataclasses.dataclass(frozen=True)
class MomentClosureTrajectory:
    """``mean`` (5, n_t) and ``cov`` (5, 5, n_t) of the overlaps at times ``t`` (components as
    ``OVERLAP_NAMES``), with the solver's diagnostics."""

    t: np.ndarray
    mean: np.ndarray
    cov: np.ndarray
    status: int
    message: str
    nfev: int


def moment_closure_flow(problem, initial, *, c, batch_size, t_end, ode: OdeOptions = CLOSURE_ODE,
                        t_eval=None, discrete_time=True, average_fast=False,
                        covariance_jacobian="population") -> MomentClosureTrajectory:
    """Integrate the mean and covariance equations (module docstring) from a deterministic start
    (Sigma = 0); arguments and checks as ``effective_flow`` (lambda a number or a callable of tau).
    ``discrete_time=False``: without the term alpha J Sigma J^T (the continuous-time closure, whose
    error does not vanish as d grows); ``average_fast=True``: D and C averaged over the fast mode's
    spread (three times the cost); ``covariance_jacobian="mean_drift"``: the covariance equation with the
    Jacobian of the mean's whole drift (about 3 to 4 times the cost of a right-hand side). Integration
    failure raises RuntimeError."""
    alpha = check_highdim_settings(problem, c, batch_size)[-1]
    task, lam_t = problem.task, lam_of_tau(problem.lam)
    y0 = np.concatenate([start_state(initial), np.zeros(15)])
    t_end = check_positive_real("t_end", t_end)
    # implicit methods get the block Jacobian of ``closure_jacobian`` for their Newton iterations (LSODA uses it only
    # in its stiff mode: otherwise the solution is the same bit for bit)
    jac = {"jac": lambda t, z: _newton_jacobian(task.with_lam(lam_t(t)), z, alpha=alpha, discrete_time=discrete_time,
                                                covariance_jacobian=covariance_jacobian)} \
        if ode.method in IMPLICIT_METHODS else {}
    sol = solve_ivp(lambda t, z: moment_closure_rhs(task.with_lam(lam_t(t)), z, alpha=alpha,
                                                    batch_size=batch_size, discrete_time=discrete_time,
                                                    average_fast=average_fast,
                                                    covariance_jacobian=covariance_jacobian),
                    (0.0, t_end), y0, **ode.kwargs(), t_eval=t_eval, **jac)
    check_solution(sol, "moment-closure", ode.method)
    cov = np.zeros((5, 5, sol.t.size))
    cov[_IU] = sol.y[5:]
    cov = cov + np.triu(np.ones((5, 5)), 1)[:, :, None] * np.swapaxes(cov, 0, 1)
    return MomentClosureTrajectory(sol.t, sol.y[:5], cov, sol.status, sol.message, sol.nfev)
