"""Large-d asymptotics of the oracle excess risk R(k*, v*) - eps^2 (docs/math/corollary2.md#rate-of-the-oracle-excess; paper Cor 2).

Exact form (paper Thm 1): excess = gamma^2 T1 + (L-1) zeta(0, lambda), with the gate shortfall
T1 = E[erfc(lambda (s + gamma Z))^2], s = sqrt(d/2), and the noise-token leakage. Derived here:

- leakage: zeta(0, lam) = (4/pi) lam^2 - (8/pi) lam^4 + O(lam^6) (sympy series of the arcsin form).
- shortfall, x = lambda s -> inf, g = lambda gamma: erfc(y)^2 = exp(-2y^2)/(pi y^2) (1 - 1/y^2 + ...)
  (sympy series at oo); E[exp(-2(x + gZ)^2)] = exp(-2x^2/(1+4g^2))/sqrt(1+4g^2) (sympy integral);
  the slowly varying 1/(pi y^2) taken at the tilted mean x/(1+4g^2) gives
      T1 ~ (1+4g^2)^(3/2) exp(-2x^2/(1+4g^2)) / (pi x^2).
- Corollary 2 scaling lambda = c (L d)^(-1/4), L = d^a with 0 <= a < 1 (a = 0: L fixed):
  x^2 = c^2 d^((1-a)/2)/2 -> inf, so T1 is exponentially small and
      excess ~ (4 c^2/pi) (L-1)/sqrt(L d) ~ d^((a-1)/2)  (exponent ``corollary2_exponent``).
  Counter-cases: a = 1 keeps x fixed (excess -> const > 0); fixed lambda gives (L-1) zeta(0, lam) > 0.
- Optimal lambda (d -> inf, L fixed): with y = lambda^2 d = 2x^2 and g -> 0, the excess is
      F(y) = A y + B e^(-y) (1/y - 2/y^2 + ...),  A = (4/pi)(L-1)/d,  B = 2 gamma^2/pi.
  F'(y) = 0 at y* = W - 1/W + O(W^-2), W = LambertW(D), D = B/A = gamma^2 d / (2(L-1)),
  and F(y*) = A (W + 1 - 2/W + O(W^-2)). So lambda* ~ sqrt(W(D)/d) ~ sqrt(log(d)/d) and the
  optimal excess ~ (4/pi)(L-1) log(d)/d: the balance of leakage (L-1) lambda^2 with the
  Gaussian tail of the gate. The coefficients -1 and -2 are derived by ``optimal_expansion``.

Numeric siblings: ``theory.risk.oracle_risk`` (exact); predictions ``corollary2_excess_leading``,
``optimal_lambda_predicted``, ``optimal_excess_predicted``; ``minimise_oracle_excess`` (exact).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import scipy  # scipy.optimize loads on first use (scipy's lazy submodules)
import sympy as sp
from scipy.special import lambertw

from .functions import zeta_at_zero

__all__ = ["leakage_series", "shortfall_leading", "corollary2_exponent", "OptimalExpansion",
           "optimal_expansion", "corollary2_excess_leading", "optimal_lambda_predicted",
           "optimal_excess_predicted", "OptimalLambda", "minimise_oracle_excess"]


@functools.lru_cache(maxsize=None)
def leakage_series(order: int = 6):
    """(lam, series of zeta(0, lam) up to O(lam^order)) from the arcsin form."""
    lam = sp.Symbol("lam", positive=True)
    return lam, sp.series(zeta_at_zero(lam), lam, 0, order)


@functools.lru_cache(maxsize=None)
def shortfall_leading():
    """(x, g, leading T1, erfc^2 correction factor in y): see the module docstring."""
    x, g, y = sp.symbols("x g y", positive=True)
    z = sp.Symbol("z", real=True)
    # erfc(y)^2 exp(2y^2) pi y^2 = 1 - 1/y^2 + O(y^-4) as y -> oo.
    ratio = sp.expand(sp.erfc(y).series(y, sp.oo, 5).removeO() * sp.exp(y**2) * sp.sqrt(sp.pi) * y)
    correction = sp.series(ratio**2, y, sp.oo, 4).removeO()
    gauss = sp.integrate(sp.exp(-2 * (x + g * z)**2 - z**2 / 2) / sp.sqrt(2 * sp.pi), (z, -sp.oo, sp.oo))
    tilted_mean = x / (1 + 4 * g**2)
    return x, g, sp.simplify(gauss / (sp.pi * tilted_mean**2)), correction


@functools.lru_cache(maxsize=None)
def corollary2_exponent(a) -> sp.Expr:
    """Exponent p of excess ~ d^p under lambda = c (L d)^(-1/4), L = d^a (a = 0: L fixed)."""
    d, c = sp.symbols("d c", positive=True)
    a = sp.nsimplify(a)
    L = d**a if a != 0 else sp.Symbol("L", positive=True) + 1  # fixed L > 1
    lam = c * (L * d) ** sp.Rational(-1, 4)
    leading = (L - 1) * 4 / sp.pi * lam**2
    return sp.limit(sp.log(leading) / sp.log(d), d, sp.oo)


@dataclasses.dataclass(frozen=True)
class OptimalExpansion:
    """y* = W + delta_1/W, F*/A = W + 1 + f_1/W (W = LambertW(D)), derived coefficients."""

    delta_1: sp.Expr
    f_1: sp.Expr


@functools.lru_cache(maxsize=None)
def optimal_expansion() -> OptimalExpansion:
    """Solve F'(y) = 0 for y = W + c1/W with e^(-W) = W/D, B = A D (module docstring)."""
    e, c1 = sp.symbols("e c1")  # e = 1/W
    y, W = 1 / e + c1 * e, 1 / e
    _, _, _, corr = shortfall_leading()
    ysym = sp.Symbol("y", positive=True)
    tail = corr.subs(sp.Symbol("y", positive=True), sp.sqrt(ysym / 2)) / ysym  # (1 - 2/y)/y
    # F/A = y + D e^(-y) tail(y) with D e^(-W) = W, so D e^(-y) = W e^(-(y - W)).
    F_over_A = y + W * sp.exp(-(y - W)) * tail.subs(ysym, y)
    dF = sp.diff(y + W * sp.exp(-(ysym - W)) * tail, ysym).subs(ysym, y)  # F'(y)/A
    c1_value = sp.solve(sp.series(dF, e, 0, 2).removeO().coeff(e, 1), c1)[0]
    Fstar = sp.series(F_over_A.subs(c1, c1_value), e, 0, 2).removeO()
    return OptimalExpansion(delta_1=c1_value, f_1=sp.expand(Fstar).coeff(e, 1))


def corollary2_excess_leading(d, L, c):
    """(4 c^2/pi)(L-1)/sqrt(L d): leading excess under lambda = c (L d)^(-1/4)."""
    d, L = np.asarray(d, dtype=float), np.asarray(L, dtype=float)
    return 4 * c**2 / np.pi * (L - 1) / np.sqrt(L * d)


def _lambert(d, L, gamma):
    D = gamma**2 * np.asarray(d, dtype=float) / (2 * (np.asarray(L, dtype=float) - 1))
    return lambertw(D).real


def optimal_lambda_predicted(d, L, gamma, next_order: bool = False):
    """lambda* = sqrt(y*/d), y* = W (+ delta_1/W if next_order), W = LambertW(gamma^2 d/(2(L-1)))."""
    W = _lambert(d, L, gamma)
    y = W + float(optimal_expansion().delta_1) / W if next_order else W
    return np.sqrt(y / np.asarray(d, dtype=float))


def optimal_excess_predicted(d, L, gamma, next_order: bool = False):
    """(4/pi)(L-1)/d (W + 1 (+ f_1/W if next_order)): the minimal oracle excess, d -> inf."""
    W = _lambert(d, L, gamma)
    bracket = W + 1 + (float(optimal_expansion().f_1) / W if next_order else 0.0)
    return 4 / np.pi * (np.asarray(L, dtype=float) - 1) / np.asarray(d, dtype=float) * bracket


@dataclasses.dataclass(frozen=True)
class OptimalLambda:
    """Exact minimiser of the oracle excess over lambda (finite d) with solver diagnostics."""

    lam: float
    excess: float
    nfev: int
    converged: bool


def minimise_oracle_excess(d, L, gamma, rtol: float = 1e-10) -> OptimalLambda:
    """argmin over lambda of the exact R(k*, v*) - eps^2 (``theory.risk.oracle_risk``), by Brent
    in log lambda started around ``optimal_lambda_predicted``. Raises if Brent fails."""
    from theory.parameters import Problem
    from theory.risk import oracle_risk

    f = lambda u: float(oracle_risk(Problem(d=d, L=L, gamma=gamma, eps=0.0, lam=float(np.exp(u)))))
    guess = float(np.log(optimal_lambda_predicted(d, L, gamma)))
    res = scipy.optimize.minimize_scalar(f, bracket=(guess - 0.5, guess + 0.5), method="brent", tol=rtol)
    if not res.success:
        raise ArithmeticError(f"Brent minimisation failed for d={d}, L={L}, gamma={gamma}: {res.message}")
    return OptimalLambda(lam=float(np.exp(res.x)), excess=float(res.fun), nfev=int(res.nfev),
                         converged=bool(res.success))
