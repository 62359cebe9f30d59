"""Projected gradient descent and gradient flow in overlap coordinates for every member
(paper Definition 1; docs/math/nonlinearities.md#gradient).

The step and the flow on the five overlaps (``pgd_map``, ``flow_velocity`` of the toolkit) hold for
any risk that depends on (k, v) through the overlaps; only the partials change. Here they come
from ``theory.nonlinearity.risk_grad_sigma`` (closed form for erf, quadrature otherwise), so the
cost per step does not depend on d. One run per call (the quadrature is scalar).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from numerics import FlowTrajectory, PGDResult, flow_velocity, pgd_map
from numerics.dynamics.flow import _integrate, _lam_of_t
from theory.nonlinearity import nonlinearity, population_risk_sigma, risk_grad_sigma
from theory.parameters import OVERLAP_NAMES, Overlaps, Problem

__all__ = ["gradient_sigma", "overlap_pgd_sigma", "overlap_flow_sigma"]


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


def overlap_pgd_sigma(initial, problem: Problem, sigma, *, alpha: float, steps: int,
                      log_every: int = 1) -> PGDResult:
    """PGD (paper Definition 1) on the overlaps of one run with member ``sigma``, constant lambda.

    Logs step 0, the multiples of ``log_every`` and the last step, with the excess risk R - eps^2
    (arrays of shape (n_log, 1), as ``numerics.PGDResult``). Raises FloatingPointError if an
    iterate becomes non-finite.
    """
    for name, value, low in (("steps", steps, 0), ("log_every", log_every, 1)):
        if not (isinstance(value, (int, np.integer)) and value >= low):
            raise ValueError(f"{name}={value!r} is not allowed: {name} must be an integer >= {low}")
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha={alpha!r} is not allowed: the step size must be finite and > 0")
    member = nonlinearity(sigma)
    grad = gradient_sigma(problem, member)
    state = _initial_state(initial)
    logged = sorted(set(range(0, steps + 1, log_every)) | {steps})
    rows = []
    for t in range(steps + 1):
        if t == logged[len(rows)]:
            risk = population_risk_sigma(problem, Overlaps(**dict(zip(OVERLAP_NAMES, state))), member)
            rows.append([*state, float(risk) - float(problem.eps) ** 2, float(problem.lam)])
        if t == steps:
            break
        state = tuple(float(x) for x in pgd_map(alpha, *state, *grad(state)))
        if not np.all(np.isfinite(state)):
            raise FloatingPointError(f"PGD iterate became non-finite at step {t + 1}: alpha too large?")
    logs = np.array(rows)[:, :, None]
    return PGDResult(np.array(logged), *(logs[:, j] for j in range(7)), alpha=np.array([alpha]))


def overlap_flow_sigma(initial, problem: Problem, sigma, *, t_end, lam=None, method="LSODA",
                       rtol=1e-8, atol=1e-10, delta=None, terminal=False, t_eval=None) -> FlowTrajectory:
    """The five-overlap gradient flow (``numerics.overlap_flow``) for member ``sigma``.

    ``lam``: None (problem.lam), a number or a callable of the flow time. The default tolerances
    are looser than the erf flow's (1e-10/1e-12), above the quadrature's accuracy of the partials.
    """
    grad = gradient_sigma(problem, sigma)
    lam_t = _lam_of_t(problem.lam if lam is None else lam)

    def rhs(t, y):
        return np.array(flow_velocity(*y, *grad(tuple(y), lam_t(t))))

    return _integrate(rhs, list(_initial_state(initial)), list(OVERLAP_NAMES), t_end, method,
                      rtol, atol, delta, terminal, t_eval, d=problem.d)
