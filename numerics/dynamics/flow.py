"""Gradient flow of the population risk on the sphere product (docs/math/dynamics.md#overlap-ode), integrated with scipy.

Two ODEs, both the alpha -> 0 limit of PGD (paper Definition 1) with time t = alpha * steps:

- ``overlap_flow``: the five-overlap ODE of ``numerics.dynamics.overlap_steps.flow_velocity`` with the
  partials of ``theory.risk.risk_grad_from_arrays``; exact for every finite d.
- ``manifold_flow``: the two-dimensional flow on M (docs/math/dynamics.md#flow-on-m, derived),
      kappa' = -(1 - kappa^2) dR_M/dkappa,   nu' = -(1 - nu^2) dR_M/dnu,
      dR_M/dnu = -2 gamma^2 erf(a_l kappa),
      dR_M/dkappa = 2 gamma^2 a_l erf'(a_l kappa) [erf(a_l kappa / sqrt(1 + 4 lambda^2 gamma^2)) - nu],
  a_l = lambda s / sqrt(1 + 2 lambda^2 gamma^2). It is ``overlap_flow`` restricted to M (M is
  invariant, and on M the partials reduce to these; checked in ``tests/test_flow.py``).

Both take a ``theory.Problem`` (or a ``ScheduledProblem`` whose lambda is a callable of the flow
time t; ``schedule_in_flow_time`` converts a step schedule) and the integrator's options as one
``OdeOptions``. The default method is LSODA (switches to a stiff BDF method when needed; the ODE
becomes stiff when lambda sqrt(d) is large). Failure raises.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy  # scipy.integrate loads on first use (scipy's lazy submodules)
from scipy.special import erf, erfc

from theory.checks import check_positive_real, short_repr
from theory.feasible import nearest_feasible
from theory.parameters import OVERLAP_NAMES, Overlaps, Problem, check_realisable
from theory.risk import risk_grad_from_arrays
from theory.special import erf_prime

from .overlap_steps import flow_velocity
from .ode import OdeOptions, check_solution
from .pgd import initial_state
from .schedules import as_schedule, lambda_setting

__all__ = ["FlowTrajectory", "overlap_flow", "overlap_flows", "manifold_flow", "manifold_flow_velocity",
           "schedule_in_flow_time", "integrate_ode", "lambda_of_time"]


@dataclasses.dataclass(frozen=True)
class FlowTrajectory:
    """An integrated flow: ``t`` (n_t,), ``y`` (n_components, n_t) with ``names`` the components,
    ``sol`` the dense output (callable of t), solver diagnostics, and alignment events
    (``t_events``: times where min(|kappa|, |nu|) reached 1 - delta, empty if none or no delta).
    ``y`` holds feasible overlaps: the integrator's output (which may leave the feasible set by up
    to its tolerance near rank-deficient points, e.g. |kappa| -> 1, and at d = 2, 3 the rank <= d
    set by as much) is mapped by ``theory.feasible.nearest_feasible``; ``projection`` is the largest change this made
    (0 when none was needed). ``sol`` is the raw dense output."""

    t: np.ndarray
    y: np.ndarray
    names: tuple
    status: int
    message: str
    nfev: int
    njev: int
    nlu: int
    t_events: np.ndarray
    y_events: np.ndarray
    sol: object
    projection: float = 0.0

    def component(self, name: str) -> np.ndarray:
        return self.y[self.names.index(name)]

    @property
    def final(self) -> dict:
        return dict(zip(self.names, self.y[:, -1]))


def schedule_in_flow_time(schedule, alpha: float):
    """lambda(t) = schedule(t / alpha): the step schedule of PGD with step alpha in flow time."""
    schedule = as_schedule(schedule)
    return lambda t: float(schedule(t / alpha))


def lambda_of_time(problem):
    """lambda(t) of a scalar ``Problem`` or ``ScheduledProblem`` as a checked callable: a schedule
    returning NaN, inf, a value <= 0 or a non-number raises ValueError at the first such time (the
    integration stops there, never runs on NaN)."""
    lam = lambda_setting(problem)
    if isinstance(lam, list) or (not callable(lam) and np.ndim(lam) > 0):
        raise ValueError(f"lam={short_repr(problem.lam)} is not allowed: the flow integrates one "
                         "run, so lambda must be a scalar or a schedule")
    if not callable(lam):
        value = check_positive_real("lam", lam)
        return lambda t: value

    def checked(t):
        out = lam(t)
        try:
            value = None if isinstance(out, (str, bytes, bool, np.bool_)) else float(out)
        except (TypeError, ValueError):
            value = None
        if value is None or not (np.isfinite(value) and value > 0):
            raise ValueError(f"lam={short_repr(lam)} is not allowed: lambda({t:.6g}) = "
                             f"{short_repr(out)}, but lambda must be a finite number > 0")
        return value
    return checked


def _scalar_fields(problem):
    fields = (problem.d, problem.L, problem.gamma)
    if any(np.ndim(x) > 0 for x in fields):
        raise ValueError(f"problem={problem!r} is not allowed: the flow integrates one run, so "
                         "d, L, gamma must be scalars")
    return tuple(float(x) for x in fields)


def integrate_ode(rhs, y0, names, t_end, ode: OdeOptions, delta, terminal, t_eval, d=None):
    """Integrate y' = rhs(t, y) from y0 (components ``names``) up to ``t_end`` with ``ode``; the
    states are mapped to feasible overlaps realisable in R^d (``FlowTrajectory``). Raises on failure."""
    if not isinstance(ode, OdeOptions):
        raise ValueError(f"ode={ode!r} is not allowed: ode must be a numerics.dynamics.OdeOptions")
    t_end = check_positive_real("t_end", t_end)
    events = None
    if delta is not None:
        if not 0 < delta < 1:
            raise ValueError(f"delta={delta!r} is not allowed: need 0 < delta < 1")
        i_k, i_n = names.index("kappa"), names.index("nu")

        def aligned(t, y):
            return min(abs(y[i_k]), abs(y[i_n])) - (1.0 - delta)
        aligned.terminal = terminal
        aligned.direction = 1.0
        events = [aligned]
    sol = scipy.integrate.solve_ivp(rhs, (0.0, t_end), np.asarray(y0, dtype=float), **ode.kwargs(),
                    dense_output=True, events=events, t_eval=t_eval)
    check_solution(sol, "gradient-flow", ode.method, ". Try method='Radau' or 'BDF' (stiff: large lambda "
                   "sqrt(d)), looser rtol/atol, or a shorter t_end.")
    t_events = sol.t_events[0] if events else np.empty(0)
    y_events = sol.y_events[0] if events else np.empty((0, len(names)))
    full = {name: sol.y[i] for i, name in enumerate(names)}
    feasible = nearest_feasible(*(full.get(name, 0.0) for name in OVERLAP_NAMES), d=d)
    y = np.array([feasible[OVERLAP_NAMES.index(name)] for name in names])
    projection = float(np.max(np.abs(y - sol.y), initial=0.0))
    return FlowTrajectory(sol.t, y, tuple(names), sol.status, sol.message, sol.nfev,
                          sol.njev, sol.nlu, t_events, y_events, sol.sol, projection)


def overlap_flow(problem, initial: Overlaps, *, t_end, ode: OdeOptions = OdeOptions(), delta=None,
                 terminal=False, t_eval=None) -> FlowTrajectory:
    """Integrate the five-overlap gradient flow from scalar ``initial`` up to time ``t_end``.

    ``problem``: a scalar ``theory.Problem``, or a ``ScheduledProblem`` whose lam is a function
    of the flow time (``schedule_in_flow_time``; a value that is not finite and > 0 raises
    ValueError); eps does not enter. ``initial``: scalar ``Overlaps`` or a tuple of the five
    overlaps (validated: NaN, out-of-range, infeasible or not realisable in R^d raise ValueError).
    Components ordered as ``theory.parameters.OVERLAP_NAMES``. ``delta``: record the event
    min(|kappa|, |nu|) = 1 - delta (stop there if ``terminal``). Exact ODE at every finite d.
    Sibling: ``overlap_pgd`` (its alpha -> 0 limit), ``theory.symbolic.flow_velocity_symbolic``.
    """
    lam_t = lambda_of_time(problem)
    d, L, gamma = _scalar_fields(problem)
    start = initial_state(initial)
    if start.kappa.shape != (1,):
        raise ValueError(f"initial with {start.kappa.shape[0]} runs is not allowed: overlap_flow "
                         "integrates one trajectory (scalar overlaps)")
    check_realisable(problem, start)

    def rhs(t, y):
        grads = risk_grad_from_arrays(d, L, gamma, 0.0, lam_t(t), *y)
        return np.array(flow_velocity(*y, *grads))

    y0 = [float(x[0]) for x in start.as_tuple()]
    return integrate_ode(rhs, y0, list(OVERLAP_NAMES), t_end, ode, delta, terminal, t_eval, d=problem.d)


def overlap_flows(problem: Problem, initial, *, t_end, ode: OdeOptions = OdeOptions()):
    """``overlap_flow``'s ODE from n starts at once, as one system of 5 n equations: (t, y) with
    y of shape (5, n, len(t)), y[:, i] the overlaps of run i (OVERLAP_NAMES order) at the times t,
    each run mapped to feasible overlaps realisable in R^d as by ``overlap_flow``.

    ``problem``: a ``theory.Problem``; d and lambda numbers or arrays of shape (n,) (one per run),
    L and gamma numbers. ``initial``: ``Overlaps`` with fields of shape (n,) or the five-tuple.
    The runs share the steps: LSODA's local error test is the max-norm of the components' errors
    weighted by 1 / (rtol |y| + atol), so each run meets its tolerance at every step as when
    integrated alone, on steps no coarser than the error test of the whole system allows. The
    right-hand side is vectorised: n runs cost about one run's steps.
    """
    start = initial_state(initial)
    n = start.kappa.shape[0]
    d, lam = (np.broadcast_to(np.asarray(x, dtype=float), (n,)) for x in (problem.d, problem.lam))
    if not isinstance(problem, Problem) or np.ndim(problem.L) or np.ndim(problem.gamma):
        raise ValueError(f"problem={problem!r} is not allowed: a theory.Problem with scalar L and gamma")
    L, gamma = float(problem.L), float(problem.gamma)
    check_realisable(problem, start)

    def rhs(t, y):
        state = y.reshape(5, n)
        return np.concatenate(flow_velocity(*state, *risk_grad_from_arrays(d, L, gamma, 0.0, lam, *state)))

    sol = scipy.integrate.solve_ivp(rhs, (0.0, check_positive_real("t_end", t_end)),
                                    np.concatenate(start.as_tuple()), **ode.kwargs())
    check_solution(sol, "gradient-flow", ode.method, ". Try method='Radau' or 'BDF' (stiff: large lambda "
                   "sqrt(d)), looser rtol/atol, or a shorter t_end.")
    y = sol.y.reshape(5, n, -1)
    return sol.t, np.stack([np.array(nearest_feasible(*y[:, i], d=int(d[i]))) for i in range(n)], axis=1)


def _manifold_velocity(kappa, nu, d, gamma, lam):
    s = np.sqrt(np.asarray(d, dtype=float) / 2.0)
    g2 = np.square(gamma) * np.square(lam)
    a_l = lam * s / np.sqrt(1.0 + 2.0 * g2)
    x = a_l * np.asarray(kappa, dtype=float)
    y = x / np.sqrt(1.0 + 4.0 * g2)
    # erf(y) - nu through erfc: exact cancellation-free near the corners nu = +-1, where the
    # linearisation (fixed-point eigenvalues) needs it.
    gap = np.where(y >= 0, (1.0 - nu) - erfc(y), erfc(-y) - (1.0 + nu))
    r_kappa = 2.0 * gamma**2 * a_l * erf_prime(x) * gap
    r_nu = -2.0 * gamma**2 * erf(x)
    return -(1.0 - np.square(kappa)) * r_kappa, -(1.0 - np.square(nu)) * r_nu


def manifold_flow_velocity(problem: Problem, kappa, nu):
    """(kappa', nu') of the flow on M (module docstring; docs/math/dynamics.md#flow-on-m).
    Broadcasts; L and eps do not enter."""
    return _manifold_velocity(kappa, nu, problem.d, problem.gamma, problem.lam)


def manifold_flow(problem, kappa0: float, nu0: float, *, t_end, ode: OdeOptions = OdeOptions(),
                  delta=None, terminal=False, t_eval=None) -> FlowTrajectory:
    """Integrate the two-dimensional flow on M from (kappa0, nu0); components ("kappa", "nu").
    ``problem`` as in ``overlap_flow``."""
    lam_t = lambda_of_time(problem)
    check_realisable(problem, Overlaps(kappa=kappa0, nu=nu0))
    kappa0, nu0 = float(kappa0), float(nu0)
    d, gamma = problem.d, problem.gamma

    def rhs(t, y):
        return np.array(_manifold_velocity(y[0], y[1], d, gamma, lam_t(t)))

    return integrate_ode(rhs, [kappa0, nu0], ["kappa", "nu"], t_end, ode, delta, terminal, t_eval)
