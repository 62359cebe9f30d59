"""Where a result came from: interpreter, machine, source revision, command line, library versions.

Recorded in ``verification.json`` and in the metadata of every figure, so that two machines
that disagree on a number can be told apart (a different CPU or BLAS, an uncommitted edit, a
different command line). Every field is best-effort: what cannot be found is recorded as such
(e.g. commit "not a checkout"), never guessed.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .versions import package_versions

__all__ = ["DISTRIBUTION", "project_version", "cpu_model", "cpu_seconds", "git_revision", "provenance"]

DISTRIBUTION = "single-location-regression"


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its children that ended (e.g. the worker
    processes of a sweep), in seconds: an item's difference of two readings is its CPU cost."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def project_version() -> str:
    """The installed version of this package ('unknown' when run from files not installed)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo; elsewhere platform.processor())."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision(root: Path | None = None) -> dict:
    """{'commit': hash or 'not a checkout', 'dirty': bool or None} of the source checkout, a new dict
    each call; asked of git once per process and checkout (two ``git`` processes, ~0.1 s: every figure's
    metadata records it): a process computes with the code it imported first."""
    from .paths import default_root

    return dict(_git_revision(Path(root).resolve() if root is not None else default_root()))


@functools.lru_cache(maxsize=8)
def _git_revision(root: Path) -> tuple:
    return tuple(_ask_git(root).items())


def _ask_git(root: Path) -> dict:
    if not (root / ".git").exists():
        return {"commit": "not a checkout", "dirty": None}
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": "not a checkout (git unavailable)", "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def _blas() -> str:
    """The BLAS numpy is linked to (numpy >= 1.26 reports it; 'unknown' before)."""
    try:
        import numpy as np

        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # older numpy: show_config has no 'mode'; the field is informative only
        return "unknown"


def provenance(*, seed: int | None = None, argv=None) -> dict:
    """Everything above as one JSON-serialisable dict, plus the command line and the root seed."""
    argv = sys.argv if argv is None else argv
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "blas": _blas(),
        "git": git_revision(),
        "command": [Path(argv[0]).name if argv else "", *argv[1:]],
        "seed": seed,
        "versions": package_versions(),
    }
