"""zeta(t, g) = E[erf(t + g Z)^2] and its t-derivatives as sympy functions (docs/math/risk.md#derivatives-of-zeta).

``Zeta(t, g)`` is not elementary; it knows its derivatives:

    d/dt Zeta   = ZetaT,          d/dg Zeta   = g ZetaTT      (heat equation, see below),
    d/dt ZetaT  = ZetaTT,         d/dg ZetaT  = g ZetaTTT,
    d/dt ZetaTT = ZetaTTT,        d/dg ZetaTT = g d/dt ZetaTTT,
    d/dt ZetaTTT = (explicit),    d/dg ZetaTTT = g d^2/dt^2 ZetaTTT (explicit),

and ZetaT, ZetaTT, ZetaTTT rewrite to the explicit erf expressions of docs/math/risk.md#the-function-zeta with
``expr.rewrite(sympy.erf)``:

    ZetaT(t, g) = (2/c2) erf(t/c1) erf'(t/c2),  c1 = sqrt((1+4g^2)(1+2g^2)), c2 = sqrt(1+2g^2),

and ZetaTT, ZetaTTT are its t-derivatives computed by sympy. The g-derivatives use the heat
equation of Gaussian smoothing: for F(t, g) = E[f(t + gZ)], Stein's lemma E[Z h(Z)] = E[h'(Z)]
gives d/dg F = E[Z f'(t + gZ)] = g E[f''(t + gZ)] = g d^2/dt^2 F.

Evaluation at t = 0 uses the parity (Zeta even in t): ZetaT(0, g) = ZetaTTT(0, g) = 0.
``zeta_at_zero(g)`` is the closed form (2/pi) arcsin(2g^2/(1+2g^2)) (proved in
``theory.symbolic.identities``). ``LAMBDIFY_MODULES`` maps the functions to their numeric
siblings ``theory.zeta.zeta``, ``zeta_t``, ``zeta_tt``, ``zeta_ttt`` for ``sympy.lambdify``.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.special
import sympy as sp
from sympy.core.function import ArgumentIndexError

from theory.zeta import zeta, zeta_t, zeta_tt, zeta_ttt

__all__ = ["Zeta", "ZetaT", "ZetaTT", "ZetaTTT", "erf_prime_expr", "zeta_at_zero",
           "lambdify_modules", "numeric_function", "roundoff_scale"]


def erf_prime_expr(x):
    """erf'(x) = (2/sqrt(pi)) exp(-x^2) as a sympy expression."""
    return 2 / sp.sqrt(sp.pi) * sp.exp(-x**2)


def _c1_c2(g):
    c2 = sp.sqrt(1 + 2 * g**2)
    return sp.sqrt(1 + 4 * g**2) * c2, c2


_EXPLICIT_ARGS = sp.symbols("t g", real=True)


@functools.lru_cache(maxsize=None)
def _explicit_derivative(order: int):
    """Explicit t-derivative of zeta of order 1..5 in the symbols ``_EXPLICIT_ARGS`` (t, g); each
    order is derived (and cached) when first needed, from the one below."""
    t, g = _EXPLICIT_ARGS
    if order == 1:
        c1, c2 = _c1_c2(g)
        return 2 / c2 * sp.erf(t / c1) * erf_prime_expr(t / c2)
    return sp.diff(_explicit_derivative(order - 1), t)


def _explicit(order: int, t, g):
    ts, gs = _EXPLICIT_ARGS
    return _explicit_derivative(order).subs({ts: t, gs: g}, simultaneous=True)


class Zeta(sp.Function):
    """zeta(t, g) = E[erf(t + g Z)^2], Z ~ N(0, 1) (docs/math/risk.md#the-function-zeta); g >= 0."""

    nargs = 2

    def fdiff(self, argindex=1):
        t, g = self.args
        if argindex == 1:
            return ZetaT(t, g)
        if argindex == 2:
            return g * ZetaTT(t, g)
        raise ArgumentIndexError(self, argindex)


class _ZetaDerivative(sp.Function):
    """Common behaviour of the t-derivatives of Zeta: explicit form, parity at t = 0."""

    nargs = 2
    order = 0
    odd = False

    @classmethod
    def eval(cls, t, g):
        if cls.odd and t.is_zero:
            return sp.S.Zero
        return None

    def _eval_rewrite_as_erf(self, t, g, **kwargs):
        return _explicit(self.order, t, g)


class ZetaT(_ZetaDerivative):
    """d/dt zeta(t, g) = (2/c2) erf(t/c1) erf'(t/c2) (docs/math/risk.md#derivatives-of-zeta)."""

    order, odd = 1, True

    def fdiff(self, argindex=1):
        t, g = self.args
        if argindex == 1:
            return ZetaTT(t, g)
        if argindex == 2:
            return g * ZetaTTT(t, g)
        raise ArgumentIndexError(self, argindex)


class ZetaTT(_ZetaDerivative):
    """d^2/dt^2 zeta(t, g)."""

    order, odd = 2, False

    def fdiff(self, argindex=1):
        t, g = self.args
        if argindex == 1:
            return ZetaTTT(t, g)
        if argindex == 2:
            return g * _explicit(4, t, g)
        raise ArgumentIndexError(self, argindex)


class ZetaTTT(_ZetaDerivative):
    """d^3/dt^3 zeta(t, g); its derivatives are explicit (t: 4th derivative, g: heat equation)."""

    order, odd = 3, True

    def fdiff(self, argindex=1):
        t, g = self.args
        if argindex == 1:
            return _explicit(4, t, g)
        if argindex == 2:
            return g * _explicit(5, t, g)
        raise ArgumentIndexError(self, argindex)


def zeta_at_zero(g):
    """zeta(0, g) = (2/pi) arcsin(2g^2/(1+2g^2)) (docs/math/risk.md#the-function-zeta), as a sympy expression."""
    return 2 / sp.pi * sp.asin(2 * g**2 / (1 + 2 * g**2))


def lambdify_modules():
    """The ``modules`` argument for ``sympy.lambdify``: Zeta* -> theory.zeta, erf -> scipy."""
    return [{"Zeta": zeta, "ZetaT": zeta_t, "ZetaTT": zeta_tt, "ZetaTTT": zeta_ttt,
             "erf": scipy.special.erf, "erfc": scipy.special.erfc}, "numpy"]


def numeric_function(args, exprs):
    """``sympy.lambdify(args, exprs)`` with common subexpressions and the numeric zeta.

    The returned function broadcasts over numpy arrays like the expressions' numeric siblings.
    """
    return sp.lambdify(args, exprs, modules=lambdify_modules(), cse=True)


def roundoff_scale(args, expr):
    """Numeric function of ``args`` giving sum_i |term_i| over the additive terms of ``expr``.

    A floating-point evaluation of a sum has an absolute roundoff error of a few units of
    eps * sum_i |term_i| (each term a product of a bounded number of rounded factors); tests use
    this scale to turn machine epsilon into an absolute tolerance. Built once per (args, expr) and
    process (expansion and lambdify take ~20-60 ms; callers ask again for the same expression, e.g. the
    risk's at every point checked), the returned function holds no state.
    """
    return _roundoff_scale(tuple(args), expr)


@functools.lru_cache(maxsize=None)
def _roundoff_scale(args, expr):
    terms = sp.Add.make_args(sp.expand(expr, power_exp=False, power_base=False))
    f = numeric_function(args, sum(sp.Abs(t) for t in terms))

    def scale(*values):
        # Expanded terms may hold exp(+x) in a denominator: its overflow to inf gives the
        # correct limit 0 for that term.
        with np.errstate(over="ignore"):
            return f(*values)

    return scale
