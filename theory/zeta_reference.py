"""Reference routes for zeta(t, g) = E[erf(t + g Z)^2], Z ~ N(0, 1) (SPEC §4): quadrature.

Both routes integrate the DEFINING expectation against the standard normal density phi,

    zeta(t, g) = int_R erf(t + g z)^2 phi(z) dz,
    d^n/dt^n zeta(t, g) = int_R (d^n/dx^n erf(x)^2)|_{x = t + g z} phi(z) dz   (n = 1, 2, 3),

(differentiation under the integral sign is legitimate: every d^n/dx^n erf^2 is bounded),
independently of the Owen's T closed form of ``theory.zeta``. They hold for every real t and
g >= 0 and are the siblings of ``theory.zeta.zeta`` / ``zeta_t`` / ``zeta_tt`` / ``zeta_ttt``:

- ``zeta_mpmath``, ``zeta_derivative_mpmath``: mpmath tanh-sinh quadrature at ``dps`` digits,
  used offline by ``scripts/zeta_accuracy.py`` to write ``tests/data/zeta_reference.csv``.
- ``zeta_quad``: scipy.integrate.quad in float64, returning ``QuadResult(value, abserr)``.

The integrand is split where it varies: at the peak of phi (z = 0, +-1, 2, 4, 8, 16 sigmas),
at the zero z0 = -t/g of erf(t + g z) and +-1, 2, 4, 8 of its widths 1/g, and, for the
derivatives, at the peaks z_a = -2 a t g / (1 + 2 a g^2) of exp(-a (t + g z)^2) phi(z)
(a = 1, 2) and +-1, 2, 4, 8, 16 of their widths (1 + 2 a g^2)^(-1/2).
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
from scipy import integrate, special

__all__ = ["QuadResult", "zeta_mpmath", "zeta_derivative_mpmath", "zeta_quad"]

_PHI_STEPS = (1, 2, 4, 8, 16)
_ERF_STEPS = (1, 2, 4, 8)


@dataclasses.dataclass(frozen=True)
class QuadResult:
    """A float64 quadrature: ``value`` and QUADPACK's absolute error estimate ``abserr``."""

    value: float
    abserr: float


def _check_arguments(t, g, order=0):
    for name, value in (("t", t), ("g", g)):
        if not (isinstance(value, (int, float, np.floating, np.integer, mpmath.mpf))
                and mpmath.isfinite(value)):
            raise ValueError(f"{name}={value!r} is not allowed: {name} must be a finite real scalar")
    if g < 0:
        raise ValueError(f"g={g!r} is not allowed: g must be >= 0")
    if order not in (0, 1, 2, 3):
        raise ValueError(f"order={order!r} is not allowed: order must be 0, 1, 2 or 3")


def _breakpoints(t, g, order, sqrt):
    """Sorted distinct split points of the z-integral (see the module docstring)."""
    points = {0 * t}
    points.update(s * k for k in _PHI_STEPS for s in (-1, 1))
    z0 = -t / g
    points.add(z0)
    points.update(z0 + s * k / g for k in _ERF_STEPS for s in (-1, 1))
    if order > 0:
        for a in (1, 2):
            width = 1 / sqrt(1 + 2 * a * g * g)
            za = -2 * a * t * g * width * width
            points.add(za)
            points.update(za + s * k * width for k in _PHI_STEPS for s in (-1, 1))
    return sorted(points)


def _d_erf_squared(x, order, erf, exp, sqrt, pi):
    """d^n/dx^n erf(x)^2 by Leibniz, with erf' = 2/sqrt(pi) e^{-x^2}, erf'' = -2x erf',
    erf''' = (4x^2 - 2) erf'."""
    e0 = erf(x)
    if order == 0:
        return e0 * e0
    e1 = 2 / sqrt(pi) * exp(-x * x)
    if order == 1:
        return 2 * e0 * e1
    e2 = -2 * x * e1
    if order == 2:
        return 2 * e1 * e1 + 2 * e0 * e2
    return 6 * e1 * e2 + 2 * e0 * (4 * x * x - 2) * e1


def zeta_derivative_mpmath(t, g, order, dps=40):
    """d^n/dt^n zeta(t, g) = E[(d^n/dx^n erf^2)(t + g Z)] for n = ``order`` in 0..3, as an mpf.

    mpmath tanh-sinh quadrature of the defining expectation at ``dps`` digits, split at the
    points of the module docstring. g = 0 gives d^n/dt^n erf(t)^2 directly, and odd orders
    vanish at t = 0 by evenness of zeta. Sibling of ``theory.zeta.zeta_t`` (order 1),
    ``zeta_tt`` (2), ``zeta_ttt`` (3). Raises ``ArithmeticError`` if mpmath's error estimate
    exceeds 10^(10 - dps) times the integrand's scale (the largest |integrand| at the split
    points), i.e. if the quadrature did not converge to about dps - 10 digits.
    """
    _check_arguments(t, g, order)
    with mpmath.workdps(dps):
        t, g = mpmath.mpf(t), mpmath.mpf(g)
        fns = dict(erf=mpmath.erf, exp=mpmath.exp, sqrt=mpmath.sqrt, pi=mpmath.pi)
        if g == 0:
            return +_d_erf_squared(t, order, **fns)
        if t == 0 and order % 2 == 1:
            return mpmath.mpf(0)
        norm = 1 / mpmath.sqrt(2 * mpmath.pi)

        def integrand(z):
            return _d_erf_squared(t + g * z, order, **fns) * norm * mpmath.exp(-z * z / 2)

        points = _breakpoints(t, g, order, mpmath.sqrt)
        # mpmath's stopping rule is absolute (error <= eps): normalise to an O(1) integrand.
        scale = max(abs(integrand(z)) for z in points)
        value, err = mpmath.quad(lambda z: integrand(z) / scale,
                                 [mpmath.ninf, *points, mpmath.inf], error=True)
        if not err <= mpmath.mpf(10) ** (10 - dps):
            raise ArithmeticError(
                f"mpmath quadrature of d^{order}/dt^{order} zeta(t={t}, g={g}) did not converge: "
                f"estimated error {mpmath.nstr(err * scale, 3)} on value "
                f"{mpmath.nstr(value * scale, 5)}; raise dps")
        return value * scale


def zeta_mpmath(t, g, dps=40):
    """zeta(t, g) = E[erf(t + g Z)^2] = int erf(t + g z)^2 phi(z) dz as an mpf at ``dps`` digits.

    mpmath tanh-sinh quadrature of the defining expectation (SPEC §4), not of the Owen's T
    formula; valid for real t, g >= 0. Siblings: ``theory.zeta.zeta`` (closed form, float64),
    ``zeta_quad`` (scipy, float64); derivatives in ``zeta_derivative_mpmath``.
    """
    return zeta_derivative_mpmath(t, g, 0, dps)


def zeta_quad(t, g, *, epsrel=1e-13):
    """zeta(t, g) = int erf(t + g z)^2 phi(z) dz by scipy.integrate.quad, as ``QuadResult``.

    float64 QUADPACK on (-inf, p_0], [p_0, p_n] (split at the interior points p_i of the
    module docstring) and [p_n, inf), with relative tolerance ``epsrel``; ``abserr`` is the
    sum of QUADPACK's estimates. Raises ``ArithmeticError`` if QUADPACK reports a problem.
    Siblings: ``theory.zeta.zeta`` (closed form) and ``zeta_mpmath`` (arbitrary precision).
    """
    _check_arguments(t, g)
    t, g = float(t), float(g)
    if g == 0:
        return QuadResult(value=float(special.erf(t) ** 2), abserr=0.0)
    norm = 1.0 / math.sqrt(2.0 * math.pi)

    def integrand(z):
        return special.erf(t + g * z) ** 2 * norm * math.exp(-0.5 * z * z)

    # beyond |z| = 40 the density is below 1e-347 and every float64 integrand vanishes
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
