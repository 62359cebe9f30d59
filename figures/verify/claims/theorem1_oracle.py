"""Paper Theorem 1 at the oracle (k, v) = (k*, v*): the oracle-risk formula (docs/math/baselines.md#oracle-risk)."""

from __future__ import annotations

import numpy as np

from ..framework import Check, claim
from ..checks import EPS, random_problem

ORDER = 20

# 17 digits: the decision needs the reference to well below the tolerance (32 + 13) eps S >= 3.6e-15 (S >= 4 gamma^2
# >= 0.36). Gauss-Legendre on [-_Z_MAX, _Z_MAX], split as below, measured against tanh-sinh on the whole line at
# 30 digits at the 240 problems of both claims at seeds 0, 1, 2: mpmath's error estimates <= 3.7e-19, the float64
# reference the same at 236 and 1 ulp apart at 4, i.e. <= 1 eps of the 45 eps tolerance, at half the time of
# tanh-sinh at 17 digits on the whole line (the same at 238, 1 ulp at 2). Gauss-Legendre on the infinite tails
# was 10 ulps off at some despite error estimates < 4e-19: hence the finite limits. (20 digits cost 1.4x the time
# for the same float64 values.)
_DPS = 17
_Z_MAX = 40.0   # the integrand is <= 4 phi(z): beyond |z| = 40 it holds < 8 Phi(-40) < 1e-340 of mass, nothing in float64
_QUAD_ERROR = 1e-17  # largest accepted error estimate of the mpmath quadrature (absolute; the gate gap is <= 4):
                     # < 0.3% of the smallest tolerance 3.6e-15
# Roundoff of a closed form (theory.risk_roundoff): each of its terms goes through at most
# RISK_ROUNDINGS (32) roundings, and zeta is evaluated once with relative error at most
# ZETA_MAX_RELATIVE_ERROR. Hence |error| <= (32 eps + ZETA_MAX_RELATIVE_ERROR) * S with
# S = sum |terms| <= eps^2 + gamma^2 (1 + 2 + 1) + (L-1) zeta(0, lambda) at the oracle. The count
# is written once, in theory.risk_roundoff, for every claim and test that uses it.


def _points(quick: bool, rng):
    return [random_problem(rng, d_max=10_000, L_max=100) for _ in range(8 if quick else 40)]


def _term_scale(problem, zeta0: float) -> float:
    return problem.eps**2 + 4.0 * problem.gamma**2 + (problem.L - 1) * zeta0


def _expectation_form(problem):
    """eps^2 + gamma^2 E[erfc(lambda (s + gamma Z))^2] + (L-1)(2/pi) arcsin(2 lambda^2/(1+2 lambda^2)),
    by mpmath Gauss-Legendre quadrature over |z| <= _Z_MAX (split where the erf argument changes sign);
    returns (value, zeta0)."""
    import mpmath

    with mpmath.workdps(_DPS):
        s = mpmath.sqrt(mpmath.mpf(problem.d) / 2)
        lam, gamma = mpmath.mpf(problem.lam), mpmath.mpf(problem.gamma)
        z0, width = -s / gamma, 1 / (lam * gamma)
        limit = mpmath.mpf(_Z_MAX)
        points = sorted(z for z in {mpmath.mpf(0), mpmath.mpf(-8), mpmath.mpf(8), z0, z0 - width, z0 + width,
                                    z0 - 4 * width, z0 + 4 * width} if -limit < z < limit)
        norm = 1 / mpmath.sqrt(2 * mpmath.pi)   # the standard normal density, without npdf's argument handling

        def integrand(z):
            gap = mpmath.erfc(lam * (s + gamma * z))
            return gap * gap * norm * mpmath.exp(-z * z / 2)

        gate_gap, err = mpmath.quad(integrand, [-limit, *points, limit], error=True, method="gauss-legendre")
        if not err <= _QUAD_ERROR:
            raise ArithmeticError(f"mpmath quadrature of the oracle gate gap did not converge (error {err})")
        zeta0 = 2 / mpmath.pi * mpmath.asin(2 * lam**2 / (1 + 2 * lam**2))
        return float(mpmath.mpf(problem.eps) ** 2 + gamma**2 * gate_gap + (problem.L - 1) * zeta0), float(zeta0)


@claim("theorem1-oracle-expectation",
       "Theorem 1 at (k*, v*): R = eps^2 + gamma^2 E[(1 - erf(lambda(sqrt(d/2) + gamma Z)))^2] "
       "+ (L-1) zeta(0, lambda), zeta(0, lambda) = (2/pi) arcsin(2 lambda^2/(1+2 lambda^2))", cost=0.65)
def oracle_matches_expectation(quick: bool, rng) -> Check:
    from theory import oracle_risk
    from theory.risk_roundoff import RISK_ROUNDINGS
    from theory.zeta import ZETA_MAX_RELATIVE_ERROR

    errors, differences = [], []
    problems = _points(quick, rng)
    for problem in problems:
        reference, zeta0 = _expectation_form(problem)
        differences.append(abs(float(oracle_risk(problem)) - reference))
        errors.append(differences[-1] / _term_scale(problem, zeta0))
    return Check(
        method=f"theory.oracle_risk vs mpmath Gauss-Legendre quadrature of the expectation ({_DPS} digits) at "
               f"{len(problems)} random problems (d up to 1e4, L up to 100, lambda in [0.02, 3])",
        measured=max(errors),
        measured_text=f"max |difference| / S = {max(errors) / EPS:.2f} eps (S = sum of |terms|)",
        tolerance=RISK_ROUNDINGS * EPS + ZETA_MAX_RELATIVE_ERROR,
        derivation=f"float64 roundoff: {RISK_ROUNDINGS} roundings per term + theory.zeta's declared "
                   "relative error, times S",
        details={"relative_to_scale": errors, "differences": differences,
                 "problems": [[int(p.d), int(p.L), float(p.gamma), float(p.eps), float(p.lam)] for p in problems]},
    )


@claim("theorem1-oracle-general",
       "Theorem 1: the general closed form (docs/math/risk.md#closed-form-population-risk) at kappa = nu = 1, theta = eta = rho = 0 equals the "
       "oracle risk eps^2 + gamma^2 E[(1 - erf(lambda(sqrt(d/2) + gamma Z)))^2] + (L-1) zeta(0, lambda)", cost=0.7)
def oracle_matches_general_form(quick: bool, rng) -> Check:
    from theory import Overlaps, population_risk
    from theory.zeta import ZETA_MAX_RELATIVE_ERROR

    from theory.risk_roundoff import RISK_ROUNDINGS, risk_term_scale

    # Independent routes: the general closed form (theory.risk: Owen's T zeta, erf algebra) against
    # the expectation by mpmath quadrature and arcsin (no code shared with theory.risk or theory.zeta).
    errors = []
    problems = _points(quick, rng)
    for problem in problems:
        reference, _ = _expectation_form(problem)
        scale = float(risk_term_scale(problem, Overlaps.oracle()))
        errors.append(abs(float(population_risk(problem, Overlaps.oracle())) - reference) / scale)
    return Check(
        method=f"theory.population_risk(Overlaps.oracle()) vs mpmath Gauss-Legendre quadrature of the expectation "
               f"({_DPS} digits) at {len(problems)} random problems (d up to 1e4, L up to 100)",
        measured=max(errors),
        measured_text=f"max |difference| / S = {max(errors) / EPS:.2f} eps (S = sum of |terms| of the general form)",
        tolerance=RISK_ROUNDINGS * EPS + ZETA_MAX_RELATIVE_ERROR,
        derivation=f"float64 roundoff of the general closed form: {RISK_ROUNDINGS} roundings per term + "
                   f"theory.zeta's declared relative error, times S (the reference has {_DPS} digits)",
        details={"relative_to_scale": [float(e) for e in np.asarray(errors)]},
    )
