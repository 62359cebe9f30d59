"""The figure recipes: every module in ``figures/recipes/`` whose name does not start with '_'.

A recipe module defines

    NAME: str                    the figure's file name (``<out>/figures/<NAME>.png``/``.pdf``)
    TITLE: str                   the figure's title: the paper's experiment (or what it shows)
    CAPTION: str                 (optional) a caption line for a paper or the gallery, written
                                 into the files' metadata (default: the title)
    SEED: int                    root seed of ``compute``
    params(quick: bool) -> dict  JSON-serialisable sizes and settings (``quick``: a smoke run)
    compute(params, rng, progress) -> dict[str, numpy.ndarray]
                                 the numerics, seeded by ``rng`` (a numpy Generator); ``progress``
                                 is a tqdm-like factory: ``with progress(total=n, desc=...) as bar``
    plot(data, params) -> matplotlib.figure.Figure
                                 drawing only, no numerics
    COST: float                  (optional) measured CPU seconds of a full compute and plot; only
                                 orders the work of ``slr reproduce`` (longest first, after the costs
                                 its output's last report measured), never changes a result
    skip_reason(params) -> str | None
                                 (optional) why ``compute`` cannot run on this machine (e.g. an
                                 optional dependency is missing); consulted only when the data
                                 is not cached, and reported as 'skipped', not as a failure

The code part of the cache key is read from the module's imports (``figures.codehash``): the
module itself without its ``plot`` function, and every project module it imports, transitively.
A hand-written list of dependencies (``DEPENDS``) is refused. Adding a figure is adding such a
module; nothing else needs to change.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Callable

from .codehash import is_project_module, module_file, code_closure, project_root

__all__ = ["Recipe", "code_keys", "discover_recipes", "find_recipe", "public_modules", "select", "unique_names",
           "use_code_keys"]

RECIPE_PACKAGE = "figures.recipes"


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
    code_modules: tuple = ()

    @classmethod
    def from_module(cls, module) -> "Recipe":
        missing = [a for a in ("NAME", "TITLE", "SEED", "params", "compute", "plot") if not hasattr(module, a)]
        if missing:
            raise ValueError(f"recipe module {module.__name__!r} lacks {', '.join(missing)}")
        if hasattr(module, "DEPENDS"):
            raise ValueError(f"recipe module {module.__name__!r} defines DEPENDS, which is not allowed: "
                             "the modules that key its cache are read from its imports")
        source_hash, code_modules = _KEYED.get(module.NAME) or _code_key(module)
        return cls(name=module.NAME, title=module.TITLE, seed=int(module.SEED), params=module.params,
                   compute=module.compute, plot=module.plot, skip_reason=getattr(module, "skip_reason", None),
                   cost=float(getattr(module, "COST", 0.0)), caption=str(getattr(module, "CAPTION", "")),
                   source_hash=source_hash, code_modules=code_modules)


# Recipe name -> (source_hash, code_modules) as the process that planned the run computed them
# (``code_keys``, ``use_code_keys``): a worker of ``slr reproduce`` keys its recipes' cache entries
# with them instead of reading and parsing the project's code once more (~0.3 s CPU a process).
_KEYED: dict = {}


def code_keys(recipes) -> tuple:
    """((recipe name, (source_hash, code_modules)), ...) of ``recipes``: picklable, for ``use_code_keys``."""
    return tuple((r.name, (r.source_hash, r.code_modules)) for r in recipes)


def use_code_keys(keys) -> None:
    """Make this process's ``Recipe.from_module`` take the code keys ``keys`` (of ``code_keys``)
    for those recipes instead of computing them."""
    _KEYED.update(dict(keys))


def _code_key(module) -> tuple:
    closure = _code_closure(module)
    return closure.digest(), tuple(closure.modules())


def public_modules(package_name: str) -> list:
    """The modules of a package whose names do not start with '_', imported: the one discovery
    of recipes (``figures.recipes``) and claims (``figures.verify.claims``)."""
    package = importlib.import_module(package_name)
    return [importlib.import_module(f"{package_name}.{info.name}")
            for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_")]


def unique_names(items, kind: str) -> list:
    """``items``, after checking that their names are unique."""
    names = [item.name for item in items]
    if len(set(names)) != len(names):
        raise ValueError(f"{kind} names must be unique, got {names}")
    return items


def _code_closure(module):
    """The code a recipe module runs, its ``plot`` function left out (restyling a figure does not
    recompute its data)."""
    name, origin = module.__name__, getattr(module, "__file__", None)
    found = module_file(name, project_root()) if is_project_module(name) else None
    if found is not None and origin is not None and Path(origin).resolve() == found.resolve():
        return code_closure(name, skip=("plot",))
    return code_closure(name, skip=("plot",), text=inspect.getsource(module))  # loaded from elsewhere


def discover_recipes() -> list[Recipe]:
    """All recipes of ``figures/recipes/``, sorted by name."""
    recipes = [Recipe.from_module(module) for module in public_modules(RECIPE_PACKAGE)]
    return sorted(unique_names(recipes, "recipe"), key=lambda r: r.name)


def find_recipe(name: str) -> Recipe:
    """The recipe named ``name``: the module ``figures/recipes/<name>.py`` when its NAME is
    ``name`` (no need to import every recipe), else found by discovery; ValueError if none."""
    if not name.startswith("_") and module_file(f"{RECIPE_PACKAGE}.{name}", project_root()) is not None:
        module = importlib.import_module(f"{RECIPE_PACKAGE}.{name}")
        if getattr(module, "NAME", None) == name:
            return Recipe.from_module(module)
    found = [r for r in discover_recipes() if r.name == name]
    if not found:
        raise ValueError(f"recipe name={name!r} is not allowed: no such recipe in {RECIPE_PACKAGE}")
    return found[0]


def select(items, only, *, kind: str = "recipe", flag: str = "--only"):
    """The items whose ``name`` is in ``only`` (names, possibly comma-separated); all if empty."""
    if not only:
        return list(items)
    wanted = [n.strip() for entry in only for n in entry.split(",") if n.strip()]
    if not wanted:
        raise ValueError(f"{flag} {','.join(only)!r} is not allowed: it names no {kind}; give names "
                         "separated by commas, or leave the flag out to select all")
    known = {item.name for item in items}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(f"{flag} {','.join(unknown)} is not allowed: unknown {kind} name; "
                         f"choose from {', '.join(sorted(known))}")
    return [item for item in items if item.name in wanted]
