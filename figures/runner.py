"""Run figure recipes: load or compute their data (cached), plot, save PNG and PDF, summarise.

For each recipe: parameters from ``recipe.params(quick)``; cache key from the recipe's source
hash, parameters and seed (``figures.cache``); on a hit the data is loaded, otherwise (missing,
stale, corrupt, or ``force``) ``compute`` runs with ``rng = default_rng(SeedSequence(seed))``
and a tqdm factory for progress, and the result is stored. Then ``plot`` draws inside the
project style (each mathtext string parsed once per process, ``figures.shared_mathtext``; the cycle
collector run less often, ``figures.saving.fewer_collections``) and the
figure is saved as ``<out>/figures/<name>.png`` and ``.pdf``. A failing
recipe is reported and the others still run; a recipe whose optional ``skip_reason`` says it
cannot compute here (and has no cached data) is reported as skipped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from numerics.pool import Terminated

from .cache import DataCache, cache_key
from .paths import OutputPaths
from .metadata import figure_metadata
from .saving import fewer_collections, save_figure
from .shared_mathtext import shared_mathtext
from .style import figure_style, mark_quick
from .table import text_table

__all__ = ["FigureData", "RecipeOutcome", "entry_lock", "figure_data", "run_recipes", "outcome_table", "progress_factory"]


@dataclasses.dataclass(frozen=True)
class RecipeOutcome:
    """What happened to one recipe: 'computed', 'cached', 'skipped' or 'failed', with timings."""

    name: str
    status: str
    reason: str
    compute_seconds: float
    plot_seconds: float
    files: tuple = ()
    cpu_seconds: float = 0.0   # compute and plot, this process and its ended children


def progress_factory(enabled: bool | None = None, stream=None):
    """A tqdm factory, disabled when ``enabled`` is False or (if None) ``stream`` is not a TTY."""
    from tqdm.auto import tqdm

    stream = sys.stderr if stream is None else stream
    if enabled is None:
        enabled = stream.isatty()
    return functools.partial(tqdm, disable=not enabled, leave=False, file=stream, dynamic_ncols=True)


class _Skipped(Exception):
    """The recipe's data is not cached and its ``skip_reason`` says it cannot be computed here."""


def _stem(name: str, quick: bool) -> str:
    # Quick and full data live side by side, so a smoke run does not evict the real one.
    return f"{name}-quick" if quick else name


def cache_entry(recipe, params, quick: bool) -> tuple[str, str]:
    """(stem, key) of the cache entry holding ``recipe``'s data for ``params`` (also used by the
    dry run and ``slr list`` to report the cache state without computing)."""
    return _stem(recipe.name, quick), cache_key(recipe.name, recipe.source_hash, params, recipe.seed)


@contextlib.contextmanager
def entry_lock(cache: DataCache, stem: str):
    """Hold an exclusive lock on the cache entry ``stem`` (``flock`` on ``<cache>/.<stem>.lock``):
    two processes that need the same data (a figure, and a claim that reads it) compute it once;
    the second waits and then finds the first's entry. No lock where ``fcntl`` does not exist."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the entry may be computed twice, never corrupted (atomic writes)
        yield
        return
    Path(cache.directory).mkdir(parents=True, exist_ok=True)
    with open(Path(cache.directory) / f".{stem}.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _data(recipe, params, *, quick, force, cache: DataCache, progress):
    stem, key = cache_entry(recipe, params, quick)
    with entry_lock(cache, stem):
        return _load_or_compute(recipe, params, stem, key, force=force, cache=cache, progress=progress)


def _load_or_compute(recipe, params, stem, key, *, force, cache: DataCache, progress):
    lookup = cache.load(stem, key)
    if lookup.status == "hit" and not force:
        return lookup.data, "cached", "", 0.0
    skip = recipe.skip_reason(params) if recipe.skip_reason is not None else None
    if skip:
        raise _Skipped(skip)
    reason = "forced" if force else f"{lookup.status}: {lookup.reason}" if lookup.status != "missing" else "no entry"
    start = time.perf_counter()
    # A recipe that keeps caches of its own (e.g. model features) takes them under the data cache.
    extra = ({"cache_dir": Path(cache.directory) / f"{recipe.name}-extra"}
             if "cache_dir" in inspect.signature(recipe.compute).parameters else {})
    data = recipe.compute(params, np.random.default_rng(np.random.SeedSequence(recipe.seed)), progress, **extra)
    seconds = time.perf_counter() - start
    cache.save(stem, key, data, recipe=recipe.name, source_hash=recipe.source_hash, params=params,
               seed=recipe.seed)
    # Plot exactly what a later cached run would see (and check the entry reads back).
    stored = cache.load(stem, key)
    if stored.status != "hit":
        raise RuntimeError(f"cache entry {stem} does not read back after writing: {stored.reason}")
    return stored.data, "computed", reason, seconds


class FigureData:
    """A recipe's data as a claim reads it: name, parameters, arrays, and where they came from
    ('cached', 'computed' and stored, or 'computed in memory'), with the cache key.

    The arrays are read (or computed) at the first use of ``data`` or ``status``, not before: a
    claim can do its own work first while ``slr reproduce`` computes the figure on another worker,
    and then waits only for what is left of it (the entry's lock)."""

    def __init__(self, name: str, params: dict, key: str, load):
        self.name, self.params, self.key = name, params, key
        self._load, self._loaded = load, None

    def _get(self) -> tuple:
        if self._loaded is None:
            self._loaded = self._load()
        return self._loaded

    @property
    def data(self) -> dict:
        return self._get()[0]

    @property
    def status(self) -> str:
        return self._get()[1]


def figure_data(name: str, *, quick: bool, cache_dir=None) -> FigureData:
    """The data of recipe ``name`` (quick or full sizes), loaded at first use (``FigureData``):
    from the cache folder ``cache_dir`` when its entry is valid, else computed (and stored there,
    under the entry's lock, so a figure and a claim computing it at once compute it once); with
    ``cache_dir=None``, computed in memory."""
    from .registry import find_recipe

    recipe = find_recipe(name)
    params = recipe.params(quick)
    stem, key = cache_entry(recipe, params, quick)

    def load():
        if cache_dir is None:
            data = recipe.compute(params, np.random.default_rng(np.random.SeedSequence(recipe.seed)),
                                  progress_factory(False))
            return {k: np.asarray(v) for k, v in data.items()}, "computed in memory"
        data, status, _, _ = _data(recipe, params, quick=quick, force=False,
                                   cache=DataCache(Path(cache_dir)), progress=progress_factory(False))
        return data, status

    return FigureData(name, params, key, load)


def run_recipe(recipe, *, paths: OutputPaths, quick: bool = False, force: bool = False,
               progress=None, echo=print) -> RecipeOutcome:
    """Compute (or load from the cache) and plot one recipe; failures become a 'failed' outcome."""
    progress = progress or progress_factory(False)
    if paths is None:
        raise ValueError("paths=None is not allowed: a recipe needs its OutputPaths")
    from .provenance import cpu_seconds

    cache = DataCache(paths.cache)
    compute_s = plot_s = 0.0
    cpu = cpu_seconds()
    try:
        params = recipe.params(quick)
        data, status, reason, compute_s = _data(recipe, params, quick=quick, force=force,
                                                cache=cache, progress=progress)
        start = time.perf_counter()
        with figure_style(quick), shared_mathtext(), fewer_collections():
            fig = recipe.plot(data, params)
            if quick:
                mark_quick(fig)
            metadata = figure_metadata(recipe, params, quick=quick, data_status=status,
                                       compute_seconds=compute_s)
            files = save_figure(fig, paths, recipe.name, metadata)
        plot_s = time.perf_counter() - start
        return RecipeOutcome(recipe.name, status, reason, compute_s, plot_s, files, cpu_seconds() - cpu)
    except _Skipped as exc:
        return RecipeOutcome(recipe.name, "skipped", str(exc), compute_s, plot_s, (), cpu_seconds() - cpu)
    except Terminated:
        raise
    except (Exception, SystemExit) as exc:  # reported in the closing table; the other recipes still run
        echo(f"recipe {recipe.name} failed:\n{traceback.format_exc()}")
        return RecipeOutcome(recipe.name, "failed", f"{type(exc).__name__}: {exc}", compute_s, plot_s, (),
                             cpu_seconds() - cpu)


def run_recipes(recipes, *, paths: OutputPaths, quick: bool = False, force: bool = False,
                progress: bool | None = False, echo=print, jobs: int = 1) -> list[RecipeOutcome]:
    """Run ``recipes`` (in input order, or on ``jobs`` worker processes, see ``figures.work``);
    ``progress``: the live display (None: when stderr is a terminal; False: never)."""
    from .work import RunOptions, run_items

    return run_items(recipes, RunOptions(paths=paths, quick=quick, force=force), jobs=jobs, echo=echo,
                     display=progress)


def outcome_table(outcomes, paths: OutputPaths) -> str:
    """The closing table: what was made, from cache or computed, how long it took, where it went."""
    rows = [(o.name, o.status, f"{o.compute_seconds:.1f}", f"{o.plot_seconds:.1f}",
             o.reason or "-", ", ".join(p.name for p in o.files) or "-") for o in outcomes]
    table = text_table(("figure", "status", "compute s", "plot s", "reason (computed, skipped, failed)", "files"), rows)
    return f"{table}\nfigures in {paths.figures}; cache in {paths.cache}"
