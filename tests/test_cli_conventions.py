"""The conventions of the ``slr`` command: --version, list, the dry run, quick outputs apart from
full ones, clean, and risk --json/--sweep. --version goes through the installed console script in a
process of their own; the other calls through its entry point ``figures.cli.main`` in this process,
the figure run (whose provenance records the command line) with the console script's ``sys.argv``,
as the script calls it."""

import contextlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from figures.cli import main
from theory import Overlaps, Problem, population_risk

SCRIPT = shutil.which("slr", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(SCRIPT is None, reason="the slr script is not installed next to this "
                                                       "interpreter (pip install -e .)")
# The cheapest recipe in quick mode (a few seconds); the others are listed but not run here.
FIGURE = "phase_portrait"


def slr_script(*args, check=True):
    """``slr ARGS`` through the installed console script, in its own process."""
    env = dict(os.environ, MPLBACKEND="Agg")
    run = subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=300, env=env)
    return _checked(run, args, check)


def slr_as_script(monkeypatch, *args, check=True):
    """``slr ARGS`` as the installed console script runs it, without starting an interpreter and
    importing the package again: its entry point ``figures.cli.main()`` reading ``sys.argv`` =
    [the script's path, ARGS...] (what the provenance records as the command line)."""
    monkeypatch.setattr(sys, "argv", [SCRIPT, *map(str, args)])
    return slr(check=check)


def slr(*args, check=True):
    """``slr ARGS`` in this process, through the console script's entry point ``figures.cli.main``
    (no interpreter start and imports per call); the same exit status and printed output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in args] if args else None)
        except SystemExit as exc:  # argparse's usage errors and --help
            status = exc.code
    return _checked(subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue()), args, check)


def _checked(run, args, check):
    if check and run.returncode != 0:
        raise AssertionError(f"slr {' '.join(map(str, args))} exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
    return run


def _line(text, kind, name):
    lines = [ln for ln in text.splitlines() if ln.split()[:2] == [kind, name]]
    assert len(lines) == 1, text
    return lines[0]


def test_version_is_the_installed_distribution_version():
    out = slr_script("--version").stdout.strip()
    assert out == f"slr {metadata.version('single-location-regression')}"


def test_list_dry_run_quick_and_clean(tmp_path, monkeypatch, agg_backend):
    from figures.registry import discover_recipes
    from figures.verify import discover_claims

    # list: one line per figure and claim, nothing cached yet
    listing = slr("list", "--out", tmp_path).stdout
    for recipe in discover_recipes():
        assert recipe.name in listing
    for c in discover_claims():
        assert _line(listing, "claim", c.claim_id).split()[2] == "run"
    assert _line(listing, "figure", FIGURE).split()[2] == "compute"

    # a full output that a quick run must leave untouched
    full_png = tmp_path / "figures" / f"{FIGURE}.png"
    full_png.parent.mkdir(parents=True)
    full_png.write_bytes(b"full-quality figure")
    mtime = full_png.stat().st_mtime_ns

    # dry run: says what and why, writes nothing
    dry = slr("figures", "-n", "--quick", "--only", FIGURE, "--out", tmp_path).stdout
    assert "no cache entry" in _line(dry, "figure", FIGURE) and "would compute 1 figure" in dry
    assert not (tmp_path / "cache").exists() and not (tmp_path / "quick").exists()

    slr_as_script(monkeypatch, "figures", "--quick", "--only", FIGURE, "--out", tmp_path, "--jobs", "1", "--no-progress")
    quick_png = tmp_path / "quick" / "figures" / f"{FIGURE}.png"
    assert quick_png.is_file() and (tmp_path / "quick" / "figures" / f"{FIGURE}.pdf").is_file()
    assert full_png.read_bytes() == b"full-quality figure" and full_png.stat().st_mtime_ns == mtime
    from PIL import Image

    meta = Image.open(quick_png).text     # title, caption, parameters and provenance in the file
    recipe = next(r for r in discover_recipes() if r.name == FIGURE)
    assert "quick run" in meta["Title"] and meta["Description"] == (recipe.caption or recipe.title)
    assert json.loads(meta["Parameters"]) == recipe.params(True)
    origin = json.loads(meta["Provenance"])
    assert origin["python"] == platform.python_version() and origin["seed"] == recipe.seed
    assert origin["command"][:2] == ["slr", "figures"] and json.loads(meta["Run"])["mode"] == "quick"

    # now cached in quick mode, still to compute in full mode; --force says so
    assert _line(slr("figures", "--dry-run", "--quick", "--out", tmp_path).stdout, "figure", FIGURE).split()[2] == "cached"
    assert "forced" in _line(slr("reproduce", "-n", "--quick", "--force", "--out", tmp_path).stdout, "figure", FIGURE)
    assert _line(slr("list", "--quick", "--out", tmp_path).stdout, "figure", FIGURE).split()[2] == "cached"
    assert _line(slr("list", "--out", tmp_path).stdout, "figure", FIGURE).split()[2] == "compute"

    # clean: -n deletes nothing; then everything the toolkit wrote goes, a file of the user stays
    (tmp_path / "notes.txt").write_text("mine")
    before = sorted(p for p in tmp_path.rglob("*"))
    assert "would remove" in slr("clean", "-n", "--out", tmp_path).stdout
    assert sorted(p for p in tmp_path.rglob("*")) == before
    slr("clean", "--out", tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == [Path("notes.txt")]


def test_risk_json_and_sweep():
    args = ("risk", "--d", 400, "--lam", 0.5, "--kappa", 0.3, "--nu", 0.2, "--rho", 0.1)
    payload = json.loads(slr(*args, "--sweep", "lam=0.1:1:4", "--json", "--quad").stdout)
    assert payload["sweep"] == "lam" and [r["point"]["lam"] for r in payload["rows"]] == list(np.linspace(0.1, 1, 4))
    for row in payload["rows"]:
        expected = float(population_risk(Problem(d=400, lam=row["point"]["lam"]),
                                         Overlaps(kappa=0.3, nu=0.2, theta=0.0, eta=0.0, rho=0.1)))
        assert row["closed_form"] == expected    # JSON round-trips float64 exactly
        # quadrature agrees within its own error estimate plus roundoff of a sum of O(1) terms
        assert abs(row["quadrature"]["value"] - expected) <= row["quadrature"]["abserr"] + 1e-12
    table = slr(*args, "--sweep", "d=100,200,400").stdout.splitlines()
    assert table[0].split()[:3] == ["d", "closed", "form"] and [ln.split()[0] for ln in table[2:]] == ["100", "200", "400"]
    bad = slr(*args, "--sweep", "lam=1:2", check=False)
    assert bad.returncode == 2 and "--sweep 'lam=1:2' is not allowed" in bad.stderr


def test_every_option_of_every_subcommand_has_help():
    from figures.cli import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.choices and isinstance(a.choices, dict)).choices
    for name, sub in subparsers.items():
        for action in sub._actions:
            assert action.help, f"slr {name} {action.option_strings or action.dest} has no help"
