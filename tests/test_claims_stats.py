"""Claims on statistics, Corollary 2, the symbolic layer and oracle stability: each passes in quick
mode, and a deliberately wrong ingredient (monkeypatched) makes it fail."""

import dataclasses
import importlib

import pytest

from figures.verify import discover_claims

CLAIMS = {c.claim_id: c for c in discover_claims()}

OURS = ("corollary2-rate-L-fixed", "corollary2-rate-L-log-d", "corollary2-rate-L-sqrt-d",
        "corollary2-counter-lambda-fixed", "corollary2-counter-lambda-sqrt-d",
        "corollary2-counter-L-proportional", "bayes-quadrature-montecarlo", "bayes-risk-ordering",
        "proposition3-ols", "attention-linear-crossover", "invariance-of-M-symbolic", "fixed-points-on-M-symbolic",
        "oracle-local-rates", "lambda-c-finite-differences", "lambda-c-limit")


def run(claim_id):
    return CLAIMS[claim_id](quick=True)


@pytest.mark.parametrize("claim_id", OURS)
def test_claim_passes_in_quick_mode(claim_id, quick_claim):
    result = quick_claim(claim_id)
    assert result.status == "pass", (result.measured_text, result.details.get("traceback"))
    assert result.method and result.derivation and result.measured_text
    assert result.measured <= result.tolerance


def wrap(monkeypatch, target, change):
    """Replace ``module.name`` (target "module.name") by change(original)."""
    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    monkeypatch.setattr(module, name, change(getattr(module, name)))


def scaled_risk(factor):
    return lambda f: (lambda *a, **k: dataclasses.replace(f(*a, **k), risk=f(*a, **k).risk * factor))


@pytest.mark.parametrize("claim_id, target, change", [
    # a rate off by d^0.05 is outside the derived slope tolerance
    ("corollary2-rate-L-fixed", "theory.corollary2.oracle_excess",
     lambda f: (lambda d, L, g, lam: f(d, L, g, lam) * d**0.05)),
    ("corollary2-rate-L-sqrt-d", "theory.corollary2.oracle_excess",
     lambda f: (lambda d, L, g, lam: f(d, L, g, lam) * d**-0.05)),
    # the lambda-fixed excess is tight against its bound: 1e-6 too small is caught
    ("corollary2-counter-lambda-fixed", "theory.corollary2.oracle_excess",
     lambda f: (lambda *a: f(*a) * (1 - 1e-6))),
    ("corollary2-counter-L-proportional", "theory.corollary2.oracle_excess_lower_bound",
     lambda f: (lambda *a: f(*a) * 1.01)),
    # a 5% error of the Bayes risk is caught by the two-route z-test
    ("bayes-quadrature-montecarlo", "theory.bayes.bayes_risk_quad",
     lambda f: (lambda p, **k: dataclasses.replace(f(p, **k), value=f(p, **k).value * 1.05))),
    ("bayes-risk-ordering", "theory.baselines.oracle_best_lambda", scaled_risk(0.8)),
    ("proposition3-ols", "theory.baselines.linear_risk", lambda f: (lambda p: f(p) * 1.05)),
    ("attention-linear-crossover", "theory.baselines.attention_linear_crossover",
     lambda f: (lambda L, g: 1.5 * f(L, g))),
    # lambda_c off by 1e-4 relative (the FD tolerance is ~2e-6 lambda_c)
    ("lambda-c-finite-differences", "theory.stability.critical_lambda",
     lambda f: (lambda *a, **k: dataclasses.replace(f(*a, **k), lam_c=f(*a, **k).lam_c * (1 + 1e-4)))),
    # a 1e-7 shift of lambda_c is 1% of lambda_c - sqrt(3)/2 at d = 1e6
    ("lambda-c-limit", "theory.stability.critical_lambda",
     lambda f: (lambda *a, **k: dataclasses.replace(f(*a, **k), lam_c=f(*a, **k).lam_c + 1e-7))),
])
def test_claim_fails_on_wrong_input(claim_id, target, change, monkeypatch):
    wrap(monkeypatch, target, change)
    assert run(claim_id).status == "fail"


def test_symbolic_claims_fail_on_wrong_proofs(monkeypatch):
    import sympy as sp

    from theory.symbolic import manifold

    fp = importlib.import_module("theory.symbolic.fixed_points")
    good = manifold.manifold_invariance()
    monkeypatch.setattr(manifold, "manifold_invariance",
                        lambda: dataclasses.replace(good, flow_on_M=(0, sp.Symbol("x"), 0)))
    assert run("invariance-of-M-symbolic").status == "fail"
    rates = manifold.oracle_local_rates_symbolic()
    monkeypatch.setattr(manifold, "oracle_local_rates_symbolic",
                        lambda: dataclasses.replace(rates, positive=(True, None)))
    assert run("oracle-local-rates").status == "fail"
    points = fp.fixed_points()
    swapped = tuple(dataclasses.replace(p, kind="stable") if (p.kappa, p.nu) == (0, 0) else p for p in points)
    monkeypatch.setattr(fp, "fixed_points", lambda: swapped)
    assert run("fixed-points-on-M-symbolic").status == "fail"
    monkeypatch.setattr(fp, "fixed_points", lambda: points[:-1])
    assert run("fixed-points-on-M-symbolic").status == "fail"
