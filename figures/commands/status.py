"""What a run would do, without doing it: ``slr list`` and the dry run (``-n/--dry-run``).

A figure's state is its cache entry's (``figures.runner.cache_entry``, ``figures.cache``):
'cached' (valid entry: only redrawn), or 'compute' with the reason (no entry, stale: the recipe
or its parameters changed, corrupt, forced); a recipe that cannot compute here and has no data is
'skip'. Claims keep no cache: they always run (a claim that reads a figure's data says so); ``slr
list`` shows the verdict of the last report in the output folder, if any.
"""

from __future__ import annotations

import dataclasses
import json

__all__ = ["ItemState", "recipe_state", "claim_states", "list_command", "dry_run"]


@dataclasses.dataclass(frozen=True)
class ItemState:
    """One line of the listing: kind ('figure'/'claim'), name, action and why, and a description."""

    kind: str
    name: str
    action: str
    reason: str
    description: str

    def line(self, width: int) -> str:
        return f"{self.kind:6s}  {self.name:<{width}s}  {self.action:8s} {self.reason}"


def recipe_state(recipe, paths, *, quick: bool, force: bool = False) -> ItemState:
    """The figure's cache state and what ``slr figures`` would do with it."""
    from ..cache import DataCache
    from ..runner import cache_entry

    params = recipe.params(quick)
    stem, key = cache_entry(recipe, params, quick)
    lookup = DataCache(paths.cache).load(stem, key)
    if lookup.status == "hit":
        action, reason = ("compute", "forced (--force); the cache holds valid data") if force else \
            ("cached", "valid cache entry: the figure is only redrawn")
    else:
        action, reason = "compute", "no cache entry" if lookup.status == "missing" else \
            f"{lookup.status}: {lookup.reason}"
        skip = recipe.skip_reason(params) if recipe.skip_reason is not None else None
        if skip:
            action, reason = "skip", skip
    return ItemState("figure", recipe.name, action, reason, recipe.title)


def claim_states(claims, paths) -> list[ItemState]:
    """Claims always run; the reason gives the verdict of the report in ``paths`` if there is one."""
    last = {}
    try:
        report = json.loads(paths.verification_json.read_text())
        last = {c["claim_id"]: f"last report: {c['status']} ({report['mode']}, {report['created']})"
                for c in report["claims"]}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return [ItemState("claim", c.claim_id, "run", last.get(c.claim_id, "no report yet")
                      + (f"; reads the data of figure {', '.join(c.figures)}" if c.figures else ""), c.statement)
            for c in claims]


def _print(states, verbose: bool) -> None:
    width = max((len(s.name) for s in states), default=0)
    for s in states:
        print(s.line(width))
        if verbose:
            print(f"        {s.description}")


def list_command(args) -> int:
    """``slr list``: every figure and claim, one line each, with its state."""
    from ..paths import OutputPaths
    from ..registry import discover_recipes
    from ..verify import discover_claims

    paths = OutputPaths.resolve(args.out, args.cache, quick=args.quick)
    states = []
    if args.kind in ("all", "figures"):
        states += [recipe_state(r, paths, quick=args.quick) for r in discover_recipes()]
    if args.kind in ("all", "claims"):
        states += claim_states(discover_claims(), paths)
    if args.json:
        print(json.dumps([dataclasses.asdict(s) for s in states], indent=1))
    else:
        print(f"{'quick' if args.quick else 'full'} mode; cache {paths.cache}")
        _print(states, args.verbose)
    return 0


def dry_run(recipes, claims, paths, *, quick: bool, force: bool) -> int:
    """Print what ``slr figures/verify/reproduce`` would do and why; compute nothing."""
    states = [recipe_state(r, paths, quick=quick, force=force) for r in recipes]
    states += [ItemState("claim", c.claim_id, "run", "claims are always run (not cached)", c.statement)
               for c in claims]
    print(f"dry run ({'quick' if quick else 'full'} mode): nothing is computed or written")
    _print(states, verbose=False)
    n_compute = sum(s.action == "compute" for s in states)
    n_cached = sum(s.action == "cached" for s in states)
    print(f"would compute {n_compute} figure(s), redraw {n_cached} from the cache, run {len(claims)} claim(s); "
          f"outputs in {paths.out}")
    return 0


def add_list_parser(sub):
    """The ``list`` subcommand on the subparsers ``sub``."""
    p = sub.add_parser("list", help="list the figures and claims, one line each, with their cache state",
                       description="Every figure (its cache state: cached, or compute and why) and every claim "
                                   "(always run; the verdict of the last report, if any). Computes nothing.")
    p.add_argument("kind", nargs="?", choices=("all", "figures", "claims"), default="all",
                   help="what to list (default: all)")
    p.add_argument("--out", metavar="DIR", help="output folder (default: <checkout or cwd>/out)")
    p.add_argument("--cache", metavar="DIR", help="cache of computed data (default: <out>/cache)")
    p.add_argument("--quick", action="store_true", help="the state of the quick (smoke-run) outputs")
    p.add_argument("-v", "--verbose", action="store_true", help="also each figure's title and claim's statement")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=list_command)
    return p
