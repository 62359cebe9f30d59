"""Mean online SGD (exact reduced simulator) against the three deterministic predictions
(docs/math/highdim.md#fluctuations-of-the-fast-overlap): the population flow, the effective ODE
F + alpha D, and the moment closure, all from the same fixed start."""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import OVERLAP_NAMES, Overlaps

from ..dynamics.flow import overlap_flow, schedule_in_flow_time
from ..dynamics.ode import OdeOptions
from ..dynamics.schedules import ScheduledProblem
from ..sgd.reduced import online_sgd_reduced
from .effective_flow import check_highdim_settings, effective_flow
from .fluctuations import moment_closure_flow

__all__ = ["SGDComparison", "compare_with_sgd"]

PREDICTIONS = ("population", "effective", "closure")


@dataclasses.dataclass(frozen=True)
class SGDComparison:
    """``t`` (n_t,) logged flow times; ``sgd_mean``, ``sgd_stderr`` (5, n_t); ``predictions``: name ->
    (5, n_t); ``sup_error``: name -> max over times of |mean - prediction| for kappa and nu."""

    t: np.ndarray
    sgd_mean: np.ndarray
    sgd_stderr: np.ndarray
    predictions: dict
    sup_error: dict
    n_runs: int


def compare_with_sgd(problem, start, *, c, batch_size, t_end, n_runs, rng, n_log=4,
                     step_schedule=None) -> SGDComparison:
    """Run ``n_runs`` of reduced SGD at alpha = c/d for t_end / alpha steps from the scalar 5-tuple
    ``start`` and integrate the three predictions. ``step_schedule``: lambda as a function of the
    step (e.g. ``numerics.PaperSchedule``), else the constant ``problem.lam``."""
    d, L, gamma, eps, alpha = check_highdim_settings(problem, c, batch_size)
    n = max(int(round(t_end / alpha)), n_log)
    init = Overlaps(**{k: np.full(n_runs, float(x)) for k, x in zip(OVERLAP_NAMES, start)})
    fields = dict(d=d, L=L, gamma=gamma, eps=eps)
    sgd_problem = problem if step_schedule is None else ScheduledProblem(**fields, lam=step_schedule)
    run = online_sgd_reduced(sgd_problem, init, alpha=alpha, n_steps=n, batch_size=batch_size, rng=rng,
                             log_every=max(n // n_log, 1))
    t = run.time
    shim = problem if step_schedule is None else ScheduledProblem(
        **fields, lam=schedule_in_flow_time(step_schedule, alpha))
    pop = overlap_flow(shim, Overlaps(**dict(zip(OVERLAP_NAMES, start))), t_end=t[-1], t_eval=t,
                       ode=OdeOptions(rtol=1e-8, atol=1e-10)).y
    preds = {"population": pop,
             "effective": effective_flow(shim, start, c=c, batch_size=batch_size, t_end=t[-1], t_eval=t).y,
             "closure": moment_closure_flow(shim, start, c=c, batch_size=batch_size, t_end=t[-1], t_eval=t).mean}
    x = np.stack([getattr(run, k) for k in OVERLAP_NAMES])  # (5, n_t, n_runs)
    mean, se = x.mean(axis=2), x.std(axis=2, ddof=1) / np.sqrt(n_runs)
    sup = {k: float(np.max(np.abs(mean[:2] - y[:2]))) for k, y in preds.items()}
    return SGDComparison(t, mean, se, preds, sup, n_runs)
