"""The time to leave the saddle (0, 0) and align, from the linearisation and the initial law
(docs/math/highdim.md#escape-from-the-saddle).

Near the saddle on M the effective ODE is linear, dx/dtau = J x with J = [[-p - alpha N_k/2, q],
[q, -alpha N_v/2]] (the population flow's Jacobian, docs/math/dynamics.md#fixed-points-and-their-types,
plus the correction alpha D, which is linear in x: E[N_k], E[N_v] at the saddle). J is symmetric;
along its unstable unit eigenvector r (rate mu > 0) the coordinate xi = <r, x> of online SGD is
d xi = mu xi dtau + sqrt(alpha Q / B) dW with Q = r^T C r (C: ``increment_covariance`` at the
saddle), so xi(tau) ~ e^{mu tau} (xi_0 + N(0, alpha Q / (2 B mu))) once mu tau >> 1. The initial
law on M gives xi_0 ~ N(0, 1/d) (kappa_0, nu_0 have variance 1/d; docs/math/initial-law.md#uniform-on-m),
so |xi| is half-normal with sigma^2 = 1/d + alpha Q / (2 B mu) (PGD: alpha Q = 0). A run with |xi|
leaves along r and aligns (min(|kappa|, |nu|) >= 1 - delta) at

    tau = tau_after(eps) + log(eps / |xi|) / mu,

tau_after(eps) the effective ODE's alignment time from eps r (eps small, inside the linear zone).
Quantiles of |xi| give quantiles of the alignment time; with sigma^2 ~ 1/d the median grows like
log(d) / (2 mu) at fixed p, q, mu.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import ndtri

from theory.highdim import gradient_moments, task_scalars

from ..dynamics.ode import check_solution

from .effective_flow import check_highdim_settings, effective_flow
from .fluctuations import increment_covariance, population_velocity

__all__ = ["EscapePrediction", "escape_prediction", "saddle_escape", "alignment_time_on_m"]

_EPS_START = 1e-3


def half_normal_ppf(q):
    """The q-quantile of |Z|, Z ~ N(0, 1): Phi^-1((1 + q) / 2) (the formula of ``scipy.stats.halfnorm.ppf``, the same
    bits, without loading scipy.stats, ~0.7 s of imports)."""
    return ndtri((1.0 + np.asarray(q, dtype=float)) / 2.0)


@dataclasses.dataclass(frozen=True)
class EscapePrediction:
    """``rate`` mu, ``direction`` r (kappa, nu), ``sigma`` of xi, ``tau_after`` from eps r, and the
    predicted alignment flow time (``times``) at the ``quantiles`` of |xi|: the quantile q of |xi| is
    the quantile 1 - q of the alignment time (a larger |xi| aligns earlier)."""

    rate: float
    direction: np.ndarray
    sigma: float
    tau_after: float
    quantiles: np.ndarray
    times: np.ndarray


def unstable_mode(block):
    """(mu, r): the largest eigenvalue of the 2 x 2 saddle Jacobian ``block`` (symmetric at the
    saddle, module docstring; its symmetric part is taken) and its unit eigenvector, signed so that
    its coordinates sum to a positive number."""
    w, U = np.linalg.eigh(0.5 * (block + block.T))
    return float(w[-1]), U[:, -1] * np.sign(U[0, -1] + U[1, -1])


def _jacobian_on_m(problem, h=1e-6):
    x0 = np.zeros(5)
    pts = np.array([x0 + h * e for e in np.eye(5)[:2]] + [x0 - h * e for e in np.eye(5)[:2]])
    F = population_velocity(problem, pts)
    return np.array([(F[0, :2] - F[2, :2]) / (2 * h), (F[1, :2] - F[3, :2]) / (2 * h)]).T


def alignment_time_on_m(drift_on_m, start, *, delta, t_max, rtol, atol, what):
    """The first time min(|kappa|, |nu|) = 1 - delta (upward) along dx/dtau = ``drift_on_m``(x), x = (kappa, nu) from
    ``start`` (LSODA at ``rtol``, ``atol``): a drift that keeps M invariant, integrated on M alone (two equations instead
    of five, whose off-M ones stay exactly 0). RuntimeError, naming ``what``, if it fails or does not align by t_max."""
    def aligned(_, y):
        return min(abs(y[0]), abs(y[1])) - (1.0 - delta)

    aligned.terminal, aligned.direction = True, 1
    sol = solve_ivp(lambda _, y: drift_on_m(y), (0.0, t_max), np.asarray(start, dtype=float), method="LSODA",
                    rtol=rtol, atol=atol, events=aligned)
    check_solution(sol, what, "LSODA")
    if len(sol.t_events[0]) == 0:
        raise RuntimeError(f"the {what} from {tuple(start)} does not align by t_max={t_max}: {sol.message}")
    return float(sol.t_events[0][0])


def saddle_escape(problem, *, c=None, batch_size=1):
    """(mu, r, sigma) of the module docstring: the unstable rate and unit direction of the saddle's
    linearisation on M and the scale of |xi|; ``c`` None: the population flow (no noise)."""
    d = task_scalars(problem)[0]
    J = _jacobian_on_m(problem)
    alpha, noise = 0.0, 0.0
    if c is not None:
        alpha = check_highdim_settings(problem, c, batch_size)[-1]
        m = gradient_moments(problem, (0.0,) * 5, check=False)
        gk, gv = m.grad_k, m.grad_v
        n_k = gk @ gk + (m.s_kk - gk @ gk) / batch_size
        n_v = gv @ gv + (m.s_vv - gv @ gv) / batch_size
        J = J - 0.5 * alpha * np.diag([n_k, n_v])
    mu, r = unstable_mode(J)
    if c is not None:
        C = increment_covariance(m, (0.0,) * 5)[:2, :2]
        noise = alpha * float(r @ C @ r) / (2.0 * batch_size * mu)
    return mu, r, float(np.sqrt(1.0 / d + noise))


def escape_prediction(problem, *, c=None, batch_size=1, delta=0.05, quantiles=(0.25, 0.5, 0.75),
                      t_max=500.0) -> EscapePrediction:
    """The prediction of the module docstring at constant ``problem.lam``; ``c`` None: the
    population flow (PGD at small step, no noise), else online SGD at alpha = c/d, batch B."""
    mu, r, sigma = saddle_escape(problem, c=c, batch_size=batch_size)
    start = (_EPS_START * r[0], _EPS_START * r[1], 0.0, 0.0, 0.0)
    grid = np.linspace(0.0, t_max, 20_001)
    if c is None:
        # stopped where it aligns, not at t_max: tau_after is the first grid time at or after it, as the first aligned
        # grid time of the whole flow (a third of the solver's work). The flow on M (invariant: F_theta, F_eta, F_rho
        # vanish there exactly) at rtol 1e-8 puts the event within ~1e-7 of the grid's 0.01 spacing
        def on_m(y):
            return population_velocity(problem, (y[0], y[1], 0.0, 0.0, 0.0))[0, :2]

        event = alignment_time_on_m(on_m, start[:2], delta=delta, t_max=t_max, rtol=1e-8, atol=1e-11,
                                    what="population flow")
        tau_after = float(grid[min(np.searchsorted(grid, event), grid.size - 1)])
    else:
        flow = effective_flow(problem, start, c=c, batch_size=batch_size, t_end=t_max)
        y = flow.sol(grid)
        ok = np.minimum(np.abs(y[0]), np.abs(y[1])) >= 1.0 - delta
        if not ok.any():
            raise RuntimeError(f"the effective ODE from eps r does not align by t_max={t_max}")
        tau_after = float(grid[np.argmax(ok)])
    q = np.asarray(quantiles, dtype=float)
    xi = sigma * half_normal_ppf(q)
    times = tau_after + np.log(_EPS_START / xi) / mu
    return EscapePrediction(mu, r, sigma, tau_after, q, times)
