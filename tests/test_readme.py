"""README.md's two commands exist, and its test command is the one .ci/run runs."""

import re
import shlex
from pathlib import Path

import pytest

from figures.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands():
    """The bash code blocks of README.md's section 'The two commands', in order."""
    text = (ROOT / "README.md").read_text()
    section = re.search(r"^## The two commands\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no section '## The two commands'"
    blocks = re.findall(r"```bash\n(.*?)```", section.group(1), re.S)
    assert len(blocks) == 2, blocks
    return [b.strip() for b in blocks]


def _steps(command):
    return [shlex.split(step) for step in command.split("&&")]


def _ci_commands():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def test_main_job_command_is_slr_reproduce_and_exists():
    install, run = _steps(_readme_commands()[0])
    assert install[:3] == ["pip", "install", "-e"] and install[3] == "."
    assert run == ["slr", "reproduce"]
    scripts = re.search(r"^\[project\.scripts\]\n(.*?)(?=^\[)", (ROOT / "pyproject.toml").read_text(), re.S | re.M)
    assert scripts and re.search(r'^slr\s*=\s*"figures\.cli:main"\s*$', scripts.group(1), re.M)
    args = build_parser().parse_args(run[1:])
    assert args.command == "reproduce" and not args.quick   # the main job is the full run


def test_test_command_is_the_one_ci_runs():
    install, test = _steps(_readme_commands()[1])
    assert install[:3] == ["pip", "install", "-e"] and "[test]" in install[3]
    ci = _ci_commands()
    assert " ".join(test) in ci, (test, ci)
    assert any(shlex.split(line)[:3] == install[:3] and "[test]" in line for line in ci)
    # the CI runs the test command last, after installing the project from its own files
    assert ci[-1] == " ".join(test)


@pytest.mark.parametrize("sub", ["risk", "figures", "verify", "reproduce"])
def test_every_subcommand_has_help(sub, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([sub, "--help"])
    assert exc.value.code == 0 and "usage: slr " + sub in capsys.readouterr().out



def test_quick_start_runs_and_its_three_routes_agree(capsys):
    """The README's Python quick start runs as printed; its three numbers agree (closed form =
    quadrature within abserr; Monte Carlo within 4.4 standard errors, a false-failure rate 1e-5)."""
    text = (ROOT / "README.md").read_text()
    section = re.search(r"^## Quick start.*?\n(.*?)(?=^## )", text, re.S | re.M)
    code = re.search(r"```python\n(.*?)```", section.group(1), re.S).group(1)
    namespace = {}
    exec(compile(code, "README.md quick start", "exec"), namespace)
    closed = namespace["population_risk"](namespace["problem"], namespace["overlaps"])
    quad = namespace["population_risk_quad"](namespace["problem"], namespace["overlaps"])
    assert abs(closed - quad.value) <= quad.abserr
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and float(lines[0]) == closed
    mc = re.search(r"mean=([^,]+), stderr=([^,]+)", lines[2])
    assert abs(float(mc.group(1)) - closed) <= 4.4 * float(mc.group(2))
