"""The logged trajectories of population PGD (``numerics.dynamics.pgd.overlap_pgd``,
``numerics.dynamics.pgd_vectors.vector_pgd``) and the bound on the gap between the two routes.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import OVERLAP_NAMES, Overlaps

__all__ = ["PGDTrajectory", "pgd_route_gap_bound"]

_EPS = np.finfo(float).eps


@dataclasses.dataclass(frozen=True)
class PGDTrajectory:
    """Logged PGD trajectories. ``steps`` has shape (n_log,); every other array (n_log, n_runs).

    excess_risk is R - eps^2 at the logged point with the lambda of that step (the quantity the
    paper's figures show, docs/math/risk.md#closed-form-population-risk). ``lam`` holds that lambda. ``alpha`` has shape (n_runs,).
    """

    steps: np.ndarray
    kappa: np.ndarray
    nu: np.ndarray
    theta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    excess_risk: np.ndarray
    lam: np.ndarray
    alpha: np.ndarray

    @property
    def roundoff(self) -> np.ndarray:
        """Bound on the float64 drift of each logged overlap from exact arithmetic, shape (n_log,):
        the unit-size iterate is rounded about once per step (u = eps/2, in the normalisation)
        and the errors add up linearly over the steps (the map is non-expanding where PGD is
        stable: alpha below 2 / the largest Hessian eigenvalue), u * step."""
        return 0.5 * _EPS * self.steps.astype(float)

    @property
    def abs_kappa(self):
        return np.abs(self.kappa)

    @property
    def abs_nu(self):
        return np.abs(self.nu)

    @property
    def distance_to_manifold(self):
        """sqrt(theta^2 + eta^2 + rho^2) per logged step and run."""
        return np.sqrt(self.theta ** 2 + self.eta ** 2 + self.rho ** 2)

    def state_at(self, index: int) -> tuple:
        """(kappa, nu, theta, eta, rho) of all runs at logged position ``index`` (accepted by
        ``overlap_pgd`` to resume a run)."""
        return tuple(getattr(self, name)[index] for name in OVERLAP_NAMES)

    def overlaps_at(self, index: int) -> Overlaps:
        """Overlaps of all runs at logged position ``index`` (e.g. -1 for the final step).
        Always feasible: every logged state is mapped by ``theory.feasible.nearest_feasible``,
        which removes the roundoff drift of the recursion (exact PGD stays feasible)."""
        return Overlaps(**{name: getattr(self, name)[index] for name in OVERLAP_NAMES})

    @property
    def final(self) -> Overlaps:
        return self.overlaps_at(-1)

    def select_runs(self, runs) -> "PGDTrajectory":
        """The same logs restricted to the runs ``runs`` (index array or slice)."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out = {k: (v if k == "steps" else v[..., runs]) for k, v in fields.items()}
        return PGDTrajectory(**out)

    def truncate(self, last_step: int) -> "PGDTrajectory":
        """The logs of steps <= last_step."""
        keep = self.steps <= last_step
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return PGDTrajectory(**{k: (v if k == "alpha" else v[keep]) for k, v in fields.items()})

    def followed_by(self, later: "PGDTrajectory") -> "PGDTrajectory":
        """These logs then those of ``later`` (a resumed run, same runs) after the last step here."""
        keep = later.steps > self.steps[-1]
        fields = [f.name for f in dataclasses.fields(self)]
        return PGDTrajectory(**{k: (getattr(self, k) if k == "alpha" else
                                np.concatenate([getattr(self, k), getattr(later, k)[keep]]))
                            for k in fields})


def pgd_route_gap_bound(n_steps) -> float:
    """Bound n_steps * eps on |overlap_pgd - vector_pgd| (each overlap) after n_steps steps from
    the same start: each route drifts from exact arithmetic by at most
    ``PGDTrajectory.roundoff`` = u per step, so the two by 2u = eps per step. Used by the tests
    and by the claim definition1-overlap-vs-vector."""
    return float(n_steps) * _EPS
