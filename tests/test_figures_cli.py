"""The ``slr`` command line: figures, verify, reproduce (exit statuses, flags, outputs), and risk."""

import json
import subprocess
import sys

import pytest

from figures.cli import main
from figures.registry import Recipe
from figures.verify import Check, claim


pytestmark = pytest.mark.usefixtures("agg_backend")


def _recipe(name, calls, fail=False):
    def compute(p, rng, progress):
        calls.append(name)
        if fail:
            raise FloatingPointError("non-finite iterate")
        return {"y": rng.standard_normal(p["n"])}

    def plot(data, p):
        from matplotlib.figure import Figure

        fig = Figure(figsize=(2, 2))
        ax = fig.subplots()
        ax.plot(data["y"])
        ax.set_axis_off()   # no text, so no font to subset in the PDF (~0.2-0.5 s CPU a save)
        return fig

    return Recipe(name=name, title=name, seed=1, params=lambda quick: {"n": 3 if quick else 30},
                  compute=compute, plot=plot, source_hash="s")


@pytest.fixture
def fake_recipes(monkeypatch):
    import figures.registry as registry

    calls = []
    recipes = [_recipe("alpha", calls), _recipe("beta", calls)]
    monkeypatch.setattr(registry, "discover_recipes", lambda: recipes)
    return calls, recipes


def test_figures_then_cached(tmp_path, fake_recipes, capsys):
    calls, _ = fake_recipes
    argv = ["figures", "--quick", "--out", str(tmp_path), "--no-progress", "--jobs", "1"]  # counts calls in-process
    assert main(argv) == 0
    assert calls == ["alpha", "beta"]
    assert "computed" in capsys.readouterr().out
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert calls == ["alpha", "beta"] and out.count("cached") >= 2
    for name in ("alpha", "beta"):
        assert (tmp_path / "quick" / "figures" / f"{name}.png").is_file()   # quick outputs apart
        assert (tmp_path / "quick" / "figures" / f"{name}.pdf").is_file()
        assert (tmp_path / "cache" / f"{name}-quick.npz").is_file()
    assert not (tmp_path / "figures").exists()


def test_only_force_and_cache_flags(tmp_path, fake_recipes):
    calls, _ = fake_recipes
    cache = tmp_path / "elsewhere"
    assert main(["figures", "--only", "beta", "--cache", str(cache), "--out", str(tmp_path), "--jobs", "1"]) == 0
    assert calls == ["beta"] and (cache / "beta.npz").is_file() and not (tmp_path / "cache").exists()
    assert main(["figures", "--only", "alpha,beta", "--force", "--cache", str(cache), "--out", str(tmp_path),
                 "--jobs", "1"]) == 0
    assert calls == ["beta", "alpha", "beta"]


def test_unknown_figure_is_a_usage_error(tmp_path, fake_recipes, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["figures", "--only", "gamma", "--out", str(tmp_path)])
    assert exc.value.code == 2 and "choose from alpha, beta" in capsys.readouterr().err


def test_failed_figure_gives_nonzero_status(tmp_path, monkeypatch):
    import figures.registry as registry

    calls = []
    monkeypatch.setattr(registry, "discover_recipes", lambda: [_recipe("bad", calls, fail=True),
                                                               _recipe("good", calls)])
    assert main(["figures", "--quick", "--out", str(tmp_path), "--jobs", "1"]) == 1  # in-process fakes
    assert (tmp_path / "quick" / "figures" / "good.png").is_file()


@pytest.mark.parametrize("verdict, status", [(0.5, 0), (2.0, 1)])
def test_reproduce_runs_figures_then_verify(tmp_path, fake_recipes, monkeypatch, verdict, status):
    import figures.verify as verify

    calls, _ = fake_recipes
    fake = claim("fake", "a claim")(lambda quick, rng: Check(method="m", measured=verdict, measured_text="",
                                                             tolerance=1.0, derivation="d"))
    monkeypatch.setattr(verify, "discover_claims", lambda: [fake])
    assert main(["reproduce", "--quick", "--out", str(tmp_path), "--jobs", "1"]) == status  # in-process fakes
    assert calls == ["alpha", "beta"]
    quick = tmp_path / "quick"
    assert (quick / "verification.md").is_file() and (quick / "verification.json").is_file()
    # each figure of the run, with its elapsed time, in the report
    figures = json.loads((quick / "verification.json").read_text())["figures"]
    assert [(f["name"], f["status"]) for f in figures] == [("alpha", "computed"), ("beta", "computed")]
    assert all(f["compute_seconds"] > 0 and f["plot_seconds"] > 0 for f in figures)
    assert main(["reproduce", "--quick", "--out", str(tmp_path), "--jobs", "1"]) == status
    again = json.loads((quick / "verification.json").read_text())["figures"]
    assert [(f["status"], f["compute_seconds"]) for f in again] == [("cached", 0.0), ("cached", 0.0)]


def test_python_dash_m_figures_is_slr_figures():
    out = subprocess.run([sys.executable, "-m", "figures", "--help"], capture_output=True, text=True, check=True)
    assert "usage: slr figures" in out.stdout and "--quick" in out.stdout


def test_reproduce_runs_figures_and_claims_in_one_pool(quick_reproduction, quick_outputs):
    """The session's ``slr reproduce --quick --jobs 2`` of every recipe and claim (tests/conftest.py):
    the recipes and the claims share one queue of worker processes; the outputs are those of the
    two commands (every figure's files, and the verification report with each claim and figure)."""
    from figures.registry import discover_recipes
    from figures.verify import discover_claims

    status, out, outcomes, results = quick_reproduction
    assert status == 0
    assert "figure risk_routes" in out and "claim zeta-closed-form" in out
    folder = quick_outputs.out / "quick"
    for recipe in discover_recipes():
        if outcomes[recipe.name].status != "skipped":
            assert (folder / "figures" / f"{recipe.name}.png").is_file(), recipe.name
    report = json.loads((folder / "verification.json").read_text())
    assert sorted(c["claim_id"] for c in report["claims"]) == sorted(c.claim_id for c in discover_claims())
    assert sorted(results) == sorted(c["claim_id"] for c in report["claims"])
    assert all(c["status"] == "pass" for c in report["claims"])
    assert sorted(f["name"] for f in report["figures"]) == sorted(outcomes)


def test_reproduce_selects_figures_and_claims(tmp_path, capsys):
    """``--only`` picks the recipes and ``--only-claim`` the claims of one reproduce (dry run: the plan)."""
    argv = ["reproduce", "-n", "--quick", "--out", str(tmp_path), "--only", "risk_routes,phase_portrait",
            "--only-claim", "theorem1-quadrature,zeta-closed-form"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "slr figures: 2 recipe(s), quick mode" in out and "slr verify: 2 claim(s), quick mode" in out
    assert "would compute 2 figure(s), redraw 0 from the cache, run 2 claim(s)" in out
    lines = {tuple(line.split()[:2]) for line in out.splitlines()}
    for item in (("figure", "risk_routes"), ("figure", "phase_portrait"), ("claim", "theorem1-quadrature"),
                 ("claim", "zeta-closed-form")):
        assert item in lines
    assert "risk_vs_d" not in out and "theorem1-montecarlo" not in out and not (tmp_path / "quick").exists()
