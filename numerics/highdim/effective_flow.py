"""The effective ODE of online SGD at step alpha = c/d, integrated with scipy
(docs/math/highdim.md#the-effective-ode).

dx/dtau = F(x) + alpha D(x) in flow time tau = alpha * steps, with F the population flow and
alpha D the second-order correction of ``theory.highdim.effective_drift`` (normalisation of k
and v, second moment of the minibatch gradient). alpha -> 0 gives ``numerics.overlap_flow``.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from theory.checks import check_integer, check_positive_real
from theory.feasible import nearest_feasible
from theory.highdim import effective_drift, task_scalars
from theory.parameters import OVERLAP_NAMES, Overlaps

from ..dynamics.flow import FlowTrajectory
from ..dynamics.ode import OdeOptions, check_solution

__all__ = ["check_highdim_settings", "effective_flow", "lam_of_tau", "start_state", "EFFECTIVE_ODE"]

# Each right-hand side is a quadrature (~5 ms): tolerances looser than the population flow's default.
EFFECTIVE_ODE = OdeOptions(method="LSODA", rtol=1e-8, atol=1e-10)


def check_highdim_settings(problem, c, batch_size):
    """(d, L, gamma, eps, alpha) of a problem with scalar fields and d >= 4
    (``theory.highdim.task_scalars``), or ValueError naming c, batch_size or the problem."""
    c = check_positive_real("c", c)
    check_integer("batch_size", batch_size, minimum=1)
    d, L, gamma, eps = task_scalars(problem)
    return d, L, gamma, eps, c / d


def lam_of_tau(lam):
    """lambda(tau) as a checked callable: a number, or a callable whose values must be finite > 0."""
    if callable(lam):
        def checked(tau):
            value = float(lam(tau))
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"lam={lam!r} is not allowed: lambda({tau:.6g}) = {value!r}, "
                                 "but lambda must be a finite number > 0")
            return value
        return checked
    value = check_positive_real("lam", lam)
    return lambda tau: value


def start_state(initial):
    """The five overlaps of ``initial`` (Overlaps or a 5-tuple) as an array, validated."""
    values = initial.as_tuple() if isinstance(initial, Overlaps) else tuple(initial)
    y0 = np.array([float(np.asarray(x).reshape(-1)[0]) for x in values])
    Overlaps(**dict(zip(OVERLAP_NAMES, y0)))  # validates range and feasibility
    return y0


def effective_flow(problem, initial, *, c, batch_size, t_end, ode: OdeOptions = EFFECTIVE_ODE,
                   t_eval=None, quadrature_step=0.2) -> FlowTrajectory:
    """Integrate dx/dtau = F(x) + (c/d) D(x) from ``initial`` (scalar ``Overlaps`` or a 5-tuple)
    up to flow time ``t_end``. ``problem``: a ``theory.Problem`` or a ``numerics.ScheduledProblem``
    whose lam is a callable of the flow time tau (``numerics.schedule_in_flow_time(schedule, c / d)``
    for a step schedule); d >= 4. ``ode``: the integrator's ``numerics.OdeOptions``.
    ``c`` > 0, ``batch_size`` >= 1 (ValueError naming them). Integration failure raises
    RuntimeError. Components ordered as ``theory.parameters.OVERLAP_NAMES``. Each right-hand side
    costs one quadrature of the gradient moments, on the trapezoid step ``quadrature_step``
    (``theory.highdim.effective_drift``; 0.4: docs/math/highdim.md#the-papers-sgd-setting)."""
    alpha = check_highdim_settings(problem, c, batch_size)[-1]
    task, lam_t = problem.task, lam_of_tau(problem.lam)
    y0 = start_state(initial)
    t_end, quadrature_step = (check_positive_real(n, v) for n, v in (("t_end", t_end), ("quadrature_step", quadrature_step)))

    def rhs(t, y):
        # the drift is evaluated at the nearest feasible overlaps: the integrator's state may leave the
        # feasible set by its tolerance, and the quadrature's frame (clamped square roots) extends the
        # drift outside it unstably (docs/math/highdim.md#quadrature); a non-finite state is handed back as a
        # non-finite drift, which stops the integrator (RuntimeError below) instead of failing in nearest_feasible
        if not np.all(np.isfinite(y)):
            return np.full_like(y, np.nan)
        x = nearest_feasible(*y)
        return effective_drift(task.with_lam(lam_t(t)), x, alpha=alpha, batch_size=batch_size, step=quadrature_step)

    if not isinstance(ode, OdeOptions):
        raise ValueError(f"ode={ode!r} is not allowed: ode must be a numerics.OdeOptions")
    sol = solve_ivp(rhs, (0.0, t_end), y0, **ode.kwargs(), dense_output=True, t_eval=t_eval)
    check_solution(sol, "effective-ODE", ode.method)
    return FlowTrajectory(sol.t, sol.y, tuple(OVERLAP_NAMES), sol.status, sol.message, sol.nfev,
                          sol.njev, sol.nlu, np.empty(0), np.empty((0, 5)), sol.sol)
