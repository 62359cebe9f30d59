"""Metadata written into every figure file: title, caption, parameters and provenance.

PNG files take free-form text chunks (read them back with ``PIL.Image.open(path).text``); PDF
files take the document-information keys only, so the caption goes to ``Subject`` and the
parameters and provenance, as JSON, to ``Keywords``.
"""

from __future__ import annotations

import json

from .provenance import provenance, project_version

__all__ = ["figure_metadata"]


def figure_metadata(recipe, params: dict, *, quick: bool, data_status: str, compute_seconds: float) -> dict:
    """``{"png": {...}, "pdf": {...}}``: the ``metadata`` argument of ``Figure.savefig`` per format."""
    origin = provenance(seed=recipe.seed)
    commit = origin["git"]["commit"] + ("+uncommitted" if origin["git"]["dirty"] else "")
    software = f"single-location-regression {project_version()} (commit {commit})"
    run = {"mode": "quick" if quick else "full", "data": data_status,
           "compute_seconds": round(compute_seconds, 3)}
    title = recipe.title + (" [quick run: smoke-test sizes, not the paper's]" if quick else "")
    caption = getattr(recipe, "caption", "") or recipe.title
    png = {"Title": title, "Description": caption, "Software": software,
           "Parameters": json.dumps(params, sort_keys=True), "Run": json.dumps(run),
           "Provenance": json.dumps(origin, sort_keys=True)}
    pdf = {"Title": title, "Subject": caption, "Creator": software,
           "Keywords": json.dumps({"parameters": params, "run": run, "provenance": origin}, sort_keys=True)}
    return {"png": png, "pdf": pdf}
