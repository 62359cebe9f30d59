"""Exact sympy steps shared by the derivations of ``theory.symbolic``, each cheaper than the general
route it replaces and giving the same exact result.

- ``simplified``: an expression that is 0 is recognised structurally, after expansion or after
  expansion and cancellation over one denominator before ``sympy.simplify`` is tried.
- ``partial_at``: a partial derivative at a point, with the other coordinates fixed before
  differentiating (differentiation in one variable commutes with fixing the others).
"""

from __future__ import annotations

import sympy as sp

__all__ = ["simplified", "partial_at"]


def simplified(expr):
    """``expr`` simplified: 0 when it is 0 structurally, after expansion or after expansion and
    ``sympy.cancel`` (cheap tests first), else ``sympy.simplify(expr)``."""
    if expr == 0:
        return sp.S.Zero
    expanded = sp.expand(expr)
    if expanded == 0 or sp.cancel(expanded) == 0:
        return sp.S.Zero
    return sp.simplify(expr)


def partial_at(expr, var, point: dict):
    """d expr / d var at ``point`` (a dict symbol -> value, which may leave ``var`` free): the other
    coordinates are set to their values first, which keeps the expression that is differentiated
    small."""
    fixed = expr.subs({k: v for k, v in point.items() if k != var})
    partial = sp.diff(fixed, var)
    return partial.subs(var, point[var]) if var in point else partial
