"""Paper Theorem 1 / docs/math/risk.md#closed-form-population-risk: the closed-form population risk against quadrature and Monte Carlo."""

from __future__ import annotations

from ..framework import Check, claim, require
from ..checks import PILOT_N, EPS, random_overlaps, random_problem, sized_estimate, z_test_check

ORDER = 30

_STATEMENT = ("Theorem 1 (general form, docs/math/risk.md#closed-form-population-risk): R(k, v) = eps^2 + gamma^2 - 2 E1 + E2 + N in closed "
              "form, for every d, L and overlaps (on and off M)")


def _points(m: int, rng):
    """m random (problem, overlaps), d up to 1e4: a quarter on M, the rest off M."""
    return [(random_problem(rng, d_max=10_000), random_overlaps(rng, on_manifold=(i % 4 == 0)))
            for i in range(m)]


@claim("theorem1-quadrature", _STATEMENT, cost=0.11)
def closed_form_matches_quadrature(quick: bool, rng) -> Check:
    from theory import population_risk
    from theory.risk_roundoff import RISK_ROUNDINGS, risk_term_scale
    from theory.zeta import ZETA_MAX_RELATIVE_ERROR

    population_risk_quad = require("theory.risk_quad").population_risk_quad
    ratios, differences, abserrs, scales = [], [], [], []
    for problem, overlaps in _points(8 if quick else 40, rng):
        q = population_risk_quad(problem, overlaps)
        closed = float(population_risk(problem, overlaps))
        scales.append(float(risk_term_scale(problem, overlaps)))
        allowed = q.abserr + (RISK_ROUNDINGS * EPS + ZETA_MAX_RELATIVE_ERROR) * scales[-1]
        differences.append(abs(closed - q.value))
        abserrs.append(float(q.abserr))
        ratios.append(differences[-1] / allowed)
    return Check(
        method=f"theory.population_risk vs theory.risk_quad.population_risk_quad (1-D QUADPACK, "
               f"independent algebra) at {len(ratios)} random points, 1/4 on M, d up to 1e4",
        measured=max(ratios),
        measured_text=f"max |closed - quad| / allowed = {max(ratios):.3g}",
        tolerance=1.0,
        derivation="allowed = quadrature abserr + closed-form roundoff bound (32 eps + "
                   "ZETA_MAX_RELATIVE_ERROR) x sum of |terms| (theory.risk_roundoff)",
        details={"ratios": ratios, "differences": differences, "quad_abserr": abserrs, "term_scale": scales},
    )


_ALPHA = 1e-3          # family-wise false-failure rate of the z-test
_POWER = 0.9           # probability of detecting a relative error of _DETECT
_DETECT = {True: 0.05, False: 0.02}   # quick, full


@claim("theorem1-montecarlo", _STATEMENT, cost=1.5)
def closed_form_matches_monte_carlo(quick: bool, rng) -> Check:
    from numerics.sgd.trajectory import child_streams
    from theory import population_risk

    population_risk_mc = require("numerics.montecarlo.population_risk").population_risk_mc
    points = _points(8 if quick else 20, rng)
    exacts = [float(population_risk(*point)) for point in points]
    power = dict(alpha=_ALPHA, power=_POWER, detect=_DETECT[quick])
    run = lambda point: (lambda n, r: population_risk_mc(*point, n=n, rng=r))
    # SFC64 children: their normals are drawn by a compiled loop (numerics.montecarlo.task.standard_normals)
    estimates = [sized_estimate(run(point), exact, child, m=len(points), **power)
                 for point, exact, child in zip(points, exacts, child_streams(rng, len(points)))]
    sizes = [e.n for e in estimates]
    return z_test_check(
        method=f"z-test of numerics.montecarlo.population_risk.population_risk_mc against the closed form "
               f"at {len(points)} random points, 1/4 on M, d up to 1e4; n per point ({min(sizes):,} to "
               f"{max(sizes):,}) sized for the power target (internal pilot of {PILOT_N:,}, then top-ups)",
        estimates=estimates, exacts=exacts, **power)
