"""The ``slr`` command line: ``--help`` and ``slr risk`` (figures.cli)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from figures.cli import main
from theory import Overlaps, Problem, population_risk
from theory.risk_quad import population_risk_quad

RISK_ARGS = ["risk", "--d", "400", "--lam", "0.5", "--eps", "0.1", "--kappa", "0.3", "--nu", "0.2",
             "--theta", "0.1", "--eta", "-0.2", "--rho", "0.15"]
PROBLEM = Problem(d=400, L=10, eps=0.1, lam=0.5)
OVERLAPS = Overlaps(kappa=0.3, nu=0.2, theta=0.1, eta=-0.2, rho=0.15)


def _number(label, text):
    match = re.search(rf"^{label}\s*:\s*(\S+)", text, flags=re.MULTILINE)
    assert match, text
    return float(match.group(1))


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "risk" in out and "usage: slr" in out


def test_risk_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["risk", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--d", "--L", "--gamma", "--eps", "--lam", "--kappa", "--nu", "--quad", "--mc"):
        assert flag in out


def test_risk_prints_the_closed_form_and_quadrature(capsys):
    """Printed with 15 significant digits: equal to the library value to that precision."""
    assert main(RISK_ARGS + ["--quad"]) == 0
    out = capsys.readouterr().out
    closed = float(population_risk(PROBLEM, OVERLAPS))
    assert _number("closed form", out) == float(f"{closed:.15g}")
    q = population_risk_quad(PROBLEM, OVERLAPS)
    assert _number("quadrature", out) == float(f"{q.value:.15g}")
    assert "abserr" in out


def test_risk_monte_carlo(capsys):
    assert main(RISK_ARGS + ["--mc", "2000", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "Monte Carlo" in out and "n 2000" in out
    mean = _number("Monte Carlo", out)
    assert main(RISK_ARGS + ["--mc", "2000", "--seed", "3"]) == 0   # seeded: reproducible
    assert _number("Monte Carlo", capsys.readouterr().out) == mean


@pytest.mark.parametrize("flag, value, field", [
    ("--lam", "-1", "lam"), ("--gamma", "0", "gamma"), ("--d", "0", "d"), ("--kappa", "1.5", "kappa"),
])
def test_bad_value_exits_with_status_2_naming_the_field(flag, value, field, capsys):
    args = list(RISK_ARGS)
    i = args.index(flag) if flag in args else None
    if i is None:
        args += [flag, value]
    else:
        args[i + 1] = value
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"{field}=" in err and "slr risk: error" in err


def test_infeasible_overlaps_exit_with_status_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["risk", "--d", "10", "--lam", "0.5", "--kappa", "1", "--nu", "1", "--rho", "0.5"])
    assert info.value.code == 2
    assert "not feasible" in capsys.readouterr().err


def test_unparsable_value_exits_with_status_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["risk", "--d", "ten", "--lam", "0.5", "--kappa", "0.1", "--nu", "0.1"])
    assert info.value.code == 2
    assert "--d" in capsys.readouterr().err


def test_installed_slr_script_runs():
    """The ``slr`` console script of the installed package (pyproject [project.scripts])."""
    script = shutil.which("slr", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the slr script is not installed next to this interpreter (pip install -e .)")
    out = subprocess.run([script] + RISK_ARGS, capture_output=True, text=True, check=True,
                         timeout=60).stdout
    assert _number("closed form", out) == float(f"{float(population_risk(PROBLEM, OVERLAPS)):.15g}")
