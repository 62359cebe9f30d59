"""Mean online SGD (exact reduced simulator) against the three deterministic predictions
(docs/math/highdim.md#fluctuations-of-the-fast-overlap): the population flow, the effective ODE
F + alpha D, and the moment closure, all from the same fixed start."""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import OVERLAP_NAMES, Overlaps

from ..dynamics.flow import overlap_flow, schedule_in_flow_time
from ..dynamics.ode import OdeOptions
from ..dynamics.schedules import lambda_setting
from ..montecarlo.statistics import sd_with_stderr
from ..sgd.reduced import online_sgd_reduced
from .effective_flow import EFFECTIVE_ODE, check_highdim_settings, effective_flow
from .fluctuations import moment_closure_flow

__all__ = ["SGDComparison", "compare_with_sgd", "PREDICTIONS"]

PREDICTIONS = ("population", "effective", "closure", "continuous_closure", "averaged_closure", "mean_drift_closure")
DEFAULT_PREDICTIONS = PREDICTIONS[:3]


@dataclasses.dataclass(frozen=True)
class SGDComparison:
    """``t`` (n_t,) logged flow times; ``sgd_mean``, ``sgd_stderr`` (5, n_t) over ``n_runs`` runs;
    ``predictions``: name -> (5, n_t); ``sup_error`` (a property): name -> max over times of
    |mean - prediction| for kappa and nu (components as ``OVERLAP_NAMES``). One run's fluctuations: ``sgd_sd`` (5, n_t) the
    run-to-run standard deviation, ``sgd_sd_stderr`` its standard error (delta method on the sample
    variance, var(s^2) = (m4 - s^4) / n, se(s) = se(s^2) / (2 s)); ``covariances``: for each closure
    prediction, its covariance Sigma (5, 5, n_t) of one run's overlaps
    (docs/math/highdim.md#one-runs-fluctuations)."""

    t: np.ndarray
    sgd_mean: np.ndarray
    sgd_stderr: np.ndarray
    predictions: dict
    n_runs: int
    sgd_sd: np.ndarray = None
    sgd_sd_stderr: np.ndarray = None
    covariances: dict = dataclasses.field(default_factory=dict)

    @property
    def sup_error(self) -> dict:
        return {k: float(np.max(np.abs(self.sgd_mean[:2] - y[:2]))) for k, y in self.predictions.items()}

    def sup_per_overlap(self, name: str):
        """(sup (5,), stderr (5,), t (5,)): per overlap, the largest |mean SGD - prediction ``name``|
        over the logged times, the standard error of the SGD mean at that time, and the time."""
        err = np.abs(self.sgd_mean - self.predictions[name])
        i = np.argmax(err, axis=1)
        rows = np.arange(err.shape[0])
        return err[rows, i], self.sgd_stderr[rows, i], self.t[i]


def _flow_time_problem(problem, alpha):
    """The problem with lambda as a function of the flow time tau = alpha * step."""
    lam = lambda_setting(problem)
    if not callable(lam):
        return problem
    return dataclasses.replace(problem, lam=schedule_in_flow_time(lam, alpha))


def compare_with_sgd(problem, start, *, c, batch_size, t_end, n_runs, rng, n_log=4,
                     predictions=DEFAULT_PREDICTIONS, up_to_sign=False, ode: OdeOptions = EFFECTIVE_ODE,
                     quadrature_step=0.2) -> SGDComparison:
    """Run ``n_runs`` of reduced SGD at alpha = c/d for t_end / alpha steps from the scalar 5-tuple
    ``start`` and integrate the three predictions. ``problem``: a ``theory.Problem`` (constant
    lambda) or a ``numerics.ScheduledProblem`` whose lam is a number or a step schedule (a callable
    of the step index, e.g. ``numerics.PaperSchedule``), as ``numerics.online_sgd_reduced`` takes;
    the predictions follow lambda(tau / alpha) in flow time tau. ``predictions``: which of
    ``PREDICTIONS`` to integrate (the closures cost most: a 20-dim stiff ODE; "continuous_closure" is
    the closure without its discrete-time term, docs/math/highdim.md#the-discrete-time-variance-of-the-fast-mode,
    "averaged_closure" the closure with D and C averaged over the fast mode's spread, "mean_drift_closure" the
    closure whose covariance equation has the Jacobian of the mean's whole drift,
    docs/math/highdim.md#the-covariance-with-the-jacobian-of-the-mean-drift). ``up_to_sign``: each
    run at each logged time is first mapped by the exact symmetry (k, v) -> (-k, -v), i.e.
    (kappa, nu, theta, eta, rho) -> (-kappa, -nu, -theta, -eta, rho), into the half-space
    kappa + nu >= 0 (the predictor and the law of SGD are invariant under it), so that runs that
    crossed to the mirror solution are compared with the prediction's branch. ``ode``: the
    integrator's ``numerics.OdeOptions`` for the effective ODE (``numerics.highdim.effective_flow``), and
    ``quadrature_step`` its trapezoid step."""
    unknown = set(predictions) - set(PREDICTIONS)
    if unknown or not predictions:
        raise ValueError(f"predictions={predictions!r} is not allowed: choose among {PREDICTIONS}")
    alpha = check_highdim_settings(problem, c, batch_size)[-1]
    if isinstance(lambda_setting(problem), list):
        raise ValueError(f"problem.lam={problem.lam!r} is not allowed: one lambda (or schedule) for all runs")
    n = max(int(round(t_end / alpha)), n_log)
    init = Overlaps(**{k: np.full(n_runs, float(x)) for k, x in zip(OVERLAP_NAMES, start)})
    run = online_sgd_reduced(problem, init, alpha=alpha, n_steps=n, batch_size=batch_size, rng=rng,
                             log_every=max(n // n_log, 1))
    t = run.time
    shim = _flow_time_problem(problem, alpha)
    closure = {"closure": {}, "continuous_closure": {"discrete_time": False},
               "averaged_closure": {"average_fast": True}, "mean_drift_closure": {"covariance_jacobian": "mean_drift"}}
    preds, covs = {}, {}
    for name in (k for k in PREDICTIONS if k in predictions):
        if name == "population":
            preds[name] = overlap_flow(shim, Overlaps(**dict(zip(OVERLAP_NAMES, start))), t_end=t[-1], t_eval=t,
                                       ode=OdeOptions(rtol=1e-8, atol=1e-10)).y
        elif name == "effective":
            preds[name] = effective_flow(shim, start, c=c, batch_size=batch_size, t_end=t[-1], t_eval=t, ode=ode,
                                         quadrature_step=quadrature_step).y
        else:
            out = moment_closure_flow(shim, start, c=c, batch_size=batch_size, t_end=t[-1], t_eval=t,
                                      **closure[name])
            preds[name], covs[name] = out.mean, out.cov
    x = np.stack([getattr(run, k) for k in OVERLAP_NAMES])  # (5, n_t, n_runs)
    if up_to_sign:
        x[:4] *= np.where(x[0] + x[1] < 0, -1.0, 1.0)
    mean, (sd, sd_se) = x.mean(axis=2), sd_with_stderr(x, axis=2)
    return SGDComparison(t, mean, sd / np.sqrt(n_runs), preds, n_runs, sd, sd_se, covs)
