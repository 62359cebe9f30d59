"""Local Sphinx extension of the documentation site.

At ``builder-inited`` it writes, under ``docs/_generated/`` (git-ignored):

- ``api.md`` and ``api/<module>.rst``: one page per module of ``theory`` and ``numerics``
  (every public function and class through ``autodoc``); docstrings are shown verbatim (they
  state their formulas in plain text) and each ``docs/math/<page>.md#<anchor>`` they cite becomes
  a link to that derivation;
- ``gallery.md``: every recipe of ``figures/recipes/`` with its title and ``docs/gallery/<name>.png``;
- ``verification.md``: the report of ``slr verify`` rendered from its JSON, one anchor per claim.
  The JSON is ``$SLR_DOCS_VERIFY_JSON`` if set, else a fresh ``slr verify --quick`` run into
  ``<build>/verify`` (about 30 s of CPU).

Roles for the derivation pages: ``{claim}`id``` links to the claim's entry in the report (an
unknown id is a build warning, so an error under ``-W``); ``{test}`tests/test_x.py::test_y```
names a test, and warns unless that file defines that function.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.util import logging

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
GENERATED = DOCS / "_generated"
API_PACKAGES = ("theory", "numerics")
MATH_LINK = re.compile(r"docs/math/([\w-]+)\.md#([\w-]+)")


def public_modules(package: str) -> list[tuple[str, bool]]:
    """(name, is_package) of ``package`` and of every public submodule, recursively, sorted."""
    pkg = importlib.import_module(package)
    found = [(package, True)]
    for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{package}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append((info.name, info.ispkg))
    return sorted(found)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_api_pages() -> None:
    lines = ["# API reference", "",
             "Every public function and class of `theory` and `numerics`, one page per module, generated",
             "from the docstrings. Docstrings state the formula, where it holds and its sibling routes;",
             "they are shown as written, with links to the derivations they cite.", ""]
    for package in API_PACKAGES:
        modules = public_modules(package)
        lines += [f"## `{package}`", "", "```{toctree}", ":maxdepth: 1", ""]
        lines += [f"api/{name}" for name, _ in modules] + ["```", ""]
        for name, ispkg in modules:
            title = f"``{name}``"
            body = [title, "=" * len(title), ""]
            try:
                importlib.import_module(name)
            except ImportError as exc:  # an optional extra that is not installed where the site is built
                body += [f"Not importable where this site was built (an optional dependency is missing: "
                         f"``{exc}``), so its reference is not generated here."]
                _write(GENERATED / "api" / f"{name}.rst", "\n".join(body) + "\n")
                logger.info("api: %s not importable: %s", name, exc)
                continue
            body += [f".. automodule:: {name}"]
            # A package re-exports its modules' names: documenting them here too would describe
            # every object twice; the package page shows its docstring, the modules the members.
            body += [] if ispkg else ["   :members:", "   :undoc-members:"]
            _write(GENERATED / "api" / f"{name}.rst", "\n".join(body) + "\n")
    current = {f"{name}.rst" for package in API_PACKAGES for name, _ in public_modules(package)}
    for stale in (GENERATED / "api").glob("*.rst"):  # modules moved or removed since the last build
        if stale.name not in current:
            stale.unlink()
    _write(GENERATED / "api.md", "\n".join(lines))


def write_gallery_page() -> None:
    from figures.registry import discover_recipes

    lines = ["# Figure gallery", "",
             "One recipe per figure in `figures/recipes/`; `slr figures` regenerates them all (see",
             "[how to add a figure](../contributing.md#adding-a-figure)). The images are the copies in",
             "`docs/gallery/`, refreshed from a full run by `python scripts/update_readme_gallery.py out`.", ""]
    for recipe in sorted(discover_recipes(), key=lambda r: r.name):
        png = DOCS / "gallery" / f"{recipe.name}.png"
        lines += [f"## {recipe.name.replace('_', ' ')}", "", f"`{recipe.name}`: {recipe.title}", ""]
        if png.exists():
            lines += [f"![{recipe.title}](../gallery/{recipe.name}.png)", ""]
        else:
            lines += [f"No image in `docs/gallery/` yet: run `slr figures --only {recipe.name}`.", ""]
    _write(GENERATED / "gallery.md", "\n".join(lines))


def _verify_json(app) -> Path:
    given = os.environ.get("SLR_DOCS_VERIFY_JSON")
    if given:
        return Path(given)
    out = Path(app.outdir).parent / "verify"
    cmd = [sys.executable, "-c", "import sys; from figures.cli import main; sys.exit(main(sys.argv[1:]))",
           "verify", "--quick", "--out", str(out)]
    logger.info("running %s", " ".join(cmd[3:]))
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: some claim failed; the report shows it
        raise RuntimeError(f"slr verify --quick exited with {done.returncode}:\n{done.stderr[-3000:]}")
    from figures.paths import OutputPaths

    return OutputPaths.resolve(out, quick=True).verification_json   # quick reports go to <out>/quick


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_verification_page(app) -> None:
    report = json.loads(_verify_json(app).read_text())
    versions = ", ".join(f"{k} {v}" for k, v in report["versions"].items())
    lines = ["# Verification report", "",
             "Every numbered claim of the paper, and every result derived here, checked by `slr verify`",
             "with a measured value and a derived tolerance (a claim passes iff measured <= tolerance).",
             f"This page was generated from the JSON report of a `slr verify{' --quick' if report['mode'] == 'quick' else ''}`",
             f"run made when the site was built: mode {report['mode']}, seed {report['seed']},",
             f"created {report['created']}; **{report['summary']}**; {versions}.", "",
             "| claim | status | measured | tolerance |", "|---|---|---|---|"]
    for c in report["claims"]:
        lines.append(f"| [`{c['claim_id']}`](#claim-{c['claim_id']}) | {c['status']} "
                     f"| {c['measured']:.3g} | {c['tolerance']:.3g} |")
    lines.append("")
    for c in report["claims"]:
        lines += [f"(claim-{c['claim_id']})=", f"## `{c['claim_id']}`", "",
                  f"**Statement.** {c['statement']}", "",
                  f"**Method.** {c['method']}", "",
                  f"**Measured.** {c['measured_text']} (value {c['measured']:.6g}; tolerance "
                  f"{c['tolerance']:.6g}; status **{c['status']}**, {c['seconds']:.1f} s)", "",
                  f"**Tolerance.** {c['derivation']}", ""]
    # Plain text: statements contain '$' and '*' only as ordinary characters.
    text = "\n".join(lines).replace("$", "\\$")
    # Statements cite their derivation: make it a link (an anchor that does not exist fails the build).
    text = MATH_LINK.sub(lambda m: f"[{m.group(0)}](../math/{m.group(1)}.md#{m.group(2)})", text)
    _write(GENERATED / "verification.md", text)


def generate(app) -> None:
    GENERATED.mkdir(exist_ok=True)
    write_api_pages()
    write_gallery_page()
    write_verification_page(app)


def verbatim_docstring(app, what, name, obj, options, lines) -> None:
    """Show a docstring as written (a literal block), plus links to the derivations it cites."""
    if not lines:
        return
    cited = sorted(set(MATH_LINK.findall("\n".join(lines))))
    body = [".. code-block:: text", ""] + [f"   {line}" if line else "" for line in lines] + [""]
    if cited:
        links = ", ".join(f"`{page}.md#{anchor} <../../math/{page}.html#{anchor}>`__" for page, anchor in cited)
        body += [f"Derivation: {links}", ""]
    lines[:] = body


def _claim_ids() -> set[str]:
    from figures.verify.framework import discover_claims

    return {c.claim_id for c in discover_claims()}


def claim_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    if not hasattr(env, "slr_claim_ids"):
        env.slr_claim_ids = _claim_ids()
    if text not in env.slr_claim_ids:
        logger.warning("unknown claim id %r (not registered in figures/verify/claims/)", text,
                       location=(env.docname, lineno))
    node = pending_xref(rawtext, refdomain="std", reftype="ref", reftarget=f"claim-{text}".lower(),
                        refexplicit=True, refwarn=True)
    node += nodes.literal(text, text)
    return [node], []


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
    return names


def test_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    file, _, func = text.partition("::")
    path = ROOT / file
    if not path.is_file() or (func and func not in _test_functions(path)):
        logger.warning("test %r does not exist", text, location=(env.docname, lineno))
    return [nodes.literal(rawtext, text)], []


def setup(app):
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", verbatim_docstring)
    app.add_role("claim", claim_role)
    app.add_role("test", test_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
