"""zeta(t, g) = E[erf(t + g Z)^2], Z ~ N(0, 1): the closed form of ``theory.zeta`` and its
t-derivatives proved symbolically with sympy (docs/math/risk.md#derivatives-of-zeta,
docs/math/risk.md#closed-form-of-zeta-through-owens-t). The numerical routes are compared in
tests/test_zeta.py and tests/test_zeta_reference.py.
"""

import sympy as sp


def test_gaussian_lemmas_and_derivative_formula():
    """d/dt zeta = E[2 erf(t + gZ) erf'(t + gZ)] = (2/c2) erf(t/c1) erf'(t/c2).

    The first equality is differentiation under E, legitimate since |d/dt erf(.)^2| <= 4/sqrt(pi)
    (dominated convergence). The second follows from three lemmas proved here:
    A. E[exp(-(m + sZ)^2)] = exp(-m^2/(1 + 2s^2)) / sqrt(1 + 2s^2)        (sympy integral)
    B. E[erf(m + sZ)] = erf(m / sqrt(1 + 2s^2)): equal m-derivatives (A) and both 0 at m = 0.
    C. erf'(t + gz) phi(z) = erf'(t/c2)/c2 * N(z; mu, 1/c2^2), mu = -2tg/c2^2 (completing the
       square), so E[erf erf'] = erf'(t/c2)/c2 * E[erf(t + g mu + (g/c2) Z)] = ... by B.
    """
    m = sp.Symbol("m", real=True)
    s, t, g = sp.symbols("s t g", positive=True)
    z = sp.Symbol("z", real=True)
    phi = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    erf1 = lambda x: 2 / sp.sqrt(sp.pi) * sp.exp(-x**2)  # noqa: E731  (erf')

    lemma_a = sp.integrate(sp.exp(-(m + s * z)**2) * phi, (z, -sp.oo, sp.oo))
    assert sp.simplify(lemma_a - sp.exp(-m**2 / (1 + 2 * s**2)) / sp.sqrt(1 + 2 * s**2)) == 0

    # B: d/dm E[erf(m + sZ)] = E[erf'(m + sZ)] = (2/sqrt(pi)) * lemma A (|erf'| bounded).
    rhs_b = sp.erf(m / sp.sqrt(1 + 2 * s**2))
    assert sp.simplify(sp.diff(rhs_b, m) - 2 / sp.sqrt(sp.pi) * lemma_a) == 0
    odd = sp.erf(s * z) * phi  # at m = 0 the integrand is odd: E[erf(sZ)] = 0 = erf(0)
    assert sp.simplify(odd.subs(z, -z) + odd) == 0 and rhs_b.subs(m, 0) == 0

    c2 = sp.sqrt(1 + 2 * g**2)
    c1 = sp.sqrt(1 + 4 * g**2) * c2
    mu, sigma = -2 * t * g / c2**2, 1 / c2
    # erf'(t + gz) phi(z) = K exp(-(t + gz)^2 - z^2/2) with K = 2/sqrt(pi)/sqrt(2 pi), and
    # erf'(t/c2)/c2 N(z; mu, sigma^2) = K/(c2 sigma) exp(-(t/c2)^2) exp(-(z - mu)^2/(2 sigma^2)):
    big_k = 2 / sp.sqrt(sp.pi) / sp.sqrt(2 * sp.pi)
    assert sp.simplify(erf1(t + g * z) * phi - big_k * sp.exp(-(t + g * z)**2 - z**2 / 2)) == 0
    assert sp.simplify(erf1(t / c2) - 2 / sp.sqrt(sp.pi) * sp.exp(-(t / c2)**2)) == 0
    square = -(z - mu)**2 / (2 * sigma**2)
    assert sp.simplify(-(t + g * z)**2 - z**2 / 2 - (-(t / c2)**2 + square)) == 0
    assert sp.simplify(c2 * sigma) == 1
    # t + g W with W ~ N(mu, sigma^2) is m + s Z with m = t + g mu, s = g sigma; apply B:
    arg_b = (t + g * mu) / sp.sqrt(1 + 2 * (g * sigma)**2)
    assert sp.simplify(arg_b - t / c1) == 0
    # d/dx erf(x)^2 = 2 erf(x) erf'(x), so zeta_t = 2 E[erf erf'] = (2/c2) erf(t/c1) erf'(t/c2):
    x = sp.Symbol("x", real=True)
    assert sp.simplify(sp.diff(sp.erf(x)**2, x) - 2 * sp.erf(x) * erf1(x)) == 0
    # t > 0 suffices: both sides are odd in t (zeta is even), and t = 0 follows by continuity.


def _owens_t_and_derivative():
    h, a, x = sp.symbols("h a x", positive=True)
    owen = sp.Integral(sp.exp(-h**2 * (1 + x**2) / 2) / (1 + x**2), (x, 0, a)) / (2 * sp.pi)
    d_owen = sp.diff(owen, h)  # sympy differentiates under the integral sign (Leibniz)
    d_owen = d_owen.replace(lambda e: isinstance(e, sp.Integral), lambda e: e.doit())
    closed = -sp.exp(-h**2 / 2) * sp.erf(a * h / sp.sqrt(2)) / (2 * sp.sqrt(2 * sp.pi))
    assert sp.simplify(d_owen - closed) == 0
    return h, a, x, owen, closed


def test_owens_t_closed_form_is_proved():
    """zeta(t, g) = 1 - 8 T(h, c), h = sqrt(2) t / c2, c = 1/sqrt(1 + 4g^2) (module theory.zeta).

    D(t) = zeta(t, g) - [1 - 8 T(h(t), c)] has D' = 0 for t > 0 (the t-derivative of the
    closed form equals the proved formula for zeta_t) and D(t) -> 0 as t -> inf (zeta -> 1
    by dominated convergence since erf(t + gz)^2 -> 1 with |erf| <= 1; T(h, a) -> 0). Hence
    D = 0 on t > 0, on t < 0 by evenness of both sides (T is even in h) and at t = 0 by
    continuity. Also 1 - 8 T(h, 1) = erf(h/sqrt 2)^2, which gives the cancellation-free
    form zeta = erf(t/c2)^2 + (4/pi) int_c^1 exp(-h^2 (1 + x^2)/2)/(1 + x^2) dx, and
    zeta(0, g) = 1 - (4/pi) arctan(c) = (2/pi) arcsin(2g^2/(1 + 2g^2)).
    """
    h, a, x, owen, d_owen = _owens_t_and_derivative()
    t, g = sp.symbols("t g", positive=True)
    c2 = sp.sqrt(1 + 2 * g**2)
    c1 = sp.sqrt(1 + 4 * g**2) * c2
    c = 1 / sp.sqrt(1 + 4 * g**2)
    h_of_t = sp.sqrt(2) * t / c2
    zeta_t_formula = 2 / c2 * sp.erf(t / c1) * 2 / sp.sqrt(sp.pi) * sp.exp(-(t / c2)**2)
    d_closed = -8 * d_owen.subs({h: h_of_t, a: c}) * sp.diff(h_of_t, t)
    assert sp.simplify(d_closed - zeta_t_formula) == 0

    # T(h, a) -> 0: 0 <= integrand <= e^{-h^2/2} on x >= 0, so 0 <= T <= a e^{-h^2/2} / (2 pi).
    ratio = sp.exp(-h**2 * (1 + x**2) / 2) / sp.exp(-h**2 / 2)
    assert sp.simplify(ratio - sp.exp(-h**2 * x**2 / 2)) == 0
    assert (-h**2 * x**2 / 2).is_nonpositive and (1 + x**2 - 1).is_nonnegative
    assert sp.limit(a * sp.exp(-h**2 / 2) / (2 * sp.pi), h, sp.oo) == 0
    zz = sp.Symbol("z", real=True)
    assert sp.limit(sp.erf(t + g * zz)**2, t, sp.oo) == 1

    # 1 - 8 T(h, 1) = erf(h/sqrt 2)^2: equal h-derivatives, and both -> 1 as h -> inf.
    assert sp.simplify(-8 * d_owen.subs(a, 1) - sp.diff(sp.erf(h / sp.sqrt(2))**2, h)) == 0
    assert sp.limit(sp.erf(h / sp.sqrt(2))**2, h, sp.oo) == 1
    assert sp.simplify(sp.erf(h_of_t / sp.sqrt(2)) - sp.erf(t / c2)) == 0

    # zeta(0, g): T(0, a) = arctan(a) / (2 pi), and
    # arcsin(r) = pi/2 - 2 arctan(c)  <=>  r = cos(2 arctan c)
    # (2 arctan c lies in (0, pi/2] for c in (0, 1], inside the range of arcsin).
    assert sp.simplify(owen.subs(h, 0).doit() - sp.atan(a) / (2 * sp.pi)) == 0
    assert sp.simplify(sp.cos(2 * sp.atan(c)) - 2 * g**2 / (1 + 2 * g**2)) == 0


def test_higher_derivative_formulas():
    """The zeta_tt and zeta_ttt formulas of theory.zeta are the t-derivatives of zeta_t's."""
    t = sp.Symbol("t", real=True)
    c1, c2 = sp.symbols("c1 c2", positive=True)  # constants in t
    u, w = t / c1, t / c2
    e1 = lambda x: 2 / sp.sqrt(sp.pi) * sp.exp(-x**2)  # noqa: E731
    e2 = lambda x: -2 * x * e1(x)  # noqa: E731
    e3 = lambda x: (4 * x**2 - 2) * e1(x)  # noqa: E731
    first = 2 / c2 * sp.erf(u) * e1(w)
    second = 2 / c2 * (e1(u) * e1(w) / c1 + sp.erf(u) * e2(w) / c2)
    third = 2 / c2 * (e2(u) * e1(w) / c1**2 + 2 * e1(u) * e2(w) / (c1 * c2)
                      + sp.erf(u) * e3(w) / c2**2)
    # the differences expand to 0 (sympy.simplify proves it too, ~15x slower)
    assert sp.expand(sp.diff(first, t) - second) == 0
    assert sp.expand(sp.diff(second, t) - third) == 0
