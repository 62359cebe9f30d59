"""The verification report: claim framework, report files, and ``slr verify --quick`` passing."""

import dataclasses
import json
import math
import platform

import numpy as np
import pytest

from figures.cli import main
from figures.verify import Check, ClaimResult, MissingPrerequisite, claim, discover_claims, require, run_claims
from figures.verify.report import write_report

PAPER_ITEMS = ("theorem1-quadrature", "theorem1-montecarlo", "zeta-closed-form",
               "theorem1-oracle-expectation", "theorem1-oracle-general", "proposition3-null-limit")


def _check(measured, tolerance=1.0):
    return Check(method="m", measured=measured, measured_text="x", tolerance=tolerance, derivation="d")


def test_claim_outcomes():
    ok = claim("ok", "s")(lambda quick, rng: _check(0.5))
    bad = claim("bad", "s")(lambda quick, rng: _check(1.5))
    nan = claim("nan", "s")(lambda quick, rng: _check(math.nan))

    def boom(quick, rng):
        raise ZeroDivisionError("oops")

    def absent(quick, rng):
        require("numerics.no_such_module_here")

    results = run_claims([ok, bad, nan, claim("boom", "s")(boom), claim("absent", "s")(absent)],
                         quick=True, echo=lambda *a: None)
    assert [r.status for r in results] == ["pass", "fail", "error", "error", "skipped"]  # NaN: not a measurement
    assert [r.ok for r in results] == [True, False, False, False, True]
    assert "ZeroDivisionError: oops" in results[3].measured_text and "traceback" in results[3].details
    assert "measured=nan is not allowed" in results[2].measured_text
    assert "no_such_module_here" in results[4].measured_text


def test_claims_are_seeded_per_id_and_seed():
    def draw(quick, rng):
        return _check(float(rng.random()))

    a, b = claim("a", "s")(draw), claim("b", "s")(draw)
    assert a(True, 0).measured == a(True, 0).measured
    assert a(True, 0).measured != b(True, 0).measured
    assert a(True, 0).measured != a(True, 1).measured


def test_require_raises_missing_prerequisite():
    assert require("theory.risk").population_risk
    with pytest.raises(MissingPrerequisite):
        require("theory.not_there")


def test_status_is_validated():
    with pytest.raises(ValueError, match="status"):
        ClaimResult(claim_id="x", statement="s", method="m", measured=0.0, measured_text="",
                    tolerance=1.0, derivation="", status="maybe", seconds=0.0)


def test_report_files_with_nan_and_pipes(tmp_path):
    results = run_claims([claim("p|q", "a | b")(lambda quick, rng: _check(math.nan))], quick=True,
                         echo=lambda *a: None)
    table = write_report(results, md_path=tmp_path / "v.md", json_path=tmp_path / "v.json", quick=True, seed=0)
    payload = json.loads((tmp_path / "v.json").read_text())
    assert payload["claims"][0]["measured"] is None and payload["claims"][0]["status"] == "error"
    assert "p\\|q" in (tmp_path / "v.md").read_text()
    assert "ERROR" in table


def test_report_records_each_items_elapsed_time(tmp_path):
    """Each claim's time and each figure's compute and plot times reach the JSON and the Markdown;
    the total is their sum."""
    from figures.runner import RecipeOutcome

    results = run_claims([claim("c1", "s")(lambda quick, rng: _check(0.5)),
                          claim("c2", "s")(lambda quick, rng: _check(0.5))], quick=True, echo=lambda *a: None)
    results = [dataclasses.replace(r, seconds=s) for r, s in zip(results, (0.75, 2.0))]
    figures = [RecipeOutcome("fig_a", "computed", "no entry", 1.5, 0.25),
               RecipeOutcome("fig_b", "cached", "", 0.0, 0.125)]
    write_report(results, md_path=tmp_path / "v.md", json_path=tmp_path / "v.json", quick=True, seed=0,
                 figures=figures)
    payload = json.loads((tmp_path / "v.json").read_text())
    assert [c["seconds"] for c in payload["claims"]] == [0.75, 2.0]
    assert payload["figures"] == [
        {"name": "fig_a", "status": "computed", "reason": "no entry", "compute_seconds": 1.5,
         "plot_seconds": 0.25, "seconds": 1.75, "cpu_seconds": 0.0},
        {"name": "fig_b", "status": "cached", "reason": "", "compute_seconds": 0.0,
         "plot_seconds": 0.125, "seconds": 0.125, "cpu_seconds": 0.0}]
    assert payload["elapsed_seconds"] == 0.75 + 2.0 + 1.75 + 0.125
    md = (tmp_path / "v.md").read_text()
    assert "4.6 s for 2 claim(s) and 2 figure(s)" in md
    assert [ln.split("|")[-2].strip() for ln in md.splitlines() if ln.startswith(("| c1 ", "| c2 "))] == ["0.75", "2.00"]
    assert "| fig_a | computed | 1.50 | 0.25 | no entry |" in md and "| fig_b | cached | 0.00 | 0.12 | - |" in md
    # without figures (slr verify) the report has no figure section
    write_report(results, md_path=tmp_path / "w.md", json_path=tmp_path / "w.json", quick=True, seed=0)
    assert "figures" not in json.loads((tmp_path / "w.json").read_text())
    assert "Figures of this run" not in (tmp_path / "w.md").read_text()


def test_registered_claims_cover_the_paper_items():
    ids = [c.claim_id for c in discover_claims()]
    assert len(ids) == len(set(ids))
    assert set(PAPER_ITEMS) <= set(ids)


def test_slr_verify_quick_passes_and_writes_reports(quick_verification, quick_outputs):
    # The session's one quick verification of every claim (tests/conftest.py: ``slr reproduce
    # --quick`` in a whole run, ``slr verify --quick`` when a few tests are selected).
    assert quick_verification.exit_status == 0
    out = quick_verification.stdout
    payload = json.loads((quick_outputs.out / "quick" / "verification.json").read_text())   # quick outputs apart
    md = (quick_outputs.out / "quick" / "verification.md").read_text()
    statuses = {c["claim_id"]: c["status"] for c in payload["claims"]}
    assert set(statuses) == {c.claim_id for c in discover_claims()}
    assert all(s == "pass" for s in statuses.values()), statuses
    for claim_id in statuses:
        assert claim_id in md and claim_id in out
    assert payload["mode"] == "quick" and payload["versions"]["numpy"] == np.__version__
    origin = payload["provenance"]
    assert origin["python"] == platform.python_version() and origin["seed"] == 0 and origin["cpu"]
    assert origin["git"]["commit"] == "not a checkout" or len(origin["git"]["commit"]) == 40
    # the items' times summed: the claims', and the figures' when the run was slr reproduce --quick
    assert payload["elapsed_seconds"] == pytest.approx(sum(c["seconds"] for c in payload["claims"])
                                                       + sum(f["seconds"] for f in payload.get("figures", ())))
    assert all(c["seconds"] > 0 for c in payload["claims"])
    assert all(c["cpu_seconds"] >= 0 for c in payload["claims"])


def test_slr_verify_exit_status_is_nonzero_on_failure(tmp_path, monkeypatch):
    import figures.verify as verify

    failing = claim("always-fails", "s")(lambda quick, rng: _check(2.0))
    monkeypatch.setattr(verify, "discover_claims", lambda: [failing])
    assert main(["verify", "--quick", "--out", str(tmp_path)]) == 1
    assert json.loads((tmp_path / "quick" / "verification.json").read_text())["claims"][0]["status"] == "fail"


def test_slr_verify_only_and_unknown_claim(tmp_path, capsys):
    assert main(["verify", "--quick", "--only", "theorem1-oracle-general", "--out", str(tmp_path)]) == 0
    payload = json.loads((tmp_path / "quick" / "verification.json").read_text())
    assert [c["claim_id"] for c in payload["claims"]] == ["theorem1-oracle-general"]
    with pytest.raises(SystemExit) as exc:
        main(["verify", "--only", "no-such-claim", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "unknown claim name" in capsys.readouterr().err


def test_z_test_check_passes_fails_and_demands_power():
    from types import SimpleNamespace

    from figures.verify.checks import z_test_check

    def run(shift, stderr):
        est = [SimpleNamespace(mean=1.0 + shift * stderr, stderr=stderr, n=100) for _ in range(5)]
        return z_test_check(method="m", estimates=est, exacts=[1.0] * 5, alpha=1e-3, power=0.9, detect=0.05)

    assert run(0.5, 1e-3).passed
    assert not run(10.0, 1e-3).passed                 # a 10-s.e. discrepancy is caught
    weak = run(0.0, 0.05)                              # stderr too large to see a 5% error
    assert not weak.passed and "UNDERPOWERED" in weak.measured_text


def test_z_test_power_is_judged_at_the_worst_point():
    # Unequal standard errors: four points see a 5% error easily, one does not. The check must fail
    # as underpowered (power is required at every point, i.e. at the largest stderr / exact), and a
    # large deviation at a small-stderr point must fail whichever point is the weakest.
    from types import SimpleNamespace

    from figures.verify.checks import z_test_check

    stderrs = [1e-3, 1e-3, 1e-3, 1e-3, 0.05]
    est = [SimpleNamespace(mean=1.0, stderr=s, n=100) for s in stderrs]
    weak = z_test_check(method="m", estimates=est, exacts=[1.0] * 5, alpha=1e-3, power=0.9, detect=0.05)
    assert not weak.passed and "UNDERPOWERED" in weak.measured_text
    strong = z_test_check(method="m", estimates=est[:4], exacts=[1.0] * 4, alpha=1e-3, power=0.9, detect=0.05)
    assert strong.passed
    # |z| is two-sided: an estimate 10 s.e. below the exact value fails like one above.
    low = [SimpleNamespace(mean=1.0 - 10 * 1e-3, stderr=1e-3, n=100)] + est[1:4]
    assert not z_test_check(method="m", estimates=low, exacts=[1.0] * 4, alpha=1e-3, power=0.9, detect=0.05).passed


def test_z_test_tolerance_is_the_bonferroni_critical_value():
    # z_crit = Phi^-1(1 - alpha / (2 m)): recomputed here from the family size by bisection of erfc.
    import math
    from types import SimpleNamespace

    from figures.verify.checks import z_test_check

    for m, alpha in ((1, 1e-3), (5, 1e-3), (40, 1e-2)):
        est = [SimpleNamespace(mean=1.0, stderr=1e-4, n=100)] * m
        check = z_test_check(method="m", estimates=est, exacts=[1.0] * m, alpha=alpha, power=0.9, detect=0.05)
        lo, hi = 0.0, 40.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if math.erfc(mid / math.sqrt(2)) / 2 > alpha / (2 * m) else (lo, mid)
        assert check.tolerance == pytest.approx(lo, rel=1e-12)


@pytest.mark.parametrize("claim_id, target, factor", [
    ("theorem1-quadrature", "theory.population_risk", 1 + 1e-9),
    ("theorem1-oracle-general", "theory.population_risk", 1 + 1e-12),
    ("zeta-closed-form", "theory.zeta.zeta", 1 + 1e-13),
])
def test_deterministic_claims_catch_small_errors(claim_id, target, factor, monkeypatch):
    import importlib

    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    original = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **k: original(*a, **k) * factor)
    (c,) = [c for c in discover_claims() if c.claim_id == claim_id]
    assert c(quick=True).status == "fail"


def test_claim_results_do_not_depend_on_the_number_of_workers(quick_verification):
    """Each claim seeds its own stream: one worker or two give the same measured values (the
    session's ``slr verify --quick`` ran on two workers, tests/conftest.py)."""
    from figures.verify import discover_claims, run_claims
    from numerics.pool import available_cores

    if available_cores() < 2:
        pytest.skip("one core: the session's slr verify ran its claims in one process")
    claims = [c for c in discover_claims()
              if c.claim_id in ("theorem1-montecarlo", "initial-overlap-law", "zeta-closed-form")]
    serial = run_claims(claims, quick=True, seed=0, echo=lambda *_: None, jobs=1)
    parallel = [quick_verification.results[c.claim_id] for c in claims]
    assert [r.claim_id for r in parallel] == [r.claim_id for r in serial]
    assert [r.measured for r in parallel] == [r.measured for r in serial]


def test_chi2_upper_quantile_is_scipys_and_the_closed_form_at_two_dof():
    # chi2_isf is scipy.stats.chi2.isf without its imports: the same float at every dof and rate used here;
    # at dof 2 chi^2 is exponential with mean 2, so q = -2 log(rate) (scipy's chdtri to a few eps of it).
    import scipy.stats

    from numerics.montecarlo.statistics import chi2_isf

    for rate in (1e-4, 5e-4, 1e-3, 0.01, 0.3173105078629141):
        for dof in range(1, 200):
            assert chi2_isf(rate, dof) == float(scipy.stats.chi2.isf(rate, dof)), (rate, dof)
        assert chi2_isf(rate, 2) == pytest.approx(-2 * math.log(rate), rel=8 * np.finfo(float).eps)
    for bad in (dict(rate=0.0, dof=3), dict(rate=1.0, dof=3), dict(rate=0.01, dof=0)):
        with pytest.raises(ValueError, match="rate|dof"):
            chi2_isf(**bad)
