"""Compare the figure data of two `slr figures` caches array by array (bit for bit).

Every ``<name>.npz`` present in BEFORE is looked up in AFTER and each of its arrays is compared
with ``numpy.array_equal`` (``equal_nan=True`` for floating and complex arrays, so a NaN written by
both runs at the same place counts as equal); keys, shapes and dtypes must match too. Used to show
that a refactor left the numbers unchanged: run `slr figures --out DIR_BEFORE` before it and
`slr figures --out DIR_AFTER` after it, then

    python scripts/compare_figure_caches.py DIR_BEFORE/cache DIR_AFTER/cache

Prints one line per entry (identical, or the differing arrays with their largest absolute
difference) and exits with 1 if any entry differs or is missing from AFTER.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def compare_entry(before: Path, after: Path) -> list[str]:
    """Differences between two .npz files, as readable lines (empty if bit-identical)."""
    problems = []
    with np.load(before, allow_pickle=False) as a, np.load(after, allow_pickle=False) as b:
        if set(a.files) != set(b.files):
            problems.append(f"keys differ: only before {sorted(set(a.files) - set(b.files))}, "
                            f"only after {sorted(set(b.files) - set(a.files))}")
        for key in sorted(set(a.files) & set(b.files)):
            x, y = a[key], b[key]
            if x.shape != y.shape or x.dtype != y.dtype:
                problems.append(f"{key}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
                continue
            nan_ok = x.dtype.kind in "fc"
            if not np.array_equal(x, y, equal_nan=nan_ok):
                diff = np.nanmax(np.abs(x - y)) if x.dtype.kind in "fciu" else "n/a"
                problems.append(f"{key}: differs, max |before - after| = {diff}")
    return problems


def compare_caches(before: Path, after: Path) -> dict[str, list[str]]:
    """{entry name: differences} for every .npz of ``before`` ([] = bit-identical)."""
    result = {}
    for entry in sorted(before.glob("*.npz")):
        other = after / entry.name
        result[entry.name] = compare_entry(entry, other) if other.exists() else ["missing after"]
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="cache folder of the reference run")
    parser.add_argument("after", type=Path, help="cache folder of the run to check")
    args = parser.parse_args(argv)
    result = compare_caches(args.before, args.after)
    if not result:
        print(f"no .npz entries in {args.before}")
        return 1
    for name, problems in result.items():
        print(f"{name}: " + ("bit-identical" if not problems else "; ".join(problems)))
    n_bad = sum(bool(p) for p in result.values())
    print(f"{len(result) - n_bad} of {len(result)} entries bit-identical")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
