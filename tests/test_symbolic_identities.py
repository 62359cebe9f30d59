"""Gaussian-erf identities (docs/math/risk.md#gaussian-erf-identities) proved with sympy; the Zeta sympy functions vs theory.zeta."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from theory.symbolic.functions import Zeta, ZetaT, ZetaTT, ZetaTTT, numeric_function, roundoff_scale
from theory.symbolic.identities import all_identity_proofs, stein_moment
from theory.zeta import zeta, zeta_t, zeta_tt, zeta_ttt

EPS = np.finfo(float).eps


@pytest.mark.parametrize("index", range(4))
def test_identity_proved(index):
    proof = all_identity_proofs()[index]
    assert proof.residual == 0, proof.name
    assert proof.proved, proof.name


@pytest.mark.parametrize("m", range(4))
def test_stein_moment_matches_direct_integral(m):
    # f = exp: E[exp(A + gU)] = exp(A + g^2/2); compare with sympy's direct Gaussian integral.
    A = sp.Symbol("A", real=True)
    g = sp.Symbol("g", positive=True)
    z = sp.Symbol("z", real=True)
    direct = sp.integrate(z**m * sp.exp(A + g * z - z**2 / 2) / sp.sqrt(2 * sp.pi), (z, -sp.oo, sp.oo))
    # a difference that expands to 0 is 0 (sympy.simplify proves it too, ~20x slower)
    assert sp.expand(stein_moment(sp.exp(A + g**2 / 2), A, g, m) - direct) == 0


def test_stein_moment_rejects_negative_order():
    with pytest.raises(ValueError, match="m=-1"):
        stein_moment(sp.S.One, sp.Symbol("A"), sp.Symbol("g"), -1)


def test_heat_equation_of_explicit_zeta_t():
    # d/dg zeta_t = g zeta_ttt (used by ZetaT.fdiff in g), proved on the explicit form.
    t = sp.Symbol("t", real=True)
    g = sp.Symbol("g", positive=True)
    e = ZetaT(t, g).rewrite(sp.erf)
    # expanded, then over one denominator: 0 (sympy.simplify proves it too, ~10x slower)
    assert sp.cancel(sp.expand(sp.diff(e, g) - g * sp.diff(e, t, 2))) == 0


def test_heat_equation_of_explicit_zeta_tt_at_40_digits(rng):
    # d/dg zeta_tt = g zeta_tttt (used by ZetaTT.fdiff in g). sympy's simplify takes ~10 s here, so
    # the explicit residual is evaluated with mpmath at 40 digits instead: it must be ~1e-40
    # relative to the terms, far below 1e-30 (a wrong identity leaves an O(1) residual).
    t = sp.Symbol("t", real=True)
    g = sp.Symbol("g", positive=True)
    e = ZetaTT(t, g).rewrite(sp.erf)
    lhs, rhs = sp.diff(e, g), g * sp.diff(e, t, 2)
    residual = sp.lambdify((t, g), lhs - rhs, modules="mpmath")
    scale = sp.lambdify((t, g), sp.Abs(lhs) + sp.Abs(rhs), modules="mpmath")
    with mpmath.workdps(40):
        for tt, gg in zip(rng.uniform(-4, 4, 8), rng.uniform(0.05, 3, 8)):
            tt, gg = mpmath.mpf(float(tt)), mpmath.mpf(float(gg))
            assert abs(residual(tt, gg)) <= mpmath.mpf(10) ** -30 * scale(tt, gg)


def test_heat_equation_of_zeta_numerically():
    # d/dg zeta(t, g) = g zeta_tt(t, g) for the (non-elementary) zeta itself, by Richardson-extrapolated
    # central differences; tolerance: 4x the Richardson error estimate + roundoff eps/h.
    t = np.array([0.0, 0.3, 1.0, 2.5, -1.7])
    g = np.array([0.2, 0.7, 1.3, 0.45, 2.0])
    h = 1e-3
    d1 = (zeta(t, g + h) - zeta(t, g - h)) / (2 * h)
    d2 = (zeta(t, g + 2 * h) - zeta(t, g - 2 * h)) / (4 * h)
    richardson = (4 * d1 - d2) / 3
    tol = 4 * np.abs(d1 - d2) / 3 + 1e3 * EPS / h
    assert np.all(np.abs(richardson - g * zeta_tt(t, g)) <= tol)
    assert sp.diff(Zeta(sp.Symbol("t"), sp.Symbol("g")), sp.Symbol("g")) == \
        sp.Symbol("g") * ZetaTT(sp.Symbol("t"), sp.Symbol("g"))


@pytest.mark.parametrize("cls, numeric", [(ZetaT, zeta_t), (ZetaTT, zeta_tt), (ZetaTTT, zeta_ttt)])
def test_explicit_forms_match_theory_zeta(cls, numeric, rng):
    t, g = sp.symbols("t g", real=True)
    explicit = cls(t, g).rewrite(sp.erf)
    f = numeric_function((t, g), explicit)
    scale = roundoff_scale((t, g), explicit)
    tt = rng.uniform(-6, 6, 200)
    gg = np.exp(rng.uniform(np.log(1e-3), np.log(10), 200))
    # Each additive term is a product of <= ~20 rounded factors in either route; exp(-x) with
    # x = t^2/c2^2 <= t^2 amplifies the relative error of its argument by x.
    tol = 64 * EPS * (1 + tt**2) * scale(tt, gg)
    assert np.all(np.abs(f(tt, gg) - numeric(tt, gg)) <= tol)


def test_lambdify_maps_zeta_to_theory_zeta():
    t, g = sp.symbols("t g", real=True)
    f = numeric_function((t, g), [Zeta(t, g), ZetaT(t, g), ZetaTT(t, g), ZetaTTT(t, g)])
    got = f(0.7, 0.4)
    assert got == [zeta(0.7, 0.4), zeta_t(0.7, 0.4), zeta_tt(0.7, 0.4), zeta_ttt(0.7, 0.4)]


def test_odd_derivatives_vanish_at_zero():
    g = sp.Symbol("g", positive=True)
    assert ZetaT(0, g) == 0 and ZetaTTT(0, g) == 0
    assert ZetaTT(0, g) != 0
