"""Exact (sympy) facts about the training dynamics on the manifold M (docs/math/dynamics.md#invariant-manifold).

Each claim runs a derivation of ``theory.symbolic`` (lru-cached, so quick and full mode share
the same proof) and counts the expressions that did not simplify to exactly 0, or the signs sympy
could not decide for all positive parameters: measured = that count, tolerance = 0. These are
proofs for all parameters (d, L, gamma, eps, lambda > 0), not samples; the derivations start
from the symbolic risk (``theory.symbolic.risk_expr``), itself checked against the float64
closed form by the test suite.
"""

from __future__ import annotations

import importlib

from ..framework import Check, claim

ORDER = 60

_PROOF = "exact: sympy simplification to 0 / sign decided for all positive parameters"


def _nonzero(exprs) -> int:
    return sum(1 for e in exprs if e != 0)


@claim("invariance-of-M-symbolic",
       "Invariance of M (paper, docs/math/dynamics.md#invariant-manifold): R_theta = R_eta = R_rho = 0 on M = {theta = eta = rho = 0} "
       "for all parameters, so gradient flow and PGD started on M stay on M", cost=0.7)
def invariance_of_M(quick: bool, rng) -> Check:
    from theory.symbolic import manifold

    inv = manifold.manifold_invariance()
    exprs = inv.linear_terms + inv.partials_on_M + inv.flow_on_M + inv.pgd_on_M
    failures = _nonzero(exprs) + (inv.max_degree > 2)
    return Check(
        method="sympy: R as a polynomial in (theta, eta, rho) has degree <= 2 and no linear term; "
               "(R_theta, R_eta, R_rho), (theta', eta', rho') of the flow and one PGD step (any "
               "step size) on M, simplified (theory.symbolic.manifold_invariance)",
        measured=float(failures),
        measured_text=f"{_nonzero(exprs)} of {len(exprs)} expressions not identically 0; degree in "
                      f"(theta, eta, rho) = {inv.max_degree}",
        tolerance=0.0,
        derivation=_PROOF,
        details={"expressions": [str(e) for e in exprs], "max_degree": int(inv.max_degree)},
    )


# The classification stated in docs/math/dynamics.md#fixed-points-and-their-types for the flow on M.
_EXPECTED_KINDS = {(0, 0): "saddle", (1, 1): "stable", (-1, -1): "stable",
                   (1, -1): "unstable", (-1, 1): "unstable"}


@claim("fixed-points-on-M-symbolic",
       "Fixed points on M (derived, docs/math/dynamics.md#fixed-points-and-their-types): the flow on M has exactly five fixed points in [-1, 1]^2: "
       "(0, 0) a saddle, (1, 1) and (-1, -1) stable, (1, -1) and (-1, 1) unstable, for all parameters", cost=0.7)
def fixed_points_on_M(quick: bool, rng) -> Check:
    from theory.symbolic import manifold

    # The package re-exports the function under the module's name: fetch the module itself.
    fp = importlib.import_module("theory.symbolic.fixed_points")

    flow = manifold.reduced_flow()
    points = fp.fixed_points()
    found = {(int(p.kappa), int(p.nu)): p for p in points if p.kappa.is_integer and p.nu.is_integer}
    mismatched = [k for k, kind in _EXPECTED_KINDS.items() if k not in found or found[k].kind != kind]
    extra = len(points) - len([k for k in _EXPECTED_KINDS if k in found])
    unproved = sum(1 for p in points if not p.proved)
    failures = len(mismatched) + extra + unproved + _nonzero(flow.residuals)
    return Check(
        method="sympy: the flow on M derived from the five-overlap ODE equals the docs/math/dynamics.md#flow-on-m form; "
               "kappa' = nu' = 0 solved by cases on [-1, 1]^2; kinds from the signs of det and trace "
               "of the Jacobian (theory.symbolic.fixed_points)",
        measured=float(failures),
        measured_text=(f"{len(points)} fixed points: "
                       + ", ".join(f"({p.kappa}, {p.nu}) {p.kind}{'' if p.proved else ' (unproved)'}"
                                   for p in points)
                       + f"; {len(mismatched)} differ from docs/math/dynamics.md#fixed-points-and-their-types, {extra} extra, "
                         f"{_nonzero(flow.residuals)} non-zero residuals of the reduced flow"),
        tolerance=0.0,
        derivation=_PROOF,
        details={"points": [[str(p.kappa), str(p.nu), p.kind, bool(p.proved)] for p in points],
                 "mismatched": [list(k) for k in mismatched]},
    )


@claim("oracle-local-rates",
       "Local rates at the oracle (derived, docs/math/dynamics.md#local-rates): on M near (k*, v*), phi = arccos kappa and "
       "psi = arccos nu decay like exp(-r t) with r_phi = 2 gamma^2 a_l erf'(a_l) erfc(b) > 0 and "
       "r_psi = 2 gamma^2 erf(a_l) > 0", cost=0.13)
def local_rates(quick: bool, rng) -> Check:
    from theory.symbolic import manifold

    rates = manifold.oracle_local_rates_symbolic()
    undecided = sum(1 for p in rates.positive if p is not True)
    failures = _nonzero(rates.residuals) + undecided
    return Check(
        method="sympy: Jacobian of the angle flow (phi', psi') at (0, 0) minus diag(-r_phi, -r_psi), "
               "entries simplified; positivity of r_phi, r_psi decided (theory.symbolic."
               "oracle_local_rates_symbolic)",
        measured=float(failures),
        measured_text=f"{_nonzero(rates.residuals)} of {len(rates.residuals)} Jacobian residuals not "
                      f"identically 0; {undecided} of 2 positivity signs undecided",
        tolerance=0.0,
        derivation=_PROOF,
        details={"residuals": [str(r) for r in rates.residuals], "positive": [str(p) for p in rates.positive]},
    )
