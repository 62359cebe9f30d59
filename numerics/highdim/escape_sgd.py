"""The escape of online SGD from the saddle (0, 0) with both unstable modes, and the law of its
first-alignment time (docs/math/highdim.md#two-unstable-modes-under-sgd).

At the saddle the drift F + alpha D has two unstable modes of nearly equal rates: r on M (kappa, nu)
and r_perp off M (theta, eta). Started on M, PGD excites only r; the noise of SGD excites both. They
compete at the scale 1/sqrt(d): F has curvature ~ d along theta (the informative token's mean s k*),
so an off-M amplitude of order 1/sqrt(d) already lowers the on-M rate by O(1), and conversely. In
u = sqrt(d) x this window is a nonlinear SDE with d-free coefficients when lambda = lambda_bar / s,
not a linear one. It is simulated (Euler-Maruyama, step ``dt``): drift F(x) (closed form) + alpha D
linearised at the saddle, noise sqrt(alpha C_0 / B) dW (C_0 the increment covariance at the saddle),
from the initial law on M, until |(kappa, nu)| or |(theta, eta)| reaches the exit radius R.

Runs that exit off M go to the swapped state ((theta, eta) ~ (0.85, 0.99) at lambda = 1/s) and do
not align on the time scale of the others: the law of the first-alignment time has an atom at
infinity, of mass ``slow_fraction``. A run that exits on M at x_exit follows the drift of one run G
(``per_run_drift``: the fast theta-fluctuation averaged in discrete time) and first aligns,
min(|kappa|, |nu|) >= 1 - delta, at

    tau = tau_exit + tau_after(R r) + log(R / |<r, x_exit>|) / mu,

tau_after(R r) the alignment time of dx/dtau = G(x) from R r (one integration per prediction).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.highdim import gradient_moments, population_drift, second_order_drift, task_scalars

from ..dynamics.initial import sample_initial_overlaps
from .effective_flow import check_highdim_settings
from .escape import alignment_time_on_m, unstable_mode
from .fluctuations import increment_covariance, population_velocity
from .per_run import per_run_drift_on_m
from .window_expansion import EXPANSION_ORDERS, saddle_expansion

__all__ = ["EscapeWindow", "SGDEscapeLaw", "escape_window", "sgd_escape_law"]

_H = 1e-6  # central-difference step of the Jacobians at the saddle
_TAU_QUADRATURE = 0.4  # trapezoid step of the quadratures along the drift of one run (_tau_after)


@dataclasses.dataclass(frozen=True)
class SGDEscapeLaw:
    """The predicted law of the first-alignment flow time of online SGD from the initial law on M:
    ``times`` (n_samples, sorted; inf for the runs that exit off M), the on-M and off-M rates
    ``rate``, ``rate_off``, the on-M unit direction ``direction``, ``exit_radius`` R,
    ``tau_after`` = tau_after(R r), and ``slow_fraction`` (the fraction exiting off M)."""

    rate: float
    rate_off: float
    direction: np.ndarray
    exit_radius: float
    tau_after: float
    slow_fraction: float
    times: np.ndarray

    def quantile(self, q):
        """The q-quantile(s) of the first-alignment time (inf beyond 1 - slow_fraction)."""
        return np.quantile(self.times, q, method="inverted_cdf")

    def cdf(self, t):
        """P(first alignment <= t) under the predicted law."""
        return np.searchsorted(self.times, np.asarray(t, dtype=float), side="right") / len(self.times)


def _saddle_linearisation(problem, alpha, batch_size):
    """(J, D_lin, C_0): the Jacobian of F + alpha D at the saddle, its alpha D part, and the
    per-sample increment covariance there."""
    def drift(x):
        m = gradient_moments(problem, tuple(x), check=False)
        return population_drift(m, tuple(x)) + alpha * second_order_drift(m, tuple(x), batch_size)

    steps = _H * np.eye(5)
    J = np.array([(drift(h) - drift(-h)) / (2 * _H) for h in steps]).T
    F = population_velocity(problem, np.vstack([steps, -steps]))
    J_F = ((F[:5] - F[5:]) / (2 * _H)).T
    zero = (0.0,) * 5
    return J, J - J_F, increment_covariance(gradient_moments(problem, zero, check=False), zero)


def _state_step(expansion, xa, z, dt, batch_size):
    """(alpha D, noise increment) at the rows of xa from the expansion of C and D about the saddle."""
    w, U = np.linalg.eigh(expansion.covariance(xa))
    root = U * np.sqrt(np.clip(w, 0.0, None) * expansion.alpha * dt / batch_size)[:, None, :]
    return expansion.correction(xa), np.einsum("nij,nj->ni", root, z)


def _window(problem, x, D_lin, noise, radius, dt, t_max, rng, expansion=None, batch_size=1):
    """Euler-Maruyama of the window SDE from the rows of x until |(kappa, nu)| or |(theta, eta)|
    reaches ``radius``: exit times, whether on M, and the exit states. With ``expansion`` (a
    ``SaddleExpansion``) alpha D and the noise covariance are those of the state, expanded."""
    n = len(x)
    t, on_m = np.full(n, np.inf), np.zeros(n, bool)
    idx, xa = np.arange(n), x  # the samples still inside and their states (C order, as the products below expect)
    tau = 0.0
    while idx.size and tau < t_max:
        if expansion is None:
            xa = xa + dt * (population_velocity(problem, xa) + xa @ D_lin.T) + rng.standard_normal(xa.shape) @ noise.T
        else:
            correction, dW = _state_step(expansion, xa, rng.standard_normal(xa.shape), dt, batch_size)
            xa = xa + dt * (population_velocity(problem, xa) + correction) + dW
        xa = np.ascontiguousarray(xa)
        tau += dt
        on, off = np.hypot(xa[:, 0], xa[:, 1]), np.hypot(xa[:, 2], xa[:, 3])
        out = np.maximum(on, off) >= radius
        if out.any():  # the exits leave the state, which is compacted (rarely: most steps see none)
            gone, stay = idx[out], ~out
            t[gone], on_m[gone], x[gone] = tau, on[out] >= off[out], xa[out]
            idx, xa = idx[stay], xa[stay]
    if idx.size:
        raise RuntimeError(f"{idx.size} samples did not leave the saddle by t_max={t_max}")
    return t, on_m, x


def _tau_after(problem, start, c, batch_size, delta, t_max):
    """First time min(|kappa|, |nu|) = 1 - delta along dx/dtau = G(x) from ``start`` = (kappa, nu) on M. M is
    invariant under G (module docstring of ``per_run_drift``), so the path is that of (kappa, nu) with theta = eta =
    rho = 0: two equations, without the off-M fast mode that makes the five stiff."""
    def on_m(y):
        return per_run_drift_on_m(problem, y, c=c, batch_size=batch_size, quadrature_step=_TAU_QUADRATURE)

    # rtol 1e-4: the alignment time to ~1e-3 (measured at lambda = 1/s, c = 0.5, delta = 0.2 against rtol 1e-8:
    # 8.48686 vs 8.48673, 8.14326 vs 8.14223, 8.05069 vs 8.04998 at d = 10^3, 10^3.5, 10^4; the five equations at
    # rtol 1e-4 were as far, 5.7e-4 to 7.4e-4, with 153-213 right-hand sides against 77-79), far below the law's own
    # error against SGD (docs/math/highdim.md#two-unstable-modes-under-sgd). The quadratures (three per right-hand
    # side, the cost) at trapezoid step _TAU_QUADRATURE, half the nodes of the default 0.2: the drift changes by
    # <= 2e-14 relative at lambda = lambda_bar / s, d >= 10^3, lambda_bar <= 4, and by <= 1.3e-7 at the worst gate
    # scale lambda sd = 1 (measured against step 0.1), 10^3 below this rtol
    return alignment_time_on_m(on_m, start, delta=delta, t_max=t_max, rtol=1e-4, atol=1e-7, what="drift-of-one-run")


@dataclasses.dataclass(frozen=True)
class EscapeWindow:
    """The window SDE's exits: ``exit_times`` (on the grid of step ``dt``: the first step with
    |(kappa, nu)| or |(theta, eta)| >= ``exit_radius``), ``on_m`` (the on-M amplitude is the larger
    there), ``amplitude`` |<r, (kappa, nu)>| at the exit, the rates ``rate`` (on M) and ``rate_off``,
    the on-M unit direction ``direction``."""

    rate: float
    rate_off: float
    direction: np.ndarray
    exit_radius: float
    dt: float
    exit_times: np.ndarray
    on_m: np.ndarray
    amplitude: np.ndarray

    @property
    def slow_fraction(self) -> float:
        """The fraction of runs that leave the saddle off M."""
        return float(np.mean(~self.on_m))


def escape_window(problem, *, c, batch_size=1, rng, n_samples=4000, exit_radius=None, dt=0.01,
                  t_max=100.0, expansion_order=None) -> EscapeWindow:
    """The window SDE of the module docstring for online SGD at step c/d, batch B, constant
    ``problem.lam``, from ``n_samples`` draws of the initial law on M (``rng``). ``exit_radius``
    None: max(0.1, 2.5 / sqrt(d)) (outside the window, |u| >= 2.5, and before the fast mode of the
    open gate makes the SDE stiff). ``expansion_order`` None: C frozen at C_0 and alpha D linear;
    1 or 2: both expanded about the saddle to that order (``numerics.highdim.saddle_expansion``,
    docs/math/highdim.md#the-state-dependence-of-the-window; ~4 times the cost per step)."""
    d, _, _, _, alpha = check_highdim_settings(problem, c, batch_size)
    if not dt > 0.0:
        raise ValueError(f"dt={dt!r} is not allowed: need dt > 0")
    if expansion_order not in (None, *EXPANSION_ORDERS):
        raise ValueError(f"expansion_order={expansion_order!r} is not allowed: None or one of {EXPANSION_ORDERS}")
    expansion = None if expansion_order is None else saddle_expansion(problem, alpha=alpha, batch_size=batch_size,
                                                                      order=expansion_order)
    radius = max(0.1, 2.5 / np.sqrt(d)) if exit_radius is None else float(exit_radius)
    J, D_lin, C = _saddle_linearisation(problem, alpha, batch_size)
    mu, r = unstable_mode(J[:2, :2])
    mu_off, _ = unstable_mode(J[2:4, 2:4])
    w, U = np.linalg.eigh(C)
    noise = U * np.sqrt(np.clip(w, 0.0, None) * alpha * dt / batch_size)
    o = sample_initial_overlaps(d, n_samples, rng, on_manifold=True)
    x0 = np.stack([o.kappa, o.nu, o.theta, o.eta, o.rho], axis=1)
    t_exit, on_m, x = _window(problem, x0, D_lin, noise, radius, dt, t_max, rng, expansion, batch_size)
    return EscapeWindow(mu, mu_off, r, radius, dt, t_exit, on_m, np.abs(x[:, :2] @ r))


def sgd_escape_law(problem, *, c, batch_size=1, rng, n_samples=4000, delta=0.05, exit_radius=None,
                   dt=0.01, t_max=100.0, expansion_order=None) -> SGDEscapeLaw:
    """The law of the module docstring: ``escape_window`` (``expansion_order`` as there), then
    tau_after(R r) along the drift of one run on M to min(|kappa|, |nu|) >= 1 - delta (one integration of
    (kappa, nu), LSODA)."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta={delta!r} is not allowed: need 0 < delta < 1")
    win = escape_window(problem, c=c, batch_size=batch_size, rng=rng, n_samples=n_samples,
                        exit_radius=exit_radius, dt=dt, t_max=t_max, expansion_order=expansion_order)
    R, r, on = win.exit_radius, win.direction, win.on_m
    tau_after = _tau_after(problem, (R * r[0], R * r[1]), c, batch_size, delta, t_max)
    times = np.full(len(on), np.inf)
    times[on] = win.exit_times[on] + tau_after + np.log(R / win.amplitude[on]) / win.rate
    return SGDEscapeLaw(win.rate, win.rate_off, r, R, tau_after, win.slow_fraction, np.sort(times))
