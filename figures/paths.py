"""Where generated files go: the one place that decides output, figure and cache paths.

Default output folder: ``<root>/out``, where ``<root>`` is the checkout that contains this
package (the folder with ``pyproject.toml`` two levels above this file) when the package is
used from a source checkout, and the current working directory otherwise (an installed,
non-editable package has no checkout). Inside it:

    <out>/figures/<name>.png, <name>.pdf    one pair per figure recipe
    <out>/cache/<name>[-quick].npz, .json   computed data and its sidecar (see figures.cache)
    <out>/verification.md, .json            the verification report
    <out>/quick/figures/, verification.*    the same for ``--quick`` runs (smoke-run sizes), kept
                                            apart so that a quick run never replaces a full output

``--out DIR`` replaces ``<out>``; ``--cache DIR`` replaces the cache folder alone. ``out/`` is
git-ignored. Every path is absolute: nothing depends on the working directory after the
defaults are resolved.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

__all__ = ["OutputPaths", "QUICK_FOLDER", "default_root"]

QUICK_FOLDER = "quick"


def default_root() -> Path:
    """The source checkout containing this package, else the current working directory."""
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file():
        return checkout
    return Path.cwd().resolve()


@dataclasses.dataclass(frozen=True, kw_only=True)
class OutputPaths:
    """Absolute output locations; build with ``OutputPaths.resolve(out=None, cache=None)``."""

    out: Path
    cache: Path

    @classmethod
    def resolve(cls, out=None, cache=None, *, quick: bool = False) -> "OutputPaths":
        """``quick``: figures and report under ``<out>/quick``; the cache stays ``<out>/cache``
        (its quick entries have names of their own, see ``figures.runner``)."""
        base = Path(out).expanduser().resolve() if out is not None else default_root() / "out"
        cache_dir = Path(cache).expanduser().resolve() if cache is not None else base / "cache"
        return cls(out=base / QUICK_FOLDER if quick else base, cache=cache_dir)

    @property
    def figures(self) -> Path:
        return self.out / "figures"

    def figure_files(self, name: str) -> tuple[Path, Path]:
        """The PNG and PDF written for recipe ``name``."""
        return self.figures / f"{name}.png", self.figures / f"{name}.pdf"

    @property
    def verification_md(self) -> Path:
        return self.out / "verification.md"

    @property
    def verification_json(self) -> Path:
        return self.out / "verification.json"
