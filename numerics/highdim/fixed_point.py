"""The aligned fixed point of online SGD at step alpha = c/d and the largest step
(docs/math/highdim.md#the-largest-step).

The drift of one run G = F + alpha D + (fast-mode curvature) (``per_run_drift``) keeps M invariant;
its aligned fixed point (kappa*, nu*) on M solves G_kappa = G_nu = 0 and moves from the population
flow's (k*, v*) towards the saddle (0, 0) as c grows. Its stability is read from the eigenvalues
of the 5 x 5 Jacobian dG/dx (central differences): the on-M block (kappa, nu) and the off-M block
(theta, eta, rho) decouple on M. The critical step c_crit is the smallest c at which the largest real
part of an eigenvalue crosses 0 (the fixed point loses stability) or the branch of fixed points ends
(a fold): beyond it the runs do not stay aligned.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.optimize import brentq

from theory.checks import check_positive_real

from .differences import central_jacobian
from .effective_flow import check_highdim_settings
from .per_run import FastModeUnstable, fast_mode, per_run_drift, per_run_drift_on_m

__all__ = ["AlignedFixedPoint", "aligned_fixed_point", "fixed_point_branch", "CriticalStep", "critical_step",
           "stability_jacobian"]

_JAC_STEP = 1e-5


def _eigen_step(d):
    """The central-difference step of the 5 x 5 Jacobian whose eigenvalues decide stability: 1e-5 up to d = 1e3,
    then 1e-5 sqrt(1e3 / d). Its truncation error grows like h^2 d (the fast direction's entry of dG/dx grows with d
    while the fast spread it is averaged over shrinks): measured at lambda = 1/s, c = 0.45 sqrt(d) near the end of the
    branch, 1.7e-4 in the off-M eigenvalues at d = 1e6, h = 1e-6 and 2.6e-4 at d = 1e8, h = 1e-7; so h^2 d fixed at
    its d = 1e3 value keeps it ~2e-5 (below the slow rates there, >= 0.01), while the quadrature's noise 1e-13 / h
    stays <= 3e-6 up to d = 1e8 (docs/math/highdim.md#the-end-of-the-branch-at-c-of-order-sqrt-d)."""
    return _JAC_STEP * min(1.0, float(np.sqrt(1e3 / d)))
# on |G| at the root: moves (kappa, nu) by <= 1e-9 / (slowest rate, >~ 0.01), far below any Monte-Carlo
# error; far above the quadrature's ~1e-13 noise, which stops Newton's method from doing much better
_ROOT_TOL = 1e-9
# a kept Jacobian must cut max |G| this much per step (Newton's quadratic convergence does near the root), else a fresh one
_CONTRACTION = 4.0


@dataclasses.dataclass(frozen=True)
class AlignedFixedPoint:
    """``kappa``, ``nu`` of the fixed point on M at step c/d, batch ``batch_size``; ``eigenvalues`` (5,)
    of dG/dx there, sorted by real part (last: the largest); ``stable``: all real parts < 0;
    ``residual``: |G(kappa, nu)|; ``s2_theta_variance``: s^2 Var(theta) of a run there;
    ``fast_contraction``: alpha |mu_f| of the fast mode there (the step overshoots it at >= 2)."""

    c: float
    batch_size: int
    kappa: float
    nu: float
    eigenvalues: np.ndarray
    residual: float
    s2_theta_variance: float
    fast_contraction: float

    @property
    def stable(self) -> bool:
        return self.instability < 0

    @property
    def growth_rate(self) -> float:
        """The largest real part of the eigenvalues (< 0: stable in flow time)."""
        return float(self.eigenvalues[-1].real)

    @property
    def instability(self) -> float:
        """max(growth rate, alpha |mu_f| - 2): < 0 iff the fixed point is stable (both crossings are
        losses of stability: a slow eigenvalue through 0, the fast mode's step factor through -1)."""
        return max(self.growth_rate, self.fast_contraction - 2.0)


def _on_m(kappa_nu):
    return np.array([kappa_nu[0], kappa_nu[1], 0.0, 0.0, 0.0])


def _newton(f, a, max_iter=40):
    """Damped Newton's method on f: (-1, 1)^2 -> R^2 (step halved until it stays inside and |f| decreases). The
    Jacobian (central differences, 4 evaluations of f) is kept while an accepted step cuts max |f| at least
    _CONTRACTION-fold and taken afresh otherwise, or when a kept one finds no step: a continuation's Newton steps then
    cost one evaluation each. Returns (a, max |f(a)|)."""
    fa, J = f(a), None
    for _ in range(max_iter):
        if np.max(np.abs(fa)) <= _ROOT_TOL:
            break
        fresh = J is None
        if fresh:
            J = central_jacobian(f, a, _JAC_STEP)
        step = np.linalg.lstsq(J, -fa, rcond=None)[0]
        for _ in range(30):
            inside = np.all(np.abs(a + step) < 1.0 - _JAC_STEP)
            try:
                trial = f(a + step) if inside else None
            except FastModeUnstable:
                inside = False
            if inside and np.linalg.norm(trial) < np.linalg.norm(fa):
                if np.max(np.abs(trial)) * _CONTRACTION > np.max(np.abs(fa)):
                    J = None
                a, fa = a + step, trial
                break
            step = step / 2
        else:
            if fresh:
                break
            J = None
    return a, float(np.max(np.abs(fa)))


def stability_jacobian(problem, x, *, c, batch_size, quadrature_step=0.2) -> np.ndarray:
    """dG/dx (5 x 5) of ``per_run_drift`` at the point x of the five overlaps, by central differences with the
    step ``_eigen_step(d)`` (its truncation error ~2e-5 at every d): the Jacobian whose eigenvalues decide the
    stability of ``aligned_fixed_point`` (docs/math/highdim.md#the-largest-step); ``quadrature_step`` as ``per_run_drift``."""
    return central_jacobian(lambda y: per_run_drift(problem, y, c=c, batch_size=batch_size,
                                                    quadrature_step=quadrature_step), np.asarray(x, float),
                            _eigen_step(problem.d))


def aligned_fixed_point(problem, *, c, batch_size, start=(0.99, 0.99), quadrature_step=0.2) -> AlignedFixedPoint:
    """The fixed point of ``per_run_drift`` on M reached by Newton's method (scipy ``root``) from
    ``start`` = (kappa, nu) (continuation: pass the fixed point at a nearby c). ``problem`` a
    ``theory.Problem`` with lam a number, d >= 4; c > 0; B >= 1 (ValueError naming them); ``quadrature_step``: that of
    ``per_run_drift`` everywhere. Raises RuntimeError if the solver does not converge or leaves (-1, 1)^2 (no fixed
    point near ``start``)."""
    check_highdim_settings(problem, c, batch_size)
    start = np.asarray(start, dtype=float)
    if start.shape != (2,) or not np.all(np.abs(start) < 1):
        raise ValueError(f"start={start!r} is not allowed: (kappa, nu) with |kappa|, |nu| < 1")

    def on_m(y):
        return per_run_drift_on_m(problem, y, c=c, batch_size=batch_size, quadrature_step=quadrature_step)

    a, residual = _newton(on_m, start)
    if residual > _ROOT_TOL:
        raise RuntimeError(f"no aligned fixed point found from start={tuple(start)} at c={c}: "
                           f"Newton's method stopped at |G| = {residual:.3g}")
    x = _on_m(a)
    eig = np.linalg.eigvals(stability_jacobian(problem, x, c=c, batch_size=batch_size, quadrature_step=quadrature_step))
    mode = fast_mode(problem, x, c=c, batch_size=batch_size, quadrature_step=quadrature_step)
    return AlignedFixedPoint(float(c), int(batch_size), float(x[0]), float(x[1]), eig[np.argsort(eig.real)],
                             residual, mode.s2_theta_variance, c / problem.d * abs(mode.mu))


def fixed_point_branch(problem, c_values, *, batch_size, start=(0.99, 0.99), max_halvings=6, quadrature_step=0.2) -> list:
    """The aligned fixed points at the increasing ``c_values`` by continuation (each solve starts from
    the previous fixed point; a failed solve is retried through 2, 4, ... intermediate steps, up to
    ``max_halvings`` times; for the first c, from ``start`` through c/2, c/4, ...). The list stops
    where the branch is lost (shorter than ``c_values`` then)."""
    c_values = [check_positive_real("c_values", c) for c in c_values]
    if any(b <= a for a, b in zip(c_values, c_values[1:])):
        raise ValueError(f"c_values={c_values!r} is not allowed: they must increase")
    out, prev_c, point = [], None, tuple(start)
    for c in c_values:
        ladder = [c]
        for _ in range(max_halvings + 1):
            try:
                for cc in ladder:
                    fp = aligned_fixed_point(problem, c=cc, batch_size=batch_size, start=point,
                                             quadrature_step=quadrature_step)
                    point = (fp.kappa, fp.nu)
                break
            except RuntimeError:
                n = 2 * len(ladder)
                ladder = ([c * 2.0 ** (i - n) for i in range(1, n + 1)] if prev_c is None
                          else [prev_c + (c - prev_c) * (i + 1) / n for i in range(n)])
        else:
            return out
        out.append(fp)
        prev_c = c
    return out


@dataclasses.dataclass(frozen=True)
class CriticalStep:
    """``c_crit`` (to relative accuracy ``c_tol``); ``kind``: "slow mode" (an eigenvalue of dG/dx crosses 0),
    "fast mode" (alpha |mu_f| reaches 2) or "fold" (no fixed point beyond); ``below``: the fixed point at
    the largest c < c_crit reached by the continuation."""

    c_crit: float
    c_tol: float
    kind: str
    below: AlignedFixedPoint
    at_crit: AlignedFixedPoint | None = None  # the fixed point at c_crit from ``below`` when brentq evaluated it


def critical_step(problem, *, batch_size, c_start=0.1, c_max=100.0, factor=1.5,
                  c_tol=1e-3, start=(0.99, 0.99), first=None, quadrature_step=0.2) -> CriticalStep:
    """The critical c of the module docstring: continuation of the aligned fixed point from c_start up a
    geometric grid (ratio ``factor``, taken to its square root whenever Newton's method fails) until it is
    unstable (then ``brentq`` on the growth rate) or lost for every ratio > 1 + c_tol (a fold), to
    relative accuracy ``c_tol``; ``start``: where Newton's method starts at c_start (``fixed_point_branch``; at
    large d the fixed point at small c lies within O(1/d) of kappa = 1, where (0.99, 0.99) may fail: start at a larger
    c_start from ``numerics.highdim.limit_fixed_point``). ``first``: the fixed point at c_start when the caller has it
    from this continuation (``fixed_point_branch``'s at c_start; Newton's method started at it returns it, so it is
    not solved again); ``quadrature_step``: that of ``per_run_drift``. RuntimeError if still stable at c_max."""
    c_start, c_max, c_tol, factor = (check_positive_real(n, v) for n, v in (
        ("c_start", c_start), ("c_max", c_max), ("c_tol", c_tol), ("factor", factor)))
    if first is not None and (first.c, first.batch_size) != (c_start, batch_size):
        raise ValueError(f"first={first!r} is not allowed: the fixed point at c_start={c_start}, B={batch_size}")
    first = [first] if first is not None else fixed_point_branch(problem, [c_start], batch_size=batch_size, start=start,
                                                                 quadrature_step=quadrature_step)
    if not first:
        raise RuntimeError(f"no aligned fixed point found at c_start={c_start}")
    last = first[0]
    if not last.stable:
        raise ValueError(f"c_start={c_start!r} is not allowed: the fixed point is already unstable there")
    c, ratio = c_start, factor
    while ratio - 1.0 > c_tol:
        c_next = min(c * ratio, c_max)
        try:
            nxt = aligned_fixed_point(problem, c=c_next, batch_size=batch_size, start=(last.kappa, last.nu),
                                      quadrature_step=quadrature_step)
        except RuntimeError:
            ratio = np.sqrt(ratio)
            continue
        if not nxt.stable:
            # the fixed points at the bracket's ends are those just computed from (last.kappa, last.nu): Newton's
            # method started at a root returns it, so evaluating them again would give the same bits
            known = {c: last, c_next: nxt}

            def instability(cc):
                if cc not in known:
                    known[cc] = aligned_fixed_point(problem, c=cc, batch_size=batch_size, start=(last.kappa, last.nu),
                                                    quadrature_step=quadrature_step)
                return known[cc].instability
            kind = "fast mode" if nxt.fast_contraction - 2.0 >= nxt.growth_rate else "slow mode"
            c_crit = float(brentq(instability, c, c_next, rtol=c_tol))
            return CriticalStep(c_crit, c_tol, kind, last, known.get(c_crit))
        if c_next >= c_max:
            raise RuntimeError(f"the aligned fixed point is still stable at c_max={c_max}")
        c, last = c_next, nxt
    return CriticalStep(float(c * np.sqrt(ratio)), c_tol, "fold", last)
