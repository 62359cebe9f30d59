"""Projected gradient descent and gradient flow in overlap coordinates for every member
(paper Definition 1; docs/math/nonlinearities.md#gradient).

The step and the flow on the five overlaps (``pgd_step``, ``flow_velocity`` of the toolkit) hold for
any risk that depends on (k, v) through the overlaps; only the partials change. Here they come
from ``theory.nonlinearity.risk_grad_sigma`` (closed form for erf, quadrature otherwise), so the
cost per step does not depend on d. One run per call (the quadrature is scalar).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from numerics import FlowTrajectory, OdeOptions, PGDTrajectory, flow_velocity, pgd_step
from numerics.dynamics.flow import integrate_ode, lambda_of_time
from theory.checks import check_integer
from theory.nonlinearity import nonlinearity, population_risk_sigma, risk_grad_sigma
from theory.parameters import OVERLAP_NAMES, Overlaps, Problem

__all__ = ["gradient_sigma", "overlap_pgd_sigma", "overlap_flow_sigma", "SIGMA_FLOW_ODE"]


def gradient_sigma(problem: Problem, sigma):
    """The map (kappa, nu, theta, eta, rho) -> the five partials R_x of member ``sigma``."""
    member = nonlinearity(sigma)

    def grad(state, lam=None):
        prob = problem if lam is None else dataclasses.replace(problem, lam=lam)
        partials = risk_grad_sigma(prob, Overlaps(**dict(zip(OVERLAP_NAMES, state))), member)
        return tuple(float(partials[x]) for x in OVERLAP_NAMES)
    return grad


def _initial_state(initial):
    state = initial.as_tuple() if isinstance(initial, Overlaps) else tuple(initial)
    if len(state) != 5 or any(np.ndim(x) != 0 for x in state):
        raise ValueError(f"initial={initial!r} is not allowed: need scalar Overlaps or 5 numbers")
    return tuple(float(x) for x in state)


def _check_pgd_settings(alpha, n_steps, log_every):
    check_integer("n_steps", n_steps, 0)
    check_integer("log_every", log_every, 1)
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha={alpha!r} is not allowed: the step size must be finite and > 0")


def overlap_pgd_sigma(problem: Problem, initial, sigma, *, alpha: float, n_steps: int,
                      log_every: int = 1) -> PGDTrajectory:
    """PGD (paper Definition 1) on the overlaps of one run with member ``sigma``; ``problem`` a
    scalar ``theory.Problem`` (constant lambda).

    Logs step 0, the multiples of ``log_every`` and the last step, with the excess risk R - eps^2
    (arrays of shape (n_log, 1), as ``numerics.PGDTrajectory``). Raises FloatingPointError if an
    iterate becomes non-finite.
    """
    _check_pgd_settings(alpha, n_steps, log_every)
    member = nonlinearity(sigma)
    grad = gradient_sigma(problem, member)
    state = _initial_state(initial)
    logged = sorted(set(range(0, n_steps + 1, log_every)) | {n_steps})
    rows = []
    for t in range(n_steps + 1):
        if t == logged[len(rows)]:
            risk = population_risk_sigma(problem, Overlaps(**dict(zip(OVERLAP_NAMES, state))), member)
            rows.append([*state, float(risk) - float(problem.eps) ** 2, float(problem.lam)])
        if t == n_steps:
            break
        state = tuple(float(x) for x in pgd_step(alpha, *state, *grad(state)))
        if not np.all(np.isfinite(state)):
            raise FloatingPointError(f"PGD iterate became non-finite at step {t + 1}: alpha too large?")
    logs = np.array(rows)[:, :, None]
    return PGDTrajectory(np.array(logged), *(logs[:, j] for j in range(7)), alpha=np.array([alpha]))


# Looser than the erf flow's default (1e-10/1e-12): above the quadrature's accuracy of the partials.
SIGMA_FLOW_ODE = OdeOptions(rtol=1e-8, atol=1e-10)


def overlap_flow_sigma(problem, initial, sigma, *, t_end, ode: OdeOptions = SIGMA_FLOW_ODE,
                       delta=None, terminal=False, t_eval=None) -> FlowTrajectory:
    """The five-overlap gradient flow (``numerics.overlap_flow``) for member ``sigma``.

    ``problem``: a scalar ``theory.Problem``, or a ``numerics.ScheduledProblem`` whose lam is a
    callable of the flow time. ``ode``: the integrator's options (default ``SIGMA_FLOW_ODE``).
    """
    lam_t = lambda_of_time(problem)
    grad = gradient_sigma(problem.task.with_lam(lam_t(0.0)), sigma)

    def rhs(t, y):
        return np.array(flow_velocity(*y, *grad(tuple(y), lam_t(t))))

    return integrate_ode(rhs, list(_initial_state(initial)), list(OVERLAP_NAMES), t_end, ode, delta,
                         terminal, t_eval, d=problem.d)
