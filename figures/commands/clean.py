"""``slr clean``: delete what ``slr figures/verify/reproduce`` wrote, and nothing else.

Only files of the kinds the toolkit writes are removed (figure PNG/PDF, cache ``.npz`` and JSON
sidecars, recipes' own cache folders ``<name>-extra``, the verification report, leftover
temporary files of interrupted writes, the cache entries' lock files), in the full and the quick outputs; folders are removed
only once empty. So ``--out`` pointing at a folder with other files in it loses none of them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["generated_files", "clean_command"]


def _matches(folder: Path, patterns) -> list[Path]:
    return sorted(p for pattern in patterns for p in folder.glob(pattern)) if folder.is_dir() else []


def generated_files(paths, *, keep_cache: bool = False) -> list[Path]:
    """The files and ``-extra`` folders the toolkit wrote under ``paths`` (full and quick outputs)."""
    from ..paths import OutputPaths

    quick = OutputPaths(out=paths.out / "quick", cache=paths.cache)
    found = []
    for out in (paths, quick):
        found += _matches(out.figures, ("*.png", "*.pdf", ".*.tmp"))
        found += [p for p in (out.verification_md, out.verification_json) if p.is_file()]
        found += _matches(out.out, (".*.tmp",))
    if not keep_cache:
        found += _matches(paths.cache, ("*.npz", "*.json", ".*.tmp", ".*.lock"))
        found += [p for p in _matches(paths.cache, ("*-extra",)) if p.is_dir()]
    return found


def _remove_empty(folders) -> None:
    for folder in folders:
        try:
            folder.rmdir()          # only succeeds when empty
        except OSError:
            pass


def clean_command(args) -> int:
    from ..paths import OutputPaths

    paths = OutputPaths.resolve(args.out, args.cache)
    files = generated_files(paths, keep_cache=args.keep_cache)
    verb = "would remove" if args.dry_run else "removed"
    for path in files:
        if not args.dry_run:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        print(f"  {verb} {path}")
    if not args.dry_run:
        _remove_empty([paths.out / "quick" / "figures", paths.out / "quick", paths.figures,
                       *([] if args.keep_cache else [paths.cache]), paths.out])
    print(f"slr clean: {verb} {len(files)} file(s) under {paths.out}"
          + ("" if paths.cache.is_relative_to(paths.out) else f" and {paths.cache}")
          + ("; the cache is kept" if args.keep_cache else ""))
    return 0


def add_clean_parser(sub):
    """The ``clean`` subcommand on the subparsers ``sub``."""
    p = sub.add_parser("clean", help="delete the generated figures, reports and cached data",
                       description="Delete what slr figures/verify/reproduce wrote (full and quick outputs, "
                                   "and the cache unless --keep-cache); other files are left alone.")
    p.add_argument("--out", metavar="DIR", help="output folder (default: <checkout or cwd>/out)")
    p.add_argument("--cache", metavar="DIR", help="cache of computed data (default: <out>/cache)")
    p.add_argument("--keep-cache", action="store_true", help="keep the computed data; delete figures and reports")
    p.add_argument("-n", "--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    p.set_defaults(func=clean_command)
    return p
