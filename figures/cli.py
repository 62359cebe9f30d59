"""The ``slr`` command line.

    slr risk       the population risk at given parameters and overlaps, by up to three routes
    slr figures    regenerate the figures (recipes in figures/recipes/, data cached)
    slr verify     check every claim (figures/verify/claims/), write verification.md and .json
    slr reproduce  figures, then verify: the main job; non-zero exit status if anything fails

Outputs go to ``<out>`` (default ``<checkout or working directory>/out``, see ``figures.paths``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from numerics.pool import available_cores, terminating_handler

from .commands import add_clean_parser, add_list_parser, add_risk_parser
from .paths import OutputPaths
from .provenance import project_version


def _figure_plan(args):
    from .registry import discover_recipes, select

    paths = _output_paths(args)
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

    paths = _output_paths(args)
    flag = "--only" if args.command == "verify" else "--only-claim"
    claims = select(discover_claims(), args.only_claim, kind="claim", flag=flag)
    print(f"slr verify: {len(claims)} claim(s), {'quick' if args.quick else 'full'} mode, seed {args.seed}")
    return paths, claims


def _verify_done(results, paths, args, figures=()) -> bool:
    from .verify import summary_line, write_report

    print(write_report(results, md_path=paths.verification_md, json_path=paths.verification_json,
                       quick=args.quick, seed=args.seed, figures=figures))
    print(f"{summary_line(results)}; report in {paths.verification_md} and {paths.verification_json.name}")
    return all(r.ok for r in results)


def _dry_run(args, recipes=(), claims=()) -> int:
    from .commands.status import dry_run

    paths = OutputPaths.resolve(args.out, getattr(args, "cache", None), quick=args.quick)
    return dry_run(recipes, claims, paths, quick=args.quick, force=getattr(args, "force", False))


def _options(args, paths):
    from .work import RunOptions

    return RunOptions(paths=paths, quick=args.quick, force=getattr(args, "force", False),
                      seed=getattr(args, "seed", 0))


def _run(args, items):
    from .work import run_items

    display = False if getattr(args, "no_progress", False) else None
    return run_items(items, args.options, jobs=args.jobs, display=display)


def _figures_command(args) -> int:
    if args.dry_run:
        return _dry_run(args, recipes=_figure_plan(args)[1])
    paths, recipes = _figure_plan(args)
    args.options = _options(args, paths)
    return 0 if _figures_done(_run(args, recipes), paths) else 1


def _verify_command(args) -> int:
    if args.dry_run:
        return _dry_run(args, claims=_verify_plan(args)[1])
    paths, claims = _verify_plan(args)
    args.options = _options(args, paths)
    return 0 if _verify_done(_run(args, claims), paths, args) else 1


def _reproduce_command(args) -> int:
    """Figures and claims as one queue on ``args.jobs`` workers, longest recipes first, so that no
    worker idles while another finishes a long recipe; the reports are as for the two commands."""
    if args.dry_run:
        return _dry_run(args, recipes=_figure_plan(args)[1], claims=_verify_plan(args)[1])
    paths, recipes = _figure_plan(args)
    _, claims = _verify_plan(args)
    args.options = _options(args, paths)
    results = _run(args, recipes + claims)   # longest first on several workers (figures.work)
    outcomes = results[:len(recipes)]
    figures_ok = _figures_done(outcomes, paths)
    verify_ok = _verify_done(results[len(recipes):], paths, args, figures=outcomes)
    if not figures_ok:
        print("slr reproduce: some figures failed (see the table above)")
    return 0 if figures_ok and verify_ok else 1


def _output_paths(args) -> OutputPaths:
    """The output folders, checked writable before any work (``--out``, ``--cache``)."""
    from .cache import remove_stale_temporaries

    paths = OutputPaths.resolve(args.out, getattr(args, "cache", None), quick=getattr(args, "quick", False))
    if getattr(args, "dry_run", False):
        return paths   # a dry run writes nothing, not even folders
    folders = [("--out", paths.out)] + ([("--cache", paths.cache)] if hasattr(args, "cache") else [])
    for flag, folder in folders:
        _check_writable(flag, folder)
    for folder in (paths.out, paths.figures, paths.cache):
        remove_stale_temporaries(folder)
    return paths


def _check_writable(flag: str, folder) -> None:
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ValueError(f"{flag} {folder} is not allowed: a writable folder is needed "
                         f"({exc.strerror or type(exc).__name__})") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: a positive integer is needed")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: a seed is an integer >= 0")
    return value


def _add_output_flags(p, *, cache: bool = True) -> None:
    p.add_argument("--out", metavar="DIR", help="output folder (default: <checkout or cwd>/out)")
    if cache:
        p.add_argument("--cache", metavar="DIR", help="cache of computed data (default: <out>/cache)")
    p.add_argument("--quick", action="store_true",
                   help="small sizes, for a smoke run; outputs go to <out>/quick, apart from the full ones")
    p.add_argument("-n", "--dry-run", action="store_true",
                   help="say what would be computed, taken from the cache or run, and why; do nothing")
    p.add_argument("--jobs", type=_positive_int, default=available_cores(), metavar="N",
                   help="worker processes, at most the cores available (default: all of them, here "
                        "%(default)s); results do not depend on it")


def _add_figure_flags(p) -> None:
    p.add_argument("--only", action="append", metavar="NAME",
                   help="only these figures (repeatable, or a comma-separated list)")
    p.add_argument("--force", action="store_true", help="recompute even when the cache is valid")
    p.add_argument("--no-progress", action="store_true", help="no progress bars (also off when not a TTY)")


def _add_verify_flags(p, flag: str) -> None:
    p.add_argument(flag, dest="only_claim", action="append", metavar="ID",
                   help="only these claims (repeatable, or a comma-separated list)")
    p.add_argument("--seed", type=_seed, default=0, help="root seed of the randomised checks (default 0)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slr",
        description="Companion toolkit of 'Attention layers provably solve single-location regression'.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {project_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_risk_parser(sub, seed_type=_seed)
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


def _cap_jobs(args) -> None:
    cores = available_cores()
    if getattr(args, "jobs", 1) > cores:
        print(f"slr {args.command}: --jobs {args.jobs} capped at {cores}, the cores available", file=sys.stderr)
        args.jobs = cores


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _cap_jobs(args)
    in_main_thread = threading.current_thread() is threading.main_thread()
    # SIGTERM unwinds like Ctrl-C: the pool cancels queued work and terminates its workers,
    # temporary files are removed, and the exit status is 128 + 15 (a second SIGTERM does not
    # interrupt that cleanup).
    on_sigterm = terminating_handler(threading.Event())
    previous = signal.signal(signal.SIGTERM, on_sigterm) if in_main_thread else None
    try:
        return args.func(args)
    except ValueError as exc:
        parser.exit(2, f"slr {args.command}: error: {exc}\n")
    except KeyboardInterrupt:
        print(f"slr {args.command}: interrupted", file=sys.stderr)
        return 130
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
