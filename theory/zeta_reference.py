"""Reference routes for zeta(t, g) = E[erf(t + g Z)^2], Z ~ N(0, 1) (docs/math/risk.md#the-function-zeta): quadrature.

Both routes integrate the DEFINING expectation against the standard normal density phi,

    zeta(t, g) = int_R erf(t + g z)^2 phi(z) dz,
    d^n/dt^n zeta(t, g) = int_R (d^n/dx^n erf(x)^2)|_{x = t + g z} phi(z) dz   (n = 1, ..., 4),

(differentiation under the integral sign is legitimate: every d^n/dx^n erf^2 is bounded),
independently of the Owen's T closed form of ``theory.zeta``. They hold for every real t and
g >= 0 and are the siblings of ``theory.zeta.zeta`` / ``zeta_t`` / ``zeta_tt`` / ``zeta_ttt``:

- ``zeta_mpmath``, ``zeta_derivative_mpmath``, ``zeta_derivatives_mpmath``: mpmath
  (Gauss-Legendre or tanh-sinh) quadrature at ``dps`` digits, used offline by
  ``scripts/zeta_accuracy.py`` to write ``tests/data/zeta_reference.csv``.
- ``zeta_quad``: scipy.integrate.quad in float64, returning ``QuadResult(value, abserr)``.
- ``zeta_owen_mpmath``: the cancellation-free Owen's T form at ``dps`` digits, for dense scans
  (independent of ``theory.zeta``'s float64 evaluation, not of its formula).

The integrand is split where it varies: at the peak of phi (z = 0 and +-1, 2, 4, 8, 16
sigmas), at the zero z0 = -t/g of erf(t + g z) and +-1, 2, 4, 8 of its widths 1/g, and, for
the derivatives, at the peaks z_a = -2 a t g / (1 + 2 a g^2) of exp(-a (t + g z)^2) phi(z)
(a = 1, 2) and +-1, 2, 4, 8, 16 of their widths (1 + 2 a g^2)^(-1/2).
"""

from __future__ import annotations

import math
import numbers

import mpmath
from scipy import integrate, special

from .quad_result import QuadResult

__all__ = ["QuadResult", "zeta_mpmath", "zeta_derivative_mpmath", "zeta_derivatives_mpmath", "d_erf_squared",
           "zeta_quad", "zeta_owen_mpmath"]

_PHI_STEPS = (1, 2, 4, 8, 16)
_ERF_STEPS = (1, 2, 4, 8)


def _check_arguments(t, g, orders=(0,)):
    for name, value in (("t", t), ("g", g)):
        if not (isinstance(value, (numbers.Real, mpmath.mpf)) and mpmath.isfinite(value)):
            raise ValueError(
                f"{name}={value!r} is not allowed: {name} must be a finite real scalar")
    if g < 0:
        raise ValueError(f"g={g!r} is not allowed: g must be >= 0")
    for order in orders:
        if order not in (0, 1, 2, 3, 4):
            raise ValueError(f"order={order!r} is not allowed: order must be 0, 1, 2, 3 or 4")


def _breakpoints(t, g, max_order, sqrt):
    """Sorted distinct split points of the z-integral for g > 0 (see the module docstring)."""
    points = {0 * t}
    points.update(s * k for k in _PHI_STEPS for s in (-1, 1))
    z0 = -t / g
    points.add(z0)
    points.update(z0 + s * k / g for k in _ERF_STEPS for s in (-1, 1))
    if max_order > 0:
        for a in (1, 2):
            width = 1 / sqrt(1 + 2 * a * g * g)
            za = -2 * a * t * g * width * width
            points.add(za)
            points.update(za + s * k * width for k in _PHI_STEPS for s in (-1, 1))
    return sorted(points)


def _within_density(points, dps):
    """The split points with |z| <= max(40, sqrt(2 (dps + 300) ln 10)), beyond which phi(z) < 10^-(dps + 300)
    (phi(40) < 10^-347). The order-0 integrand erf(t + g z)^2 phi(z) is at most phi(z), and at most
    2 (1 + z^2) phi(z) times zeta where zeta is small (t and g small), so the points beyond (the erf zero
    z0 = -t/g and its widths, far out when g is small) only split intervals of a vanishing integrand; the
    outer intervals still run to +-inf, so nothing is left out. The derivatives' integrands keep every point:
    their mass sits at z_a, which can lie far out."""
    cut = max(40.0, math.sqrt(2.0 * (dps + 300) * math.log(10.0)))
    return [p for p in points if abs(p) <= cut]


def d_erf_squared(order, x, e0, e1):
    """d^n/dx^n erf(x)^2 by Leibniz, from e0 = erf(x) and e1 = erf'(x) = 2/sqrt(pi) e^{-x^2},
    using erf'' = -2x erf', erf''' = (4x^2 - 2) erf' and erf'''' = (12x - 8x^3) erf'."""
    if order == 0:
        return e0 * e0
    if order == 1:
        return 2 * e0 * e1
    if order == 2:
        return 2 * e1 * e1 - 4 * x * e0 * e1
    if order == 3:  # 6 e1 e2 + 2 e0 e3
        return -12 * x * e1 * e1 + (8 * x * x - 4) * e0 * e1
    # order 4: 8 e1 e3 + 6 e2^2 + 2 e0 e4
    return (56 * x * x - 16) * e1 * e1 + (24 * x - 16 * x**3) * e0 * e1


def zeta_derivatives_mpmath(t, g, orders=(0, 1, 2), dps=40, *, method="gauss-legendre"):
    """(d^n/dt^n zeta(t, g) for n in ``orders``) as a tuple of mpf, each n in 0..4.

    d^n/dt^n zeta(t, g) = E[(d^n/dx^n erf^2)(t + g Z)] by mpmath quadrature (``method``:
    "gauss-legendre", about 3x faster here, or "tanh-sinh") of the defining expectation at
    ``dps`` digits, split at the points of the module docstring; the orders share their
    nodes, so erf and exp are evaluated once per node. g = 0 gives
    d^n/dt^n erf(t)^2 directly, and odd orders vanish at t = 0 by evenness of zeta.
    Siblings: ``theory.zeta.zeta`` (n = 0), ``zeta_t`` (1), ``zeta_tt`` (2), ``zeta_ttt`` (3);
    n = 4 serves as the sensitivity of ``zeta_ttt`` in accuracy measurements.
    Raises ``ArithmeticError`` if mpmath's error estimate exceeds 10^(10 - dps) times the
    integrand's scale (its largest modulus at the split points), i.e. if fewer than about
    dps - 10 digits relative to that scale are trustworthy.
    """
    _check_arguments(t, g, orders)
    with mpmath.workdps(dps):
        t, g = mpmath.mpf(t), mpmath.mpf(g)
        two_over_sqrt_pi = 2 / mpmath.sqrt(mpmath.pi)
        if g == 0:
            e0, e1 = mpmath.erf(t), two_over_sqrt_pi * mpmath.exp(-t * t)
            return tuple(+d_erf_squared(n, t, e0, e1) for n in orders)
        norm = 1 / mpmath.sqrt(2 * mpmath.pi)
        cache = {}
        # erf' is needed by the derivatives only: zeta alone (orders (0,)) skips its exp(-x^2), a
        # quarter of the work per node, and gets the same numbers (d_erf_squared(0, ...) = e0^2).
        with_e1 = max(orders) > 0

        def integrand(order, z):
            if z not in cache:
                x = t + g * z
                cache[z] = (x, mpmath.erf(x), two_over_sqrt_pi * mpmath.exp(-x * x) if with_e1 else None,
                            norm * mpmath.exp(-z * z / 2))
            x, e0, e1, phi = cache[z]
            return d_erf_squared(order, x, e0, e1) * phi

        points = _breakpoints(t, g, max(orders), mpmath.sqrt)
        if max(orders) == 0:
            points = _within_density(points, dps)
        out = []
        for order in orders:
            if t == 0 and order % 2 == 1:
                out.append(mpmath.mpf(0))
                continue
            # mpmath's stopping rule is absolute (error <= eps): normalise to an O(1) integrand.
            scale = max(abs(integrand(order, z)) for z in points)
            value, err = mpmath.quad(lambda z: integrand(order, z) / scale,
                                     [mpmath.ninf, *points, mpmath.inf], error=True,
                                     method=method)
            if not err <= mpmath.mpf(10) ** (10 - dps):
                raise ArithmeticError(
                    f"mpmath quadrature of d^{order}/dt^{order} zeta(t={t}, g={g}) did not "
                    f"converge: estimated error {mpmath.nstr(err * scale, 3)} on value "
                    f"{mpmath.nstr(value * scale, 5)}; raise dps")
            out.append(value * scale)
        return tuple(out)


def zeta_derivative_mpmath(t, g, order, dps=40, *, method="gauss-legendre"):
    """d^n/dt^n zeta(t, g) for n = ``order`` in 0..4 as an mpf at ``dps`` digits.

    Single-order form of ``zeta_derivatives_mpmath`` (see there); sibling of
    ``theory.zeta.zeta_t`` (order 1), ``zeta_tt`` (2) and ``zeta_ttt`` (3).
    """
    return zeta_derivatives_mpmath(t, g, (order,), dps, method=method)[0]


def zeta_mpmath(t, g, dps=40, *, method="gauss-legendre"):
    """zeta(t, g) = E[erf(t + g Z)^2] = int erf(t + g z)^2 phi(z) dz as an mpf at ``dps`` digits.

    mpmath quadrature of the defining expectation (docs/math/risk.md#closed-form-of-zeta-through-owens-t), not of the Owen's T formula;
    valid for real t and g >= 0. Siblings: ``theory.zeta.zeta`` (closed form, float64) and
    ``zeta_quad`` (scipy, float64); derivatives in ``zeta_derivatives_mpmath``.
    """
    return zeta_derivatives_mpmath(t, g, (0,), dps, method=method)[0]


def zeta_quad(t, g, *, epsrel=1e-13):
    """zeta(t, g) = int erf(t + g z)^2 phi(z) dz by scipy.integrate.quad, as ``QuadResult``.

    float64 QUADPACK on (-inf, p_0], [p_0, p_n] (split at the interior points p_i of the
    module docstring with |p_i| < 40) and [p_n, inf), relative tolerance ``epsrel``;
    ``abserr`` is the sum of QUADPACK's estimates (g = 0 returns erf(t)^2 with abserr 0, no
    quadrature). Raises ``ArithmeticError`` if QUADPACK reports a problem. Siblings: ``theory.zeta.zeta`` (closed form) and ``zeta_mpmath``.
    """
    _check_arguments(t, g)
    t, g = float(t), float(g)
    if g == 0:
        return QuadResult(value=float(special.erf(t) ** 2), abserr=0.0)
    norm = 1.0 / math.sqrt(2.0 * math.pi)

    def integrand(z):
        return special.erf(t + g * z) ** 2 * norm * math.exp(-0.5 * z * z)

    # beyond |z| = 40 the density is below 1e-347: further split points only cost evaluations
    points = [p for p in _breakpoints(t, g, 0, math.sqrt) if abs(p) < 40.0]
    lo, hi = points[0], points[-1]
    pieces = [((-math.inf, lo), {}), ((lo, hi), {"points": points[1:-1], "limit": 200}),
              ((hi, math.inf), {})]
    value = abserr = 0.0
    for (a, b), extra in pieces:
        out = integrate.quad(integrand, a, b, epsabs=0.0, epsrel=epsrel, full_output=1, **extra)
        if len(out) > 3:  # QUADPACK appends a message when ier > 0
            raise ArithmeticError(
                f"scipy quad of zeta(t={t}, g={g}) on [{a}, {b}] failed: {out[3]}")
        value += out[0]
        abserr += out[1]
    return QuadResult(value=value, abserr=abserr)


def zeta_owen_mpmath(t, g, dps=25):
    """zeta(t, g) = erf(t/c2)^2 + (4/pi) int_c^1 exp(-h^2 (1 + x^2)/2) / (1 + x^2) dx as an mpf at
    ``dps`` digits, h = sqrt(2) t / c2, c2 = sqrt(1 + 2g^2), c = 1/sqrt(1 + 4g^2): the
    cancellation-free Owen's T form (docs/math/risk.md#closed-form-of-zeta-through-owens-t, proved
    in tests/test_zeta_symbolic.py), by mpmath quadrature; ~20x faster than ``zeta_mpmath``."""
    _check_arguments(t, g)
    with mpmath.workdps(dps):
        t, g = mpmath.mpf(float(t)), mpmath.mpf(float(g))
        c2 = mpmath.sqrt(1 + 2 * g * g)
        h, c = mpmath.sqrt(2) * t / c2, 1 / mpmath.sqrt(1 + 4 * g * g)
        tail = mpmath.quad(lambda x: mpmath.exp(-h * h * (1 + x * x) / 2) / (1 + x * x), [c, 1])
        return mpmath.erf(t / c2) ** 2 + 4 / mpmath.pi * tail
