"""Phase portrait of the gradient flow on M (docs/math/dynamics.md#fixed-points-and-their-types; paper Theorem 5): fixed points, their linear
classification, the separatrix, and the sign of the limit from a starting point.

On M the flow (``numerics.dynamics.flow.manifold_flow_velocity``) is odd under (kappa, nu) -> (-kappa, -nu).
Its fixed points in [-1, 1]^2 are exactly (0, 0) and the four corners (+-1, +-1): kappa' = 0 needs
kappa = +-1 or dR/dkappa = 0, nu' = 0 needs nu = +-1 or erf(a_l kappa) = 0 (kappa = 0), and
dR/dkappa = 0 with nu = +-1 would need erf(a_l kappa / c) = +-1, impossible for finite kappa.
Linearisation (derived; the tests compare it with finite differences):
- (0, 0): Jacobian [[-p, q], [q, 0]], p = 2 gamma^2 a_l^2 erf'(0)^2 / c, q = 2 gamma^2 a_l erf'(0),
  c = sqrt(1 + 4 lambda^2 gamma^2); det = -q^2 < 0, a saddle. Its stable eigenvector points into
  the mixed quadrants (kappa nu < 0), its unstable one into kappa nu > 0.
- (s, s), s = +-1: diag(2 R_kappa, 2 R_nu) at (1, 1) (both < 0): asymptotically stable.
- (s, -s): both eigenvalues > 0: unstable node.
Consequently the quadrants kappa, nu >= 0 (not both 0) flow to (1, 1) and kappa, nu <= 0 to (-1, -1);
each mixed quadrant is split by the stable manifold of the saddle (the separatrix, a curve from
(0, 0) to the unstable corner): starts on the side of (1, 1) go to (1, 1), the others to (-1, -1).
So in a mixed quadrant neither the sign of kappa_0 nor that of nu_0 decides alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy  # scipy.integrate loads on first use (scipy's lazy submodules)

from theory.parameters import Problem

from .flow import manifold_flow_velocity
from .ode import OdeOptions, check_solution

__all__ = ["FixedPoint", "manifold_fixed_points", "manifold_jacobian", "Separatrix", "separatrix",
           "predicted_limit_sign"]


@dataclasses.dataclass(frozen=True)
class FixedPoint:
    """A fixed point of the flow on M with its Jacobian (central differences) and classification."""

    kappa: float
    nu: float
    jacobian: np.ndarray
    eigenvalues: np.ndarray
    kind: str  # "saddle", "stable node", "unstable node"


def manifold_jacobian(problem: Problem, kappa, nu, *, h=1e-6):
    """2x2 Jacobian of (kappa', nu') by central differences with step h (truncation O(h^2),
    roundoff O(eps/h): ~1e-10 relative for h = 1e-6)."""
    f = lambda x, y: np.array(manifold_flow_velocity(problem, x, y))
    return np.column_stack([(f(kappa + h, nu) - f(kappa - h, nu)) / (2 * h),
                            (f(kappa, nu + h) - f(kappa, nu - h)) / (2 * h)])


def manifold_fixed_points(problem: Problem) -> list:
    """The five fixed points (0, 0), (+-1, +-1) with their linear classification."""
    points = []
    for kappa, nu in [(0.0, 0.0), (1.0, 1.0), (-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0)]:
        jac = manifold_jacobian(problem, kappa, nu)
        eig = np.linalg.eigvals(jac)
        if np.max(np.abs(eig.imag)) > 0 or np.min(np.abs(eig.real)) == 0:
            kind = "non-hyperbolic or focus"
        elif np.all(eig.real < 0):
            kind = "stable node"
        elif np.all(eig.real > 0):
            kind = "unstable node"
        else:
            kind = "saddle"
        points.append(FixedPoint(kappa, nu, jac, np.sort(eig.real), kind))
    return points


@dataclasses.dataclass(frozen=True)
class Separatrix:
    """The stable manifold of (0, 0) in the quadrant kappa > 0 > nu, as samples (kappa, nu) with
    kappa increasing from 0; ``nu_at(kappa)`` interpolates (the other mixed quadrant is its image
    under (kappa, nu) -> (-kappa, -nu)). ``slope_at_origin``: nu/kappa along the stable eigenvector."""

    kappa: np.ndarray
    nu: np.ndarray
    slope_at_origin: float

    def nu_at(self, kappa):
        return np.interp(kappa, self.kappa, self.nu)


def separatrix(problem: Problem, *, start=1e-8, t_end=1e4,
               ode: OdeOptions = OdeOptions(rtol=1e-11, atol=1e-14)) -> Separatrix:
    """Integrate the time-reversed flow on M from (0, 0) + start * (stable eigenvector), where the
    reversed flow is repelled from the saddle along the curve; stops when |kappa| or |nu| reaches
    1 - 1e-9. Raises if the integration fails or the curve is not a graph over kappa."""
    jac = manifold_jacobian(problem, 0.0, 0.0)
    eig, vec = np.linalg.eig(jac)
    stable = vec[:, np.argmin(eig.real)].real
    stable = stable if stable[0] > 0 else -stable

    def back(t, y):
        return -np.array(manifold_flow_velocity(problem, y[0], y[1]))

    def near_corner(t, y):
        return max(abs(y[0]), abs(y[1])) - (1.0 - 1e-9)
    near_corner.terminal = True
    sol = scipy.integrate.solve_ivp(back, (0.0, t_end), start * stable, **ode.kwargs(), events=[near_corner])
    check_solution(sol, "separatrix", ode.method)
    kappa, nu = np.r_[0.0, sol.y[0]], np.r_[0.0, sol.y[1]]
    if not np.all(np.diff(kappa) > 0):
        raise RuntimeError("the separatrix is not a graph over kappa for these parameters")
    return Separatrix(kappa, nu, float(stable[1] / stable[0]))


def predicted_limit_sign(kappa0, nu0, sep: Separatrix):
    """+1 if the flow on M from (kappa0, nu0) goes to (1, 1), -1 if to (-1, -1), 0 on the
    separatrix (module docstring). Broadcasts."""
    kappa0, nu0 = np.broadcast_arrays(np.asarray(kappa0, float), np.asarray(nu0, float))
    # Map the quadrant kappa < 0 < nu onto kappa > 0 > nu by the odd symmetry.
    flip = kappa0 < 0
    k = np.where(flip, -kappa0, kappa0)
    n = np.where(flip, -nu0, nu0)
    side = np.sign(n - sep.nu_at(k))  # above the curve (towards (1, 1)) or below
    out = np.where(flip, -side, side)
    same = kappa0 * nu0 >= 0
    return np.where(same, np.sign(kappa0 + nu0), out)
