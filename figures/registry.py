"""The figure recipes: every module in ``figures/recipes/`` whose name does not start with '_'.

A recipe module defines

    NAME: str                    the figure's file name (``<out>/figures/<NAME>.png``/``.pdf``)
    TITLE: str                   the figure's title: the paper's experiment (or what it shows)
    CAPTION: str                 (optional) a caption line for a paper or the gallery, written
                                 into the files' metadata (default: the title)
    SEED: int                    root seed of ``compute``
    DEPENDS: tuple[str, ...]     (optional) modules whose source also keys the cache (the
                                 module's own source keys it too, except its ``plot`` function)
    params(quick: bool) -> dict  JSON-serialisable sizes and settings (``quick``: a smoke run)
    compute(params, rng, progress) -> dict[str, numpy.ndarray]
                                 the numerics, seeded by ``rng`` (a numpy Generator); ``progress``
                                 is a tqdm-like factory: ``with progress(total=n, desc=...) as bar``
    plot(data, params) -> matplotlib.figure.Figure
                                 drawing only, no numerics
    COST: float                  (optional) expected seconds of a full compute; only orders the work
                                 of ``slr reproduce`` (longest first), never changes a result
    skip_reason(params) -> str | None
                                 (optional) why ``compute`` cannot run on this machine (e.g. an
                                 optional dependency is missing); consulted only when the data
                                 is not cached, and reported as 'skipped', not as a failure

Adding a figure is adding such a module; nothing else needs to change.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import pkgutil
from typing import Callable

__all__ = ["Recipe", "discover_recipes", "select"]

RECIPE_PACKAGE = "figures.recipes"


def _source_digest(module_names) -> str:
    """SHA-256 over the source files of the named modules (found without importing them)."""
    digest = hashlib.sha256()
    for name in module_names:
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        digest.update(name.encode() + b"\0")
        if spec is None or spec.origin is None or not spec.has_location:
            digest.update(b"<missing>")
        else:
            with open(spec.origin, "rb") as fh:
                digest.update(fh.read())
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True, kw_only=True)
class Recipe:
    """One figure: its name, seed, and the params / compute / plot functions (see module docstring)."""

    name: str
    title: str
    seed: int
    params: Callable
    compute: Callable
    plot: Callable
    source_hash: str
    skip_reason: Callable | None = None
    cost: float = 0.0
    caption: str = ""

    @classmethod
    def from_module(cls, module) -> "Recipe":
        missing = [a for a in ("NAME", "TITLE", "SEED", "params", "compute", "plot") if not hasattr(module, a)]
        if missing:
            raise ValueError(f"recipe module {module.__name__!r} lacks {', '.join(missing)}")
        # Restyling a figure must not recompute its data: the plot function is left out of the key.
        text = inspect.getsource(module).replace(inspect.getsource(module.plot), "")
        source = hashlib.sha256(text.encode()).hexdigest()
        depends = _source_digest(getattr(module, "DEPENDS", ()))
        return cls(name=module.NAME, title=module.TITLE, seed=int(module.SEED), params=module.params,
                   compute=module.compute, plot=module.plot, skip_reason=getattr(module, "skip_reason", None),
                   cost=float(getattr(module, "COST", 0.0)), caption=str(getattr(module, "CAPTION", "")),
                   source_hash=hashlib.sha256(f"{source}:{depends}".encode()).hexdigest())


def discover_recipes() -> list[Recipe]:
    """All recipes of ``figures/recipes/``, sorted by name."""
    package = importlib.import_module(RECIPE_PACKAGE)
    recipes = [Recipe.from_module(importlib.import_module(f"{RECIPE_PACKAGE}.{info.name}"))
               for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_")]
    names = [r.name for r in recipes]
    if len(set(names)) != len(names):
        raise ValueError(f"recipe names must be unique, got {names}")
    return sorted(recipes, key=lambda r: r.name)


def select(items, only, *, kind: str = "recipe"):
    """The items whose ``name`` is in ``only`` (names, possibly comma-separated); all if empty."""
    if not only:
        return list(items)
    wanted = [n.strip() for entry in only for n in entry.split(",") if n.strip()]
    known = {item.name for item in items}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(f"--only {','.join(unknown)} is not allowed: unknown {kind} name; "
                         f"choose from {', '.join(sorted(known))}")
    return [item for item in items if item.name in wanted]
