"""The first-alignment law of exact PGD started uniformly on the sphere product, from the
linearisation at the saddle x = 0 and the initial law (docs/math/highdim.md#escape-from-the-sphere).

At x = (kappa, nu, theta, eta, rho) = 0 the population flow's Jacobian is block diagonal and
symmetric: a (kappa, nu) block (on M), a (theta, eta) block (off M) and a stable rho rate. Each
2 x 2 block has one unstable rate, mu_on and mu_off, with unit eigenvectors r_on, r_off. A PGD
step linearised there is x <- (I + alpha J) x, so after t steps the amplitudes xi_on = <r_on,
(kappa_0, nu_0)>, xi_off = <r_off, (theta_0, eta_0)> of the start are multiplied by
(1 + alpha mu)^t (the stable parts die out). A run reaches the sphere |x| = eps of the unstable
plane at the (real, possibly negative) step t_exit solving

    xi_on^2 g_on^(2 t) + xi_off^2 g_off^(2 t) = eps^2,   g = 1 + alpha mu,

at the exit angle phi = atan(|xi_off| g_off^t / |xi_on| g_on^t) in [0, pi/2] (the flow is invariant
under (kappa, nu, theta, eta, rho) -> (kappa, nu, -theta, -eta, -rho) and x -> (-kappa, -nu, -theta,
-eta, rho), so only |xi_on|, |xi_off| matter). From eps (cos phi r_on, sin phi r_off, 0) the same
PGD (nonlinear) aligns (min(|kappa|, |nu|) >= 1 - delta) after s_after(phi) steps, or never when
the off-M mode wins (phi beyond the route boundary phi_c; one boundary, as found at the paper's lambdas). The predicted first aligned step is

    t_exit + s_after(phi)          (constant lambda),

tabulated on a grid of phi, interpolated in phi, phi_c located by bisection on the grid. Under a
schedule lambda(t) the after-exit PGD runs from step 0 with the schedule and its first aligned step
is taken as it is (absolute): it does not depend on the step the run starts from (checked by
``tests/test_highdim_escape_sphere.py``), the alignment being set by lambda(t), not by the escape.
The initial law (docs/math/initial-law.md#uniform-on-the-sphere) is sampled exactly.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.checks import check_integer, check_positive_real
from theory.parameters import Problem

from ..dynamics.initial import sample_initial_overlaps
from ..dynamics.alignment import first_aligned_steps
from ..dynamics.schedules import lambda_setting
from .escape import unstable_mode
from .fluctuations import population_velocity

__all__ = ["SphereEscapeLaw", "saddle_jacobian", "sphere_escape_law"]

_REFINE = 3            # bisection rounds of the route boundary, each on a grid of _REFINE_POINTS
_REFINE_POINTS = 9


@dataclasses.dataclass(frozen=True)
class SphereEscapeLaw:
    """``rates`` (mu_on, mu_off), ``directions`` (r_on, r_off), the exit-angle grid ``angles`` and
    the after-exit first aligned step there ``steps_after`` (-1: never), the route boundary
    ``boundary`` phi_c, and per draw of the initial law the exit step, exit angle and predicted
    first aligned step ``first_aligned`` (inf: never). ``aligned_fraction``: share of draws that align."""

    rates: tuple
    directions: np.ndarray
    angles: np.ndarray
    steps_after: np.ndarray
    boundary: float
    exit_steps: np.ndarray
    exit_angles: np.ndarray
    first_aligned: np.ndarray

    @property
    def aligned_fraction(self) -> float:
        return float(np.mean(np.isfinite(self.first_aligned)))

    def aligned_quantiles(self, quantiles) -> np.ndarray:
        """Quantiles of the first aligned step among the draws that align."""
        return np.quantile(self.first_aligned[np.isfinite(self.first_aligned)], quantiles)


def saddle_jacobian(problem, h: float = 1e-6) -> np.ndarray:
    """The 5 x 5 Jacobian of the population flow at x = 0 by central differences of the closed form
    (``population_velocity``), columns in the order of OVERLAP_NAMES."""
    P = np.vstack([h * np.eye(5), -h * np.eye(5)])
    F = population_velocity(problem, P)
    return ((F[:5] - F[5:]) / (2.0 * h)).T


def _first_aligned(problem, alpha, starts, n_steps, delta, log_every):
    return first_aligned_steps(problem, tuple(starts.T), alpha=alpha, n_steps=n_steps, delta=delta,
                               log_every=log_every)


def _route_table(problem, alpha, directions, n_steps, delta, eps, n_angles, log_every):
    """(angles, steps after, phi_c): the grid, refined by bisection around the route boundary."""
    def run(phis):
        starts = np.zeros((len(phis), 5))
        starts[:, :2] = eps * np.cos(phis)[:, None] * directions[0]
        starts[:, 2:4] = eps * np.sin(phis)[:, None] * directions[1]
        return _first_aligned(problem, alpha, starts, n_steps, delta, log_every)

    angles = np.linspace(0.0, 0.5 * np.pi, n_angles)
    steps = run(angles)
    if steps[0] < 0 or steps[-1] >= 0:
        return angles, steps, (0.0 if steps[0] < 0 else float(angles[-1]))
    i = int(np.argmax(steps < 0)) - 1     # the first angle whose run does not align follows i
    lo, hi = angles[i], angles[i + 1]
    for _ in range(_REFINE):
        grid = np.linspace(lo, hi, _REFINE_POINTS + 2)[1:-1]
        found = run(grid)
        angles, steps = np.concatenate([angles, grid]), np.concatenate([steps, found])
        j = int(np.argmax(found < 0)) if np.any(found < 0) else len(grid)
        lo, hi = (grid[j - 1] if j > 0 else lo), (grid[j] if j < len(grid) else hi)
    order = np.argsort(angles)
    return angles[order], steps[order], 0.5 * (lo + hi)


def _exit_steps(xi, growth, eps):
    """Real t with sum_i xi_i^2 growth_i^(2 t) = eps^2 (increasing in t), by bisection."""
    logs = np.log(growth)
    lo = np.full(xi.shape[0], -300.0 / logs.max())     # exp(2 t log g) within float range
    hi = np.full(xi.shape[0], 300.0 / logs.max())
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        big = np.sum(xi ** 2 * np.exp(2.0 * mid[:, None] * logs), axis=1) > eps ** 2
        hi, lo = np.where(big, mid, hi), np.where(big, lo, mid)
    return 0.5 * (lo + hi)


def sphere_escape_law(problem, *, alpha, n_steps, rng, n_draws=4000, delta=0.05, eps=1e-3,
                      n_angles=21, log_every=10, on_manifold=False) -> SphereEscapeLaw:
    """The law of the module docstring for PGD with step ``alpha`` over ``n_steps`` steps on
    ``problem`` (a ``theory.Problem`` or ``ScheduledProblem``, scalar fields, eps unused) from
    ``n_draws`` draws of the initial law on the sphere (``rng``; ``on_manifold``: the law on M, where
    xi_off = 0 and the law is that of ``escape_prediction`` with PGD in place of the flow)."""
    alpha = check_positive_real("alpha", alpha)
    for name, value, low in (("n_steps", n_steps, 1), ("n_draws", n_draws, 1), ("n_angles", n_angles, 3),
                             ("log_every", log_every, 1)):
        check_integer(name, value, low)
    if not 0 < delta < 1:
        raise ValueError(f"delta={delta!r} is not allowed: need 0 < delta < 1")
    if not 0 < eps < 0.1:
        raise ValueError(f"eps={eps!r} is not allowed: the exit radius must be in (0, 0.1), inside the linear zone")
    lam = lambda_setting(problem)
    schedule = callable(lam)
    frozen = Problem(d=problem.d, L=problem.L, gamma=problem.gamma, eps=0.0,
                     lam=float(lam(0)) if schedule else float(lam))
    J = saddle_jacobian(frozen)
    (mu_on, r_on), (mu_off, r_off) = unstable_mode(J[:2, :2]), unstable_mode(J[2:4, 2:4])
    if min(mu_on, mu_off) <= 0:
        raise ValueError(f"problem={problem!r} is not allowed: the saddle needs an unstable rate in "
                         f"both blocks (got {mu_on:.4g}, {mu_off:.4g})")
    directions = np.array([r_on, r_off])
    angles, after, boundary = _route_table(problem, alpha, directions, n_steps, delta, eps, n_angles, log_every)
    x0 = sample_initial_overlaps(int(problem.d), n_draws, rng, on_manifold=on_manifold)
    xi = np.abs(np.column_stack([r_on @ np.array([x0.kappa, x0.nu]), r_off @ np.array([x0.theta, x0.eta])]))
    growth = 1.0 + alpha * np.array([mu_on, mu_off])
    t_exit = _exit_steps(xi, growth, eps)
    at_exit = xi * growth[None, :] ** t_exit[:, None]
    phi = np.arctan2(at_exit[:, 1], at_exit[:, 0])
    ok = after >= 0
    steps = np.interp(phi, angles[ok], after[ok].astype(float)) if ok.any() else np.full(n_draws, np.inf)
    first = np.where(phi < boundary, steps + (0.0 if schedule else t_exit), np.inf)
    return SphereEscapeLaw((mu_on, mu_off), directions, angles, after, boundary, t_exit, phi, first)
