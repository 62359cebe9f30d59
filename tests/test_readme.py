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

