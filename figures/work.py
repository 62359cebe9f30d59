"""The one path by which figure recipes and claims run, in this process or on worker processes.

An item is a ``Recipe`` (figures/recipes/) or a ``Claim`` (figures/verify/claims/). ``run_items``
runs a list of them, mixed, with the run's options: in this process when ``jobs`` is 1,
otherwise on the project's process pool (``numerics.pool``), where each worker finds its item
again by kind and name (``run_named``: the single worker entry point) because items hold
functions that are not picklable by value. Results come back in input order; one line per
finished item is echoed, and a live display (``numerics.progress.LiveDisplay``) shows items
done, running, their step-level progress forwarded from the workers, and the ETA when the
output is a terminal.
"""

from __future__ import annotations

import dataclasses
import importlib

from numerics import progress as progress_module
from numerics.pool import ordered_map, worker_context

from .paths import OutputPaths

__all__ = ["RunOptions", "item_kind", "measured_costs", "run_item", "run_items", "run_named"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What every item of a run shares: outputs, mode, recomputation, root seed of the claims."""

    paths: OutputPaths | None = None
    quick: bool = False
    force: bool = False
    seed: int = 0
    show_progress: bool = True
    code_keys: tuple = ()   # the recipes' code keys, computed once per run (``figures.registry.code_keys``)


def item_kind(item) -> str:
    """'figure' for a Recipe, 'claim' for a Claim."""
    from .registry import Recipe
    from .verify.framework import Claim

    if isinstance(item, Recipe):
        return "figure"
    if isinstance(item, Claim):
        return "claim"
    raise ValueError(f"item={item!r} is not allowed: a Recipe or a Claim is needed")


def _module(item) -> str:
    """The module that defines ``item``: a worker imports it alone, not every recipe and claim."""
    return (item.compute if item_kind(item) == "figure" else item.check).__module__


def _find(kind: str, name: str, module: str):
    """The item ``name`` of kind ``kind`` in ``module``, the module the planning process found it in
    (a recipe module holds one recipe, a claim module several); else a recipe by ``find_recipe``, a
    claim among all claims (importing every recipe and claim costs a worker seconds)."""
    from . import registry, verify

    found_in = importlib.import_module(module)
    if kind == "figure":
        if getattr(found_in, "NAME", None) == name:
            return registry.Recipe.from_module(found_in)
        return registry.find_recipe(name)
    found = [item for item in vars(found_in).values()
             if isinstance(item, verify.Claim) and item.name == name]
    found = found or [item for item in verify.discover_claims() if item.name == name]
    if not found:
        raise ValueError(f"{kind} name={name!r} is not allowed: no such {kind}")
    return found[0]


def run_item(item, options: RunOptions):
    """Run one item in this process: a ``RecipeOutcome`` for a recipe, a ``ClaimResult`` for a claim;
    the cycle collector run less often meanwhile (``figures.saving.fewer_collections``: imports, symbolic
    algebra and compilation allocate as drawing does; eight claims in one process, load ~9: 620 -> 7
    collections of the youngest generation, 0.49 -> 0.11 s CPU in the collector)."""
    from .saving import fewer_collections

    with fewer_collections():
        if item_kind(item) == "figure":
            from .runner import progress_factory, run_recipe

            bars = progress_module.bar if options.show_progress else progress_factory(False)
            return run_recipe(item, paths=options.paths, quick=options.quick, force=options.force, progress=bars)
        return item(quick=options.quick, seed=options.seed,
                    cache=options.paths.cache if options.paths is not None else None)


def run_named(task):
    """Worker entry point: ``task = (kind, name, module, options)``; find the item and run it."""
    kind, name, module, options = task
    progress_module.task_started(f"{kind} {name}")
    if options.code_keys:
        from .registry import use_code_keys

        use_code_keys(options.code_keys)
    return run_item(_find(kind, name, module), options)


def measured_costs(paths: OutputPaths | None) -> dict:
    """{(kind, name): CPU seconds} of the items of the last report in ``paths`` (``verification.json``,
    written by ``slr verify`` and ``slr reproduce``): every claim, and each figure whose data that run
    computed (a figure taken from the cache cost its plot only). {} when there is no readable report."""
    import json

    if paths is None:
        return {}
    try:
        report = json.loads(paths.verification_json.read_text())
        costs = {("figure", f["name"]): float(f["cpu_seconds"])
                 for f in report.get("figures", ()) if f["status"] == "computed"}
        costs.update({("claim", c["claim_id"]): float(c["cpu_seconds"]) for c in report["claims"]})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    return costs


def _code_keys(items) -> tuple:
    from .registry import Recipe, code_keys

    return code_keys([item for item in items if isinstance(item, Recipe)])


def _echo_line(result) -> str:
    if hasattr(result, "claim_id"):
        return f"  {result.status:8s} claim {result.claim_id}  ({result.seconds:.1f} s)"
    return f"  {result.status:8s} figure {result.name}"


def run_items(items, options: RunOptions, *, jobs: int = 1, echo=print, display: bool | None = False) -> list:
    """Run ``items`` (recipes and claims) on ``jobs`` processes, longest first (``measured_costs``,
    else their ``cost``),
    in input order in this process; results in input order. See the module doc.

    display: None shows the live display when stderr is a terminal; False never.
    """
    items = list(items)
    pooled = jobs > 1 and len(items) > 1
    if display is False:
        options = dataclasses.replace(options, show_progress=False)
    previous = progress_module.set_enabled(display is not False)
    try:
        return _run_items(items, options, jobs, echo, display, pooled)
    finally:
        progress_module.set_enabled(previous)


def _run_items(items, options, jobs, echo, display, pooled) -> list:
    with progress_module.LiveDisplay(len(items), enabled=display, desc="slr",
                                     context=worker_context() if pooled else None) as live:
        write = live.write if live.enabled else echo

        def done(result):
            write(_echo_line(result))
            live.item_done(("claim " + result.claim_id) if hasattr(result, "claim_id") else "figure " + result.name)

        if not pooled:
            return ordered_map(lambda item: run_item(item, options), items, on_result=done)
        # Longest first (CPU seconds measured by the output's last report, else the recipes' COST and
        # claims' cost), so that no worker idles at the end while another finishes a long item;
        # results back in input order.
        measured = measured_costs(options.paths)
        order = sorted(range(len(items)), key=lambda i: -measured.get((item_kind(items[i]), items[i].name),
                                                                      items[i].cost))
        if not options.code_keys:   # the keys of the recipes planned here, not computed again by each worker
            options = dataclasses.replace(options, code_keys=_code_keys(items))
        tasks = [(item_kind(items[i]), items[i].name, _module(items[i]), options) for i in order]
        results = ordered_map(run_named, tasks, jobs=jobs, on_result=done, progress_queue=live.queue)
        by_index = dict(zip(order, results))
        return [by_index[i] for i in range(len(items))]
