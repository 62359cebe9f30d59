"""Run the claims and write the verification report (table on stdout, Markdown and JSON files)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from pathlib import Path

from ..cache import atomic_write
from ..versions import package_versions
from ..table import markdown_table, text_table
from .framework import ClaimResult

__all__ = ["run_claims", "write_report", "summary_line"]

_HEADER = ("claim", "statement", "method", "measured", "tolerance", "how the tolerance is derived", "status")
_MD_HEADER = _HEADER + ("seconds",)
_FIGURE_HEADER = ("figure", "status", "compute s", "plot s", "why computed (or skipped, failed)")


def _number(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.3g}"


def _row(r: ClaimResult, *, long: bool):
    measured = f"{_number(r.measured)} ({r.measured_text})" if long else _number(r.measured)
    row = (r.claim_id, r.statement, r.method, measured, _number(r.tolerance), r.derivation,
           r.status.upper() if r.status in ("fail", "error") else r.status)
    return row + (f"{r.seconds:.2f}",) if long else row


def _figure_entry(outcome) -> dict:
    """One figure's line of the JSON report (a ``figures.runner.RecipeOutcome``): its status and
    its elapsed time, compute (0 when the data came from the cache) and plot, and its CPU time."""
    return {"name": outcome.name, "status": outcome.status, "reason": outcome.reason,
            "compute_seconds": outcome.compute_seconds, "plot_seconds": outcome.plot_seconds,
            "seconds": outcome.compute_seconds + outcome.plot_seconds, "cpu_seconds": outcome.cpu_seconds}


def _figure_section(entries) -> list[str]:
    if not entries:
        return []
    rows = [(e["name"], e["status"], f"{e['compute_seconds']:.2f}", f"{e['plot_seconds']:.2f}",
             e["reason"] or "-") for e in entries]
    return ["## Figures of this run", "", markdown_table(_FIGURE_HEADER, rows), ""]


def run_claims(claims, *, quick: bool, seed: int = 0, echo=print, jobs: int = 1,
               progress: bool | None = False) -> list[ClaimResult]:
    """Run each claim (on ``jobs`` worker processes if > 1, see ``figures.work``), echoing one line
    per claim as it finishes; results in input order. Each claim seeds its own stream, so ``jobs``
    does not change any number."""
    from ..work import RunOptions, run_items

    return run_items(claims, RunOptions(quick=quick, seed=seed), jobs=jobs, echo=echo, display=progress)


def summary_line(results) -> str:
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "error", "skipped")}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "no claims"


def _json_safe(obj):
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: fh.write(text.encode()))


def _provenance_text(origin: dict) -> str:
    git = origin["git"]
    commit = git["commit"] + (" (with uncommitted changes)" if git["dirty"] else "")
    versions = ", ".join(f"{k} {v}" for k, v in origin["versions"].items() if v)
    return (f"Python {origin['python']} ({origin['implementation']}) on {origin['platform']}, CPU "
            f"{origin['cpu']} ({origin['cpu_count']} cores), BLAS {origin['blas']}; commit {commit}; "
            f"command `{' '.join(origin['command'])}`; {versions}.")


def write_report(results, *, md_path: Path, json_path: Path, quick: bool, seed: int, figures=()) -> str:
    """Write the Markdown and JSON reports; returns the plain-text table for the terminal.

    Each claim's elapsed time is in its entry (``seconds``), its CPU time too (``cpu_seconds``:
    the process that ran it and its ended children); ``figures`` (the ``RecipeOutcome``s of
    the same run, as ``slr reproduce`` passes them) adds each figure's status and times.
    ``elapsed_seconds`` is the sum of the items' wall-clock times: items run side by side add up,
    so with ``--jobs`` > 1 it exceeds the wall-clock time of the run.
    """
    from ..provenance import provenance

    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    mode = "quick" if quick else "full"
    origin = provenance(seed=seed)
    figure_entries = [_figure_entry(o) for o in figures]
    elapsed = sum(r.seconds for r in results) + sum(e["seconds"] for e in figure_entries)
    items = f"{len(results)} claim(s)" + (f" and {len(figure_entries)} figure(s)" if figure_entries else "")
    md = "\n".join([
        "# Verification report",
        "",
        f"Mode: {mode}; seed {seed}; created {created}; {summary_line(results)}; "
        f"{elapsed:.1f} s for {items}, summed over the items (each item's time below).",
        "",
        _provenance_text(origin),
        "",
        "A claim passes when the measured number is at most the tolerance; 'skipped' means a "
        "module it needs is not available, and is not a pass.",
        "",
        markdown_table(_MD_HEADER, [_row(r, long=True) for r in results]),
        "",
        *_figure_section(figure_entries),
    ])
    payload = {"mode": mode, "seed": seed, "created": created, "versions": package_versions(),
               "provenance": origin, "elapsed_seconds": elapsed,
               "summary": summary_line(results), "claims": [dataclasses.asdict(r) for r in results]}
    if figure_entries:
        payload["figures"] = figure_entries
    _write_text(md_path, md)
    _write_text(json_path, json.dumps(_json_safe(payload), indent=1, allow_nan=False) + "\n")
    return text_table(_HEADER, [_row(r, long=False) for r in results], max_width=36)
