"""Riemannian Hessian of R on the product of spheres at the oracle (k*, v*) (docs/math/critical-lambda.md#hessian-at-the-oracle).

Tangent vectors at (k*, v*): xi_k = x_v v* + x_1 u_1 + x_2 u_2 (orthogonal to k*) and
xi_v = y_k k* + y_1 u_1 + y_2 u_2 (orthogonal to v*), with u_1, u_2 orthonormal and orthogonal
to k*, v* (two such directions show every case; further ones repeat the u-block). Along the
geodesics k(t) = k* + t xi_k - (t^2/2)|xi_k|^2 k* + O(t^3), v(t) likewise, the overlaps are

    kappa = 1 - t^2 |xi_k|^2/2,  nu = 1 - t^2 |xi_v|^2/2,  theta = t y_k,  eta = t x_v,
    rho = t (x_v + y_k) + t^2 (x_1 y_1 + x_2 y_2) + O(t^3),

and the Hessian quadratic form is d^2/dt^2 R(overlaps(t)) at t = 0 (chain rule to second order):

    Q(xi) = sum_i R_i o_i''(0) + sum_ij R_ij o_i'(0) o_j'(0).

At the oracle R_theta = R_eta = R_rho = 0 (on M), so the u-directions decouple with
eigenvalues -R_kappa(1,1) (k along u, multiplicity d-2) and -R_nu(1,1) (v along u,
multiplicity d-2) -- the rates r_phi, r_psi of the flow on M, both > 0 -- and (x_v, y_k)
(k towards v*: the eta direction; v towards k*: the theta direction) form the 2x2 block

    H_xx = -R_kappa + R_eta,eta + 2 R_eta,rho + R_rho,rho,
    H_yy = -R_nu + R_theta,theta + 2 R_theta,rho + R_rho,rho,
    H_xy = R_rho,rho + R_eta,theta + R_eta,rho + R_theta,rho,

all partials at (kappa, nu, theta, eta, rho) = (1, 1, 0, 0, 0). Its eigenvalues are
(tr +- sqrt((H_xx - H_yy)^2 + 4 H_xy^2))/2; the oracle is a strict local minimum on the sphere
product iff det > 0 and tr > 0. Exact for every finite d >= 4. Numeric siblings:
``theory.stability.oracle_hessian`` (hand-written closed form) and the finite-difference
Hessian of the risk as a function of vectors in ``tests/test_symbolic_hessian.py``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

import sympy as sp

from ._exact import partial_at, simplified
from .functions import Zeta, ZetaT, ZetaTT, numeric_function
from .risk_expr import risk_gradient_expressions, risk_symbols

__all__ = ["OracleHessianExpressions", "oracle_hessian_expressions", "oracle_hessian_block_symbolic",
           "CriticalLambdaLimit", "critical_lambda_limit"]

_NAMES = ("kappa", "nu", "theta", "eta", "rho")


@dataclasses.dataclass(frozen=True)
class OracleHessianExpressions:
    """Hessian at the oracle in coordinates (x_v, x_1, x_2, y_k, y_1, y_2) (module docstring)."""

    coords: tuple
    in_partials: sp.Matrix   # entries in the partial symbols R_i, R_ij at the oracle
    matrix: sp.Matrix        # the same with the partials of ``risk_expression`` substituted
    block: sp.Matrix         # 2x2 block in (x_v, y_k)
    u_eigenvalues: tuple     # (-R_kappa, -R_nu) at the oracle, each with multiplicity d-2
    decoupled: bool          # block-diagonal structure holds symbolically


def _partial_symbols():
    first = {n: sp.Symbol(f"R_{n}") for n in _NAMES}
    second = {(a, b): sp.Symbol(f"R_{a}_{b}") for a, b in itertools.combinations_with_replacement(_NAMES, 2)}
    return first, second


@functools.lru_cache(maxsize=None)
def oracle_hessian_expressions() -> OracleHessianExpressions:
    t = sp.Symbol("t")
    x_v, x1, x2, y_k, y1, y2 = coords = sp.symbols("x_v x_1 x_2 y_k y_1 y_2", real=True)
    ks, vs = sp.Matrix([1, 0, 0, 0]), sp.Matrix([0, 1, 0, 0])
    xi_k, xi_v = sp.Matrix([0, x_v, x1, x2]), sp.Matrix([y_k, 0, y1, y2])
    k = ks + t * xi_k - t**2 / 2 * xi_k.dot(xi_k) * ks
    v = vs + t * xi_v - t**2 / 2 * xi_v.dot(xi_v) * vs
    over = dict(kappa=k.dot(ks), nu=v.dot(vs), theta=v.dot(ks), eta=k.dot(vs), rho=k.dot(v))
    d1 = {n: sp.expand(sp.diff(o, t).subs(t, 0)) for n, o in over.items()}
    d2 = {n: sp.expand(sp.diff(o, t, 2).subs(t, 0)) for n, o in over.items()}
    first, second = _partial_symbols()
    Q = sum(first[n] * d2[n] for n in _NAMES)
    Q += sum((1 if a == b else 2) * second[(a, b)] * d1[a] * d1[b] for (a, b) in second)
    H = sp.hessian(sp.expand(Q), coords) / 2
    # Substitute the actual partials at the oracle.
    S = risk_symbols()
    sym = dict(zip(_NAMES, S.overlaps))
    oracle = {S.kappa: 1, S.nu: 1, S.theta: 0, S.eta: 0, S.rho: 0}
    gradient = dict(zip(_NAMES, risk_gradient_expressions()))
    values = {first[n]: gradient[n].subs(oracle) for n in _NAMES}
    values.update({second[(a, b)]: partial_at(gradient[a], sym[b], oracle) for (a, b) in second})
    Hs = H.xreplace(values)
    block_idx = (0, 3)
    block = Hs.extract(list(block_idx), list(block_idx))
    others = [i for i in range(6) if i not in block_idx]
    off = [Hs[i, j] for i in block_idx for j in others]
    off += [Hs[i, j] for i in others for j in others if i != j]
    diag = [Hs[i, i] - e for i, e in zip(others, (-values[first["kappa"]],) * 2 + (-values[first["nu"]],) * 2)]
    decoupled = all(simplified(e) == 0 for e in off + diag)
    return OracleHessianExpressions(coords, H, Hs, block, (-values[first["kappa"]], -values[first["nu"]]),
                         decoupled)


@functools.lru_cache(maxsize=None)
def _block_numeric():
    S = risk_symbols()
    h = oracle_hessian_expressions()
    return numeric_function(S.params, [h.block[0, 0], h.block[0, 1], h.block[1, 1],
                                       h.u_eigenvalues[0], h.u_eigenvalues[1]])


def oracle_hessian_block_symbolic(d, L, gamma, eps, lam):
    """(H_xx, H_xy, H_yy, -R_kappa, -R_nu) at the oracle, lambdified from the derivation.

    Broadcasts over numpy arrays; ``eps`` does not enter.
    """
    return tuple(_block_numeric()(d, L, gamma, eps, lam))


@dataclasses.dataclass(frozen=True)
class CriticalLambdaLimit:
    """d -> inf limit of det(H_block)/d and the lambda where it vanishes."""

    leading: sp.Expr         # lim det(H_block)/d as d -> inf, a function of (lam, L, gamma)
    factored: sp.Expr
    lam_c: tuple             # positive roots in lambda
    first_correction: tuple  # c1 with lam_c(d) = root + c1/d + O(1/d^2), for each root
    affine_in_d: bool        # det(H_block) is affine in d up to exponentially small terms


@functools.lru_cache(maxsize=None)
def critical_lambda_limit() -> CriticalLambdaLimit:
    """lambda_c as d -> inf, from the closed-form block (finite d -> limit).

    Step: with A = lambda s and a_l = A/c2 -> inf, zeta(A, g) -> 1, zeta'(A, g), zeta''(A, g),
    erf'(a_l), erf''(a_l) -> 0 and erf(a_l) -> 1, all exponentially fast (e^(-c d)), while the
    block grows polynomially in s; the remaining polynomial's det/d has the limit

        8 lambda^2 (L-1) (2 - sqrt(1 + 4 lambda^2)) / (pi (1 + 2 lambda^2) sqrt(1 + 4 lambda^2)),

    (the s^3 terms cancel), positive iff lambda < sqrt(3)/2, for every L >= 2 and gamma > 0.
    Up to exponentially small terms det(H_block) = d * leading + remainder exactly, which gives
    lambda_c(d) = sqrt(3)/2 + c1/d + O(1/d^2), c1 = 4 sqrt(3) gamma^2 (L-1)/3 (``first_correction``).
    Equivalently lambda^2 zeta''(0, lambda) > C_lambda^2: the noise tokens' rho-curvature must beat
    the square of their coupling to the theta direction. Holds as d -> inf only.
    """
    S = risk_symbols()
    block = oracle_hessian_expressions().block
    rep = {}
    for f in block.atoms(Zeta, ZetaT, ZetaTT, sp.erf, sp.exp):
        if f.has(S.d):
            rep[f] = sp.S.One if isinstance(f, (Zeta, sp.erf)) else sp.S.Zero
        elif isinstance(f, (ZetaT, ZetaTT)):   # the noise tokens' terms: explicit, rewritten once each
            rep[f] = f.rewrite(sp.erf)
    b = block.xreplace(rep)
    det_inf = sp.expand(b[0, 0] * b[1, 1] - b[0, 1] * b[1, 0])
    # The entries are polynomials in s = sqrt(d/2) (Poly raises if d enters otherwise), so is
    # det_inf: with d = 2 s^2 its coefficients by powers of s give the limit and the remainder
    # exactly. Affine in d: every coefficient but those of s^0 and s^2 is exactly 0; then
    # det_inf/d = leading(lam) + remainder(lam)/d with leading = c_2/2, remainder = c_0.
    s = sp.Symbol("s", positive=True)
    poly = sp.Poly(det_inf.xreplace({S.d: 2 * s**2}), s)
    coefficients = {power: coefficient for (power,), coefficient in zip(poly.monoms(), poly.coeffs())}
    affine = all(simplified(c) == 0 for power, c in coefficients.items() if power not in (0, 2))
    leading = factored = sp.factor(coefficients.get(2, sp.S.Zero) / 2)
    # Candidates without sympy's own (simplify-based) checking, each then checked exactly.
    candidates = sp.solve(leading, S.lam, check=False, simplify=False)
    roots = tuple(r for r in candidates if r.is_positive and simplified(leading.subs(S.lam, r)) == 0)
    # First-order perturbation of the root: lam_c = lam_0 + c1/d + O(1/d^2), c1 = -remainder/leading'
    # (at the root both are algebraic numbers times polynomials in gamma, L: radsimp and factor
    # give the canonical form).
    remainder = coefficients.get(0, sp.S.Zero)
    c1 = tuple(sp.factor(sp.radsimp(-remainder.subs(S.lam, r) / sp.diff(leading, S.lam).subs(S.lam, r)))
               for r in roots)
    return CriticalLambdaLimit(leading, factored, roots, c1, affine)
