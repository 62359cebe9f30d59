"""Every claim's tolerance recomputed from its stated derivation, independently of the claim's code.

Each entry of ``RECOMPUTE`` takes the claim's quick-mode result and returns (expected tolerance,
expected measured value or None), rebuilt from the derivation's inputs (the family size of a
Bonferroni test, the step count of a roundoff bound, the quadrature's abserr, ...) with the
constants of the derivation written out here: a tolerance loosened in one place (the claim's code,
a shared helper, a module constant) no longer matches. Full-mode constants that the quick run does
not exercise are checked against the derivation at the end.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from figures.verify import discover_claims

EPS = np.finfo(float).eps
ZETA_BOUND = 13 * EPS        # theory.zeta's declared relative error (its module docstring)
ROUNDINGS = 32               # roundings per closed-form term (theorem1 claims' derivation)
FAMILY = 1e-3                # family-wise false-failure rate of every statistical claim


def bonferroni_z(m, alpha=FAMILY):
    return float(norm.isf(alpha / (2 * m)))


def _z_test(result):
    return bonferroni_z(len(result.details["z_scores"])), None


def _student_family(result):
    # t-tests with standard errors estimated from n_runs runs: Student t with n_runs - 1 dof
    from scipy.stats import t as student

    d = result.details
    z = float(student.isf(FAMILY / (2 * d["n_tests"]), d["n_runs"] - 1))
    assert d["z_crit"] == pytest.approx(z, rel=1e-12) and d["n_tests"] == 2 * 2 * (len(d["t"]) - 1)
    return 0.5, d["upper_effective"] / d["lower_population"]


def _student_z(result):
    # z-tests whose standard errors are estimated from n_runs runs: Student t with n_runs - 1 dof
    from scipy.stats import t as student

    d = result.details
    return float(student.isf(FAMILY / (2 * len(d["z_scores"])), d["n_runs"] - 1)), None


def _ks_family(result):
    m = len(result.details["pvalues"])
    return -math.log10(FAMILY / m), None


def _sgd_law(result):
    d = result.details
    m = len(d["cases"]) * len(d["steps"]) * 5
    return -math.log10(FAMILY / m), None


def _sgd_flow(result):
    # Two tests (exponent, chi2 fit) share the family rate; the exponent test is two-sided.
    return float(norm.isf(FAMILY / 4)) * result.details["rate_stderr"], None


def _oracle_expectation(result):
    # |difference| / S with S = eps^2 + gamma^2 (1 + 2 + 1) + (L-1) zeta(0, lambda), the sum of |terms|
    # of the oracle formula (0 <= erf, zeta <= 1), zeta(0, lambda) = (2/pi) arcsin(2 lam^2/(1 + 2 lam^2)).
    d = result.details
    ratios = [diff / (eps**2 + 4 * gamma**2 + (L - 1) * (2 / math.pi) * math.asin(2 * lam**2 / (1 + 2 * lam**2)))
              for diff, (_, L, gamma, eps, lam) in zip(d["differences"], d["problems"])]
    return ROUNDINGS * EPS + ZETA_BOUND, max(ratios)


def _quadrature(result):
    d = result.details
    allowed = np.array(d["quad_abserr"]) + (ROUNDINGS * EPS + ZETA_BOUND) * np.array(d["term_scale"])
    return 1.0, float(np.max(np.array(d["differences"]) / allowed))


def _lambda_c_limit(result):
    d = result.details
    ds = np.array(d["d"])
    ratios = []
    for rel, c1, xtol in zip(d["relative_errors"], d["c1"], d["xtol"]):
        # |rel| = O(1/d): its value at d_min scaled by d_min / d_max, doubled for the O(1/d^2)
        # change, plus the root finder's xtol relative to the gap c1 / d_max.
        allowed = 2 * abs(rel[0]) * ds[0] / ds[-1] + xtol * ds[-1] / c1
        ratios.append(abs(rel[-1]) / allowed)
    return 1.0, max(ratios)


def _null_limit(result):
    d = result.details
    L = np.array(d["L"], dtype=float)
    x = np.log(L)
    lever = np.sum(np.abs(x - x.mean())) / np.sum((x - x.mean()) ** 2)
    ratios = []
    for slope, gamma, ratio in zip(d["slopes"], d["gammas"], d["ratios"]):
        correction = abs(1 - gamma**2) / (gamma**2 + L[0] - 1)
        # The roundoff part (<= lever x 4 eps null/gap) is below 1e-9 here: the ratio is bounded
        # below by |slope + 1| / (correction + 1e-9).
        assert abs(slope + 1) / (correction + 1e-9) <= ratio * (1 + 1e-12)
        assert ratio <= abs(slope + 1) / correction * (1 + 1e-12)
        ratios.append(ratio)
    assert lever > 0
    return 1.0, None


def _definition1(result):
    # Roundoff accumulation: <= eps per step over N steps (N = 1000 in quick mode).
    assert result.details["steps"] == 1000
    return 1000 * EPS, None


def _corollary2_rate(result):
    from theory import corollary2

    name = {"L-fixed": "L fixed", "L-log-d": "L = log d", "L-sqrt-d": "L = sqrt d"}[
        result.claim_id.removeprefix("corollary2-rate-")]
    d = np.array(result.details["d"])
    tolerances = []
    for gamma in result.details["gammas"]:
        fit = corollary2.corollary2_rate(name, d, gamma)
        # Float error of log E: zeta's relative error + 8 ulps of gamma^2 over the excess.
        delta = fit.delta_max + float(np.max(ZETA_BOUND + 8 * EPS * gamma**2 / np.asarray(fit.excess)))
        offset = float(np.max(np.abs(fit.local_slopes - fit.sequence.exponent)))
        tolerances.append(offset + delta * fit.fit_d.leverage)
    ratios = [m / t for m, t in zip(result.details["measured"], tolerances)]
    return tolerances[int(np.argmax(ratios))], None


def _bayes_ordering(result):
    # Inequalities up to zeta's relative error and 64 ulps of the closed forms.
    return 1.0 + ZETA_BOUND + 64 * EPS, None


def _counter(slack):
    return lambda result: (1.0 + slack, None)


RECOMPUTE = {
    "zeta-closed-form": lambda r: (ZETA_BOUND, None),
    "theorem1-oracle-expectation": _oracle_expectation,
    "theorem1-oracle-general": lambda r: (ROUNDINGS * EPS + ZETA_BOUND, None),
    "theorem1-quadrature": _quadrature,
    "theorem1-montecarlo": _z_test,
    "corollary2-rate-L-fixed": _corollary2_rate,
    "corollary2-rate-L-log-d": _corollary2_rate,
    "corollary2-rate-L-sqrt-d": _corollary2_rate,
    # lower bound / excess <= 1 up to the float64 error of E, as each claim's derivation states
    "corollary2-counter-lambda-fixed": None,
    "corollary2-counter-lambda-sqrt-d": None,
    "corollary2-counter-L-proportional": None,
    "proposition3-montecarlo": _z_test,
    "proposition3-null-limit": _null_limit,
    "proposition3-ols": _z_test,
    "attention-linear-crossover": lambda r: (0.0, None),
    "bayes-quadrature-montecarlo": _z_test,
    "bayes-risk-ordering": _bayes_ordering,
    "definition1-overlap-vs-vector": _definition1,
    "invariance-of-M": lambda r: (0.0, None),
    "theorem5-convergence": lambda r: (0.05, None),
    "theorem5-distance-to-M": lambda r: (1.0, None),
    "invariance-of-M-symbolic": lambda r: (0.0, None),
    "fixed-points-on-M-symbolic": lambda r: (0.0, None),
    "oracle-local-rates": lambda r: (0.0, None),
    "pgd-to-flow-order-1": lambda r: (0.05, None),
    "initial-overlap-law": _ks_family,
    "fixed-points-on-M-numerical": lambda r: (0.0, None),
    "lambda-c-finite-differences": lambda r: (1.0, None),
    "lambda-c-limit": _lambda_c_limit,
    "sgd-reduced-equals-full-in-law": _sgd_law,
    "sgd-determinism-across-executors": lambda r: (0.0, None),
    "sgd-to-flow-order-1": _sgd_flow,
    # measured = max difference / (8 n eps for PGD, 4 B L n eps for reduced SGD) (docs/math/kernels.md)
    "kernels-equal-reference": lambda r: (1.0, max(r.details["pgd_ratio"], r.details["sgd_ratio"])),
    "nonlinearities-routes": _z_test,
    # |difference| / (the two quadratures' error estimates) <= 1
    "nonlinearities-M-invariance": lambda r: (1.0, None),
    # |fitted - predicted| / (quadrature error estimate + 64 ulps of the terms) <= 1
    "nonlinearities-linear-gate-rate": lambda r: (1.0, None),
    # Jensen's lower bound / excess <= 1 + the quadrature's relative error (< 1e-10)
    "nonlinearities-sigmoid-floor": lambda r: (1.0 + 1e-10, None),
    # orderings: ratio <= 1, count difference <= 0
    "nonlinearities-softmax-oracle": lambda r: (1.0, None),
    "nonlinearities-sgd-training": lambda r: (0.0, None),
    "highdim-one-step-drift": _z_test,
    "highdim-fluctuation-closure": _student_z,
    "highdim-escape-time": _z_test,
    "highdim-sgd-escape": _z_test,
    "highdim-one-run-spread": _z_test,
    "highdim-escape-sphere": _z_test,
    "highdim-paper-sgd": _student_family,
    # two-sided z-tests of the fixed point plus the two one-sided side tests, one Bonferroni family
    "highdim-largest-step": lambda r: (bonferroni_z(len(r.details["z_scores"]) + 2), None),
    # |closed form - extrapolation| / (the extrapolation's error estimate) <= 1, the largest over the cases
    "highdim-limit-closed-form": lambda r: (1.0, max(r.details["ratios"])),
    # |closed form - extrapolation| / (the extrapolation's error estimate) <= 1, the largest over the cases
    "highdim-branch-end": lambda r: (1.0, max(r.details["ratios"])),
}


def test_every_claim_has_a_recomputed_tolerance():
    assert set(RECOMPUTE) == {c.claim_id for c in discover_claims()}


@pytest.mark.parametrize("claim_id", [k for k, v in RECOMPUTE.items() if v is not None])
def test_tolerance_is_recomputed_from_its_derivation(claim_id, quick_claim):
    result = quick_claim(claim_id)
    assert result.status == "pass", (result.measured_text, result.details.get("traceback"))
    tolerance, measured = RECOMPUTE[claim_id](result)
    assert result.tolerance == pytest.approx(tolerance, rel=1e-12, abs=0.0)
    if measured is not None:
        assert result.measured == pytest.approx(measured, rel=1e-12, abs=0.0)


@pytest.mark.parametrize("claim_id", ["corollary2-counter-lambda-fixed", "corollary2-counter-lambda-sqrt-d",
                                      "corollary2-counter-L-proportional"])
def test_counter_case_slack_is_the_float_error_of_the_excess(claim_id, quick_claim):
    # Each counter-case claim passes iff every lower bound / E <= 1 + slack, the slack being the
    # relative float64 error of the excess E: at most zeta's relative error + a few ulps over the
    # excess, i.e. far below 1e-6 at the points used.
    result = quick_claim(claim_id)
    slack = result.tolerance - 1.0
    assert 0.0 <= slack <= 1e-9
    ratios = np.array(result.details["bounds"]) / np.array(result.details["excesses"])
    assert result.measured == pytest.approx(float(np.max(ratios)), rel=1e-15, abs=0.0)


def test_full_mode_constants_match_their_derivations():
    from figures.verify.claims import bayes, theorem1_routes, theorem5

    # Theorem 5: full-mode convergence threshold 1e-4 (quick 0.05, the alignment threshold).
    assert theorem5._DELTA == {True: 0.05, False: 1e-4}
    # The z-tests: family-wise rate 1e-3, power 0.9.
    assert theorem1_routes._ALPHA == FAMILY and theorem1_routes._POWER == 0.9
    assert bayes._ALPHA == FAMILY and bayes._POWER == 0.9
