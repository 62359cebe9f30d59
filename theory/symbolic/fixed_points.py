"""Fixed points of the reduced gradient flow on M and their classification (docs/math/dynamics.md#fixed-points-and-their-types).

On M (``theory.symbolic.manifold.reduced_flow``, with a_l, b > 0):

    kappa' = -(1 - kappa^2) 2 gamma^2 a_l erf'(a_l kappa) [erf(b kappa) - nu],
    nu'    =  (1 - nu^2) 2 gamma^2 erf(a_l kappa).

Search over the closed square [-1, 1]^2 (``fixed_points``): nu' = 0 iff nu = +-1 or kappa = 0
(erf is injective, erf(0) = 0); then kappa' = 0 is solved by sympy in the other variable
(erf' > 0, and erf(b kappa) = +-1 has no finite solution). Result, for all parameters:
exactly five fixed points, (0, 0) and the corners (+-1, +-1).

Classification from the Jacobian J (2x2, real): det J < 0 -> saddle; det J > 0 and tr J < 0 ->
asymptotically stable; det J > 0 and tr J > 0 -> unstable. The signs of det and tr are decided
by sympy for all positive parameters, after writing erf(x) = 1/(1 + p_x) with p_x > 0 for x > 0
(that is, 0 < erf(x) < 1; erf(-x) = -erf(x) is automatic). ``FixedPoint.proved`` says whether
sympy decided both signs; otherwise the kind comes from a dense grid (``classify_on_grid``).
Result: (0, 0) saddle; (1, 1), (-1, -1) stable; (1, -1), (-1, 1) unstable (sources).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

import numpy as np
import sympy as sp

from ._exact import simplified
from .functions import numeric_function
from .manifold import reduced_flow, reduced_parameters
from .risk_expr import risk_symbols

__all__ = ["FixedPoint", "fixed_points", "reduced_jacobian", "GridClassification", "classify_on_grid"]


@dataclasses.dataclass(frozen=True)
class FixedPoint:
    """A fixed point (kappa, nu) of the flow on M with its Jacobian and kind."""

    kappa: sp.Expr
    nu: sp.Expr
    jacobian: sp.Matrix
    eigenvalues: tuple
    kind: str            # "saddle", "stable" or "unstable"
    proved: bool         # signs of det and trace decided by sympy for all parameters


@functools.lru_cache(maxsize=None)
def reduced_jacobian() -> sp.Matrix:
    """d(kappa', nu')/d(kappa, nu) of the reduced flow, symbolic."""
    S = risk_symbols()
    flow = reduced_flow()
    return sp.Matrix([flow.kappa_dot, flow.nu_dot]).jacobian([S.kappa, S.nu])


def _with_erf_bounds(expr):
    """Replace erf(x), x > 0, by 1/(1 + p_x) with p_x > 0: encodes 0 < erf(x) < 1."""
    subs = {}
    for i, f in enumerate(sorted(expr.atoms(sp.erf), key=sp.default_sort_key)):
        x = f.args[0]
        p = sp.Symbol(f"p{i}", positive=True)
        if x.is_positive:
            subs[f] = 1 / (1 + p)
        elif x.is_negative:
            subs[f] = -1 / (1 + p)
    return expr.subs(subs)


def _sign(expr):
    e = sp.factor(_with_erf_bounds(expr))
    if e.is_positive:
        return 1
    if e.is_negative:
        return -1
    return None


def _zeros(expr, var) -> list:
    """The zeros of ``expr`` in ``var`` found by ``sympy.solve``: its candidates (a superset of
    the solutions it finds; its own checking, by simplification, is skipped), each kept iff
    ``expr`` vanishes there exactly."""
    return [x for x in sp.solve(expr, var, check=False, simplify=False) if simplified(expr.subs(var, x)) == 0]


def _candidates():
    """Points of [-1, 1]^2 where kappa' = nu' = 0, by the case analysis of the module docstring."""
    S = risk_symbols()
    kappa, nu = S.kappa, S.nu
    flow = reduced_flow()
    a_l, _ = reduced_parameters()
    found = set()
    for nu0 in (-1, 1):
        for k0 in _zeros(flow.kappa_dot.subs(nu, nu0), kappa):
            found.add((k0, sp.Integer(nu0)))
    for k0 in _zeros(sp.erf(a_l * kappa), kappa):
        for n0 in _zeros(flow.kappa_dot.subs(kappa, k0), nu):
            found.add((k0, n0))
    inside = [p for p in found if all(x.is_real and abs(x) <= 1 for x in p)]
    return sorted(inside, key=lambda p: (float(p[0]), float(p[1])))


@functools.lru_cache(maxsize=None)
def fixed_points() -> tuple:
    """All fixed points of the reduced flow in [-1, 1]^2 with Jacobians and kinds."""
    S = risk_symbols()
    J = reduced_jacobian()
    out = []
    for k0, n0 in _candidates():
        Jp = J.subs({S.kappa: k0, S.nu: n0})
        det = Jp[0, 0] * Jp[1, 1] - Jp[0, 1] * Jp[1, 0]
        det_sign, tr_sign = _sign(det), _sign(Jp.trace())
        proved = det_sign is not None and (det_sign < 0 or tr_sign is not None)
        if proved:
            kind = "saddle" if det_sign < 0 else ("stable" if tr_sign < 0 else "unstable")
        else:
            kind = classify_on_grid(float(k0), float(n0)).kind
        if Jp.is_diagonal():
            eig = (Jp[0, 0], Jp[1, 1])
        else:
            root = sp.sqrt(Jp.trace()**2 - 4 * det)
            eig = ((Jp.trace() - root) / 2, (Jp.trace() + root) / 2)
        out.append(FixedPoint(k0, n0, Jp, eig, kind, proved))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _numeric_jacobian():
    S = risk_symbols()
    return numeric_function(S.params + (S.kappa, S.nu), reduced_jacobian())


@dataclasses.dataclass(frozen=True)
class GridClassification:
    """Kind of a fixed point found on a parameter grid; ``n_undecided`` points had an
    eigenvalue that is 0 in float64 (underflow of erf'(a_l) or erfc(b)) and were skipped."""

    kind: str
    n_points: int
    n_undecided: int


def classify_on_grid(kappa0: float, nu0: float, n: int = 6) -> GridClassification:
    """Kind of (kappa0, nu0) from the numeric Jacobian on a grid of parameters.

    Grid: d in [2, 1e4], L in [2, 100], gamma in [0.1, 3], lam in [0.01, 3], n log-spaced
    values each. Raises ``ArithmeticError`` if the kind is not the same at every decided point.
    """
    grid = [np.geomspace(2, 1e4, n), np.geomspace(2, 100, n), np.geomspace(0.1, 3, n),
            [0.0], np.geomspace(0.01, 3, n)]
    kinds, undecided, total = set(), 0, 0
    for d, L, gamma, eps, lam in itertools.product(*grid):
        total += 1
        eig = np.linalg.eigvals(np.asarray(_numeric_jacobian()(d, L, gamma, eps, lam, kappa0, nu0)))
        if np.any(eig.real == 0):
            undecided += 1
        elif np.all(eig.real < 0):
            kinds.add("stable")
        elif np.all(eig.real > 0):
            kinds.add("unstable")
        else:
            kinds.add("saddle")
    if len(kinds) != 1:
        raise ArithmeticError(f"fixed point ({kappa0}, {nu0}) has kinds {kinds} on the grid")
    return GridClassification(kinds.pop(), total, undecided)
