"""The ``slr`` command line.

    slr risk       the population risk at given parameters and overlaps, by up to three routes
    slr figures    regenerate the figures (recipes in figures/recipes/, data cached)
    slr verify     check every claim (figures/verify/claims/), write verification.md and .json
    slr reproduce  figures, then verify: the main job; non-zero exit status if anything fails

Outputs go to ``<out>`` (default ``<checkout or working directory>/out``, see ``figures.paths``).
"""

from __future__ import annotations

import argparse
import sys

from .commands import add_clean_parser, add_list_parser, add_risk_parser
from .parallel import default_jobs
from .paths import OutputPaths
from .provenance import project_version


def _figure_plan(args):
    from .registry import discover_recipes, select

    paths = OutputPaths.resolve(args.out, args.cache, quick=args.quick)
    recipes = select(discover_recipes(), args.only)
    print(f"slr figures: {len(recipes)} recipe(s), {'quick' if args.quick else 'full'} mode")
    return paths, recipes


def _figures_done(outcomes, paths) -> bool:
    from .runner import outcome_table

    print(outcome_table(outcomes, paths))
    return all(o.status != "failed" for o in outcomes)


def _verify_plan(args):
    from .registry import select
    from .verify import discover_claims

    paths = OutputPaths.resolve(args.out, getattr(args, "cache", None), quick=args.quick)
    claims = select(discover_claims(), args.only_claim, kind="claim")
    print(f"slr verify: {len(claims)} claim(s), {'quick' if args.quick else 'full'} mode, seed {args.seed}")
    return paths, claims


def _verify_done(results, paths, args) -> bool:
    from .verify import summary_line, write_report

    print(write_report(results, md_path=paths.verification_md, json_path=paths.verification_json,
                       quick=args.quick, seed=args.seed))
    print(f"{summary_line(results)}; report in {paths.verification_md} and {paths.verification_json.name}")
    return all(r.ok for r in results)


def _dry_run(args, recipes=(), claims=()) -> int:
    from .commands.status import dry_run

    paths = OutputPaths.resolve(args.out, getattr(args, "cache", None), quick=args.quick)
    return dry_run(recipes, claims, paths, quick=args.quick, force=getattr(args, "force", False))


def _figures(args) -> bool:
    from .runner import progress_factory, run_recipes

    paths, recipes = _figure_plan(args)
    progress = progress_factory(False if args.no_progress else None)
    outcomes = run_recipes(recipes, paths=paths, quick=args.quick, force=args.force, progress=progress,
                           jobs=args.jobs)
    return _figures_done(outcomes, paths)


def _verify(args) -> bool:
    from .verify import run_claims

    paths, claims = _verify_plan(args)
    results = run_claims(claims, quick=args.quick, seed=args.seed, jobs=args.jobs)
    return _verify_done(results, paths, args)


def _figures_command(args) -> int:
    if args.dry_run:
        return _dry_run(args, recipes=_figure_plan(args)[1])
    return 0 if _figures(args) else 1


def _verify_command(args) -> int:
    if args.dry_run:
        return _dry_run(args, claims=_verify_plan(args)[1])
    return 0 if _verify(args) else 1


def _reproduce_in_one_pool(args) -> tuple[bool, bool]:
    """Figures and claims as one queue on ``args.jobs`` workers, longest recipes first, so that no
    worker idles while another finishes a long recipe; the reports are as for the two commands."""
    from .parallel import apply_task, ordered_map
    from .runner import RecipeOutcome, _run_recipe_by_name
    from .verify.report import _run_claim_by_id

    paths, recipes = _figure_plan(args)
    _, claims = _verify_plan(args)
    ordered = sorted(recipes, key=lambda r: -r.cost)
    tasks = ([(_run_recipe_by_name, (r.name, paths, args.quick, args.force)) for r in ordered]
             + [(_run_claim_by_id, (c.claim_id, args.quick, args.seed)) for c in claims])

    def echo(result):
        if isinstance(result, RecipeOutcome):
            print(f"  {result.status:8s} figure {result.name}")
        else:
            print(f"  {result.status:8s} claim {result.claim_id}  ({result.seconds:.1f} s)")

    results = ordered_map(apply_task, tasks, jobs=args.jobs, on_result=echo)
    by_name = {o.name: o for o in results[:len(ordered)]}
    figures_ok = _figures_done([by_name[r.name] for r in recipes], paths)
    verify_ok = _verify_done(results[len(ordered):], paths, args)
    return figures_ok, verify_ok


def _reproduce_command(args) -> int:
    if args.dry_run:
        return _dry_run(args, recipes=_figure_plan(args)[1], claims=_verify_plan(args)[1])
    if args.jobs > 1:
        figures_ok, verify_ok = _reproduce_in_one_pool(args)
    else:
        figures_ok, verify_ok = _figures(args), _verify(args)
    if not figures_ok:
        print("slr reproduce: some figures failed (see the table above)")
    return 0 if figures_ok and verify_ok else 1


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"jobs={value!r} is not allowed: a positive integer is needed")
    return value


def _add_output_flags(p, *, cache: bool = True) -> None:
    p.add_argument("--out", metavar="DIR", help="output folder (default: <checkout or cwd>/out)")
    if cache:
        p.add_argument("--cache", metavar="DIR", help="cache of computed data (default: <out>/cache)")
    p.add_argument("--quick", action="store_true",
                   help="small sizes, for a smoke run; outputs go to <out>/quick, apart from the full ones")
    p.add_argument("-n", "--dry-run", action="store_true",
                   help="say what would be computed, taken from the cache or run, and why; do nothing")
    p.add_argument("--jobs", type=_positive_int, default=default_jobs(), metavar="N",
                   help="worker processes (default: the cores available, here %(default)s); "
                        "results do not depend on it")


def _add_figure_flags(p) -> None:
    p.add_argument("--only", action="append", metavar="NAME",
                   help="only these figures (repeatable, or a comma-separated list)")
    p.add_argument("--force", action="store_true", help="recompute even when the cache is valid")
    p.add_argument("--no-progress", action="store_true", help="no progress bars (also off when not a TTY)")


def _add_verify_flags(p, flag: str) -> None:
    p.add_argument(flag, dest="only_claim", action="append", metavar="ID",
                   help="only these claims (repeatable, or a comma-separated list)")
    p.add_argument("--seed", type=int, default=0, help="root seed of the randomised checks (default 0)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slr",
        description="Companion toolkit of 'Attention layers provably solve single-location regression'.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {project_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_risk_parser(sub)
    figures = sub.add_parser("figures", help="regenerate the figures (PNG and PDF in <out>/figures)")
    _add_output_flags(figures)
    _add_figure_flags(figures)
    figures.set_defaults(func=_figures_command)

    verify = sub.add_parser("verify", help="check every claim; report in <out>/verification.md and .json")
    _add_output_flags(verify, cache=False)
    _add_verify_flags(verify, "--only")
    verify.set_defaults(func=_verify_command)

    reproduce = sub.add_parser("reproduce", help="figures, then verify (the main job)")
    _add_output_flags(reproduce)
    _add_figure_flags(reproduce)
    _add_verify_flags(reproduce, "--only-claim")
    reproduce.set_defaults(func=_reproduce_command)
    add_list_parser(sub)
    add_clean_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        parser.exit(2, f"slr {args.command}: error: {exc}\n")


if __name__ == "__main__":
    sys.exit(main())
