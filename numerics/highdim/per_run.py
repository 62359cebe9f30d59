"""The drift of one run of online SGD at step alpha = c/d, with its fast fluctuation averaged out
(docs/math/highdim.md#the-drift-of-one-run).

At large d the overlaps of one run are deterministic to O(sqrt(c/d)), except along one fast mode of
the population flow: the combination of theta = <v, k*> and rho that the risk's term s^2 theta^2
pulls back at a rate ~ d (once the gate of the informative token is open), while the token's mean
s k* gives it noise of variance ~ c d per unit of flow time. Its stationary spread is O(sqrt(c/d))
in theta, O(sqrt(c)) in s theta, and F has curvature ~ d along it: averaging F over it shifts the
drift by O(c), as much as alpha D. Adiabatic elimination of that mode (linear-noise approximation
in the fast variable, the others frozen):

    G(x) = F(x) + alpha D(x) + (1/2) sigma^2 d^2F/dw^2 (x),   sigma^2 = (alpha / B) u^T C u / (2 |mu_f|),

mu_f the eigenvalue of J = dF/dx with the most negative real part, w its right and u its left
eigenvector (u . w = 1), C the covariance of the per-sample increment (``increment_covariance``).
The second derivative is taken with the two points x +- sigma w (exact for F cubic along w). The
other modes relax at rates O(1) and carry variances O(c/d): they are left out, so G is the d -> infinity
drift of one run (the moment closure ``moment_closure_flow`` keeps them: the mean over runs at
finite d). M is invariant: F is odd in (theta, eta, rho) off M and w lies in that subspace on M.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.highdim import gradient_moments, population_drift, second_order_drift

from .effective_flow import check_highdim_settings
from .fluctuations import fast_eigenpair, increment_covariance, population_velocity

__all__ = ["FastMode", "FastModeUnstable", "fast_mode", "per_run_drift", "per_run_drift_on_m"]

_JAC_STEP = 1e-6


class FastModeUnstable(RuntimeError):
    """alpha |mu_f| >= 2: one step overshoots the fast mode and its fluctuations grow without bound."""


@dataclasses.dataclass(frozen=True)
class FastMode:
    """The fast mode at one state: rate ``mu`` (< 0), right eigenvector ``w`` (unit), the stationary
    variance ``variance`` of the coordinate along w, and ``s2_theta_variance`` = s^2 Var(theta)
    (the O(c) spread of s theta; docs/math/highdim.md#fluctuations-of-the-fast-overlap)."""

    mu: float
    w: np.ndarray
    variance: float
    s2_theta_variance: float


def _velocity(problem, X):
    return population_velocity(problem, X)


def _moments(problem, x, step):
    return gradient_moments(problem, tuple(float(v) for v in x), step=step, check=False)


def _jacobian(problem, x):
    h = _JAC_STEP * np.eye(5)
    F = _velocity(problem, np.vstack([x + h, x - h]))
    return ((F[:5] - F[5:]) / (2.0 * _JAC_STEP)).T


def fast_mode(problem, overlaps, *, c, batch_size, moments=None, quadrature_step=0.2) -> FastMode:
    """The fast mode of the module docstring at ``overlaps`` (kappa, nu, theta, eta, rho); ``quadrature_step``
    that of ``theory.highdim.gradient_moments`` (used unless ``moments`` are given)."""
    d, _, _, _, alpha = check_highdim_settings(problem, c, batch_size)
    x = np.asarray(overlaps, dtype=float)
    m = _moments(problem, x, quadrature_step) if moments is None else moments
    mu, w, u = fast_eigenpair(_jacobian(problem, x))
    contraction = alpha * abs(mu)
    if contraction >= 2.0:
        raise FastModeUnstable(f"alpha |mu_f| = {contraction:.4g} >= 2 at {tuple(x)}: the step overshoots the fast mode")
    noise = alpha * alpha / batch_size * (u @ increment_covariance(m, tuple(x)) @ u)
    variance = float(noise / (contraction * (2.0 - contraction)))
    return FastMode(mu, w, variance, 0.5 * d * variance * w[2] ** 2)


def _sigma_points(problem, x, c, batch_size, quadrature_step):
    """x + sigma w and x - sigma w (module docstring)."""
    mode = fast_mode(problem, x, c=c, batch_size=batch_size, quadrature_step=quadrature_step)
    spread = np.sqrt(mode.variance) * mode.w
    return x + spread, x - spread


def _drift_at(problem, point, alpha, batch_size, quadrature_step):
    """F + alpha D at ``point``, from one quadrature of the gradient moments."""
    m = _moments(problem, point, quadrature_step)
    return population_drift(m, tuple(point)) + alpha * second_order_drift(m, tuple(point), batch_size)


def per_run_drift(problem, overlaps, *, c, batch_size, quadrature_step=0.2) -> np.ndarray:
    """G(x) of the module docstring: the drift in flow time of one run at step c/d, batch size B.
    ``problem`` a ``theory.Problem`` (lam a number), d >= 4, c > 0, B >= 1 (ValueError otherwise);
    ``quadrature_step`` the trapezoid step of ``theory.highdim.gradient_moments`` (three quadratures, the cost).
    Raises ``FastModeUnstable`` where alpha |mu_f| >= 2."""
    _, _, _, _, alpha = check_highdim_settings(problem, c, batch_size)
    x = np.asarray(overlaps, dtype=float)
    out = np.zeros(5)
    for point in _sigma_points(problem, x, c, batch_size, quadrature_step):
        out += 0.5 * _drift_at(problem, point, alpha, batch_size, quadrature_step)
    return out


def per_run_drift_on_m(problem, kappa_nu, *, c, batch_size, quadrature_step=0.2) -> np.ndarray:
    """(G_kappa, G_nu) of ``per_run_drift`` at the point (kappa, nu, 0, 0, 0) of M, from the sigma point x + sigma w
    alone when w lies in (theta, eta, rho) (its kappa, nu entries exactly 0, as the block-diagonal Jacobian on M gives
    them; both points otherwise): two quadratures instead of three. Online SGD is equivariant under (k, v) -> (Q k, -Q v),
    Q orthogonal with Q k* = k*, Q v* = -v* (the law of the data is invariant under X -> Q X, Y -> -Y), which maps
    (kappa, nu, theta, eta, rho) to (kappa, nu, -theta, -eta, -rho): G_kappa, G_nu are even in (theta, eta, rho), so
    x - sigma w, the mirror image of x + sigma w, has the same (G_kappa, G_nu), to the quadrature's rounding
    (docs/math/highdim.md#the-drift-of-one-run-on-m). Arguments and errors as ``per_run_drift``."""
    _, _, _, _, alpha = check_highdim_settings(problem, c, batch_size)
    x = np.array([kappa_nu[0], kappa_nu[1], 0.0, 0.0, 0.0], dtype=float)
    points = _sigma_points(problem, x, c, batch_size, quadrature_step)
    if np.all(points[0][:2] == x[:2]):
        return _drift_at(problem, points[0], alpha, batch_size, quadrature_step)[:2]
    return sum(0.5 * _drift_at(problem, p, alpha, batch_size, quadrature_step) for p in points)[:2]
