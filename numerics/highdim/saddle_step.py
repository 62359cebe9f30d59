"""The step at which the aligned branch of the drift of one run ends at the saddle
(docs/math/highdim.md#the-end-of-the-branch-at-c-of-order-sqrt-d).

The drift of one run G (``per_run_drift``) is odd under (kappa, nu, theta, eta) -> -(kappa, nu, theta, eta), so
the saddle x = 0 is a fixed point at every c, and the aligned branch ends there in a pitchfork: at the c where the
2 x 2 Jacobian of G on M at the saddle, J = d(G_kappa, G_nu)/d(kappa, nu), is singular. Below it det J < 0 (the
saddle repels on M and the branch exists), above it det J > 0. ``saddle_pitchfork_step`` finds that c by
``brentq`` on det J, J by central differences with steps h / s in kappa (kappa lives on the scale 1/s there:
docs/math/highdim.md) and h in nu. Closed-form d -> infinity sibling: ``theory.highdim.branch_end_constant``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.optimize import brentq

from theory import Problem
from theory.checks import check_positive_real
from theory.parameters import PAPER_GAMMA, PAPER_L

from .differences import central_jacobian
from .effective_flow import check_highdim_settings
from .per_run import per_run_drift_on_m

__all__ = ["BranchEndExtrapolation", "ROOT_FLOOR", "extrapolated_branch_end", "SaddlePitchfork", "saddle_jacobian_on_m", "saddle_pitchfork_step"]

# central differences of G at the saddle (G odd there: truncation ~ step^2): measured at lambda = 1/s, L = 10,
# eps = 0.1, the root C moves by 4.7e-5, 4.6e-7, 4.6e-9 at steps 1e-2, 1e-3, 1e-4 (d = 1e6 and 1e8 alike), and by
# <= 5e-11 between 1e-5 and 1e-6 (the quadrature's noise): at 1e-5 the root is good to ``ROOT_FLOOR``
_STEP = 1e-5
ROOT_FLOOR = 1e-9


@dataclasses.dataclass(frozen=True)
class SaddlePitchfork:
    """``c``: the step where det J = 0 (to relative ``rtol``); ``constant`` = c / (B sqrt(d)); ``jacobian``: J at
    that c."""

    c: float
    constant: float
    jacobian: np.ndarray


def saddle_jacobian_on_m(problem, *, c, batch_size, step=_STEP) -> np.ndarray:
    """J = d(G_kappa, G_nu)/d(kappa, nu) of ``per_run_drift`` at the saddle x = 0 (module docstring)."""
    d, _, _, _, _ = check_highdim_settings(problem, c, batch_size)
    step = check_positive_real("step", step)
    on_m = lambda y: per_run_drift_on_m(problem, y, c=c, batch_size=batch_size)
    return central_jacobian(on_m, np.zeros(2), [step / np.sqrt(d / 2.0), step])


def saddle_pitchfork_step(problem, *, batch_size, bracket=(0.05, 5.0), rtol=1e-10, step=_STEP) -> SaddlePitchfork:
    """The c of the module docstring, searched in c / (B sqrt(d)) in ``bracket`` (a pair 0 < lo < hi) for the
    ``theory.Problem`` ``problem`` (lam a number, d >= 4), batch size B >= 1, J with the relative difference step
    ``step`` (``saddle_jacobian_on_m``). ValueError naming a bad argument;
    RuntimeError if det J does not change sign over the bracket."""
    lo, hi = (check_positive_real("bracket", x) for x in bracket)
    if not lo < hi:
        raise ValueError(f"bracket={bracket!r} is not allowed: need 0 < lo < hi")
    rtol = check_positive_real("rtol", rtol)
    d, _, _, _, _ = check_highdim_settings(problem, 1.0, batch_size)
    unit = batch_size * np.sqrt(d)

    def det(C):
        return float(np.linalg.det(saddle_jacobian_on_m(problem, c=C * unit, batch_size=batch_size, step=step)))

    if not det(lo) < 0 < det(hi):
        raise RuntimeError(f"det J at the saddle does not change sign from - to + over c / (B sqrt(d)) in {bracket}")
    C = brentq(det, lo, hi, rtol=rtol)
    return SaddlePitchfork(C * unit, C, saddle_jacobian_on_m(problem, c=C * unit, batch_size=batch_size, step=step))


# C_pf(d) moves by a relative O(d^-1/2) per decade (0.35% and 0.1% from 1e6 to 1e8 at the claim's settings): the next
# decade's root is searched within _NEAR of the last one: a quarter fewer evaluations of det J than the whole bracket
_NEAR = 0.01


def _root_near(problem, batch_size, previous):
    """C_pf of ``problem``: ``saddle_pitchfork_step`` in [1 - _NEAR, 1 + _NEAR] x ``previous`` (the root at the
    previous decade), or in its default bracket when ``previous`` is None or det J keeps its sign over that interval."""
    if previous is not None:
        try:
            return saddle_pitchfork_step(problem, batch_size=batch_size,
                                         bracket=((1 - _NEAR) * previous, (1 + _NEAR) * previous)).constant
        except RuntimeError:
            pass
    return saddle_pitchfork_step(problem, batch_size=batch_size).constant


@dataclasses.dataclass(frozen=True)
class BranchEndExtrapolation:
    """``limit``: C_pf(d) = c_pf / (B sqrt(d)) extrapolated to d = infinity; ``error``: its error estimate;
    ``values``: C_pf at ``ds``; ``rate``: the fitted exponent of |C_pf(d) - limit| between the last two d."""

    limit: float
    error: float
    values: np.ndarray
    ds: tuple
    rate: float


def extrapolated_branch_end(*, lam_bar, batch_size=1, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0,
                            ds=(10**6, 10**7, 10**8)) -> BranchEndExtrapolation:
    """C_pf(d) (``saddle_pitchfork_step`` at lambda = lam_bar / sqrt(d / 2)) at three successive decades ``ds``,
    fitted to C + a d^(-1/2) + b / d (docs/math/highdim.md#the-end-of-the-branch-at-c-of-order-sqrt-d: the
    corrections are relative O(1/s)). The fit is exact on the three points; its O(d^(-3/2)) error is estimated by
    its distance from the two-point extrapolation (sqrt(10) C(d_3) - C(d_2)) / (sqrt(10) - 1) through the last two
    (error O(b / d)), plus ``ROOT_FLOOR`` for the roots' own error."""
    ds = tuple(int(d) for d in ds)
    if len(ds) != 3 or ds[2] != 10 * ds[1] or ds[1] != 10 * ds[0] or ds[0] < 4:
        raise ValueError(f"ds={ds!r} is not allowed: three successive decades, the first >= 4")
    values = []
    for d in ds:
        problem = Problem(d=d, L=L, gamma=gamma, eps=eps, lam=lam_bar / np.sqrt(d / 2.0))
        values.append(_root_near(problem, batch_size, values[-1] if values else None))
    values = np.array(values)
    x = np.array(ds, dtype=float) ** -0.5
    limit = float(np.linalg.solve(np.vander(x, 3, increasing=True), values)[0])
    r10 = np.sqrt(10.0)
    two_point = (r10 * values[2] - values[1]) / (r10 - 1.0)
    rate = float(np.log(abs(values[1] - limit) / abs(values[2] - limit)) / np.log(10.0))
    return BranchEndExtrapolation(limit, abs(two_point - limit) + ROOT_FLOOR, values, ds, rate)
