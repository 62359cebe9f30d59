"""Every reference to a derivation resolves inside the project.

- each ``docs/math/<page>.md#<anchor>`` cited anywhere in the repository (code, tests, README,
  figure titles, claim statements) names an existing page and one of its headings;
- each link between the documentation pages (``[text](page.md#anchor)``) resolves;
- each derivation page names the tests and the ``slr verify`` claims that check it
  (``{test}`tests/test_x.py::test_y``` and ``{claim}`id```), and those exist.

Anchors are GitHub-style heading slugs, the ones MyST generates for the site
(``myst_heading_anchors`` in docs/conf.py) and GitHub shows for the Markdown files.
Runs without Sphinx; the site build (``-W``) and ``tests/test_docs_site.py`` check the same
references on the built HTML.
"""

from __future__ import annotations

import ast
import functools
import importlib
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MATH = DOCS / "math"
SKIP_DIRS = {".git", ".venv", ".ci-venv", "venv", "out", "_build", "_generated", "__pycache__",
             "node_modules", ".pytest_cache", "build", "dist", ".ci-wheel"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".txt", ".rst", ".yml", ".yaml", ".cff", ".bib", ".sh", ""}

CITATION = re.compile(r"docs/math/([\w.-]+?\.md)#([\w-]*)")
PAGE_LINK = re.compile(r"\]\(([\w./-]+?\.md)(?:#([\w-]+))?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
TEST_ROLE = re.compile(r"\{test\}`([^`]+)`")
CLAIM_ROLE = re.compile(r"\{claim\}`([^`]+)`")
PYTHON_NAME = re.compile(r"`((?:theory|numerics|figures)(?:\.\w+)+)`")


def github_slug(title: str) -> str:
    """The slug MyST (``myst_parser.slugs.github_slugify``) and GitHub give a heading."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title.lower().replace(" ", "-"))


def anchors(page: Path) -> frozenset[str]:
    return _anchors(page, page.stat().st_mtime_ns)


@functools.lru_cache(maxsize=None)
def _anchors(page: Path, mtime_ns: int) -> frozenset[str]:
    """``anchors(page)``, read once per process and version of the file (the pages are cited ~450 times)."""
    found, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            found.add(github_slug(m.group(1)))
    return frozenset(found)


def repository_text_files():
    for folder, dirs, files in os.walk(ROOT):
        # any virtual environment (e.g. .ci/min-versions' .ci-venv-min) holds other projects' files
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")
                   and not (Path(folder) / d / "pyvenv.cfg").exists()]
        for name in files:
            path = Path(folder) / name
            if path.suffix in TEXT_SUFFIXES:
                try:
                    yield path, path.read_text()
                except UnicodeDecodeError:
                    continue


def math_pages():
    return sorted(p for p in MATH.glob("*.md") if p.name != "index.md")


def test_anchor_slugs_follow_github():
    assert github_slug("Closed form of zeta through Owen's T") == "closed-form-of-zeta-through-owens-t"
    assert github_slug("Flow on M") == "flow-on-m"
    assert anchors(MATH / "risk.md") >= {"the-function-zeta", "closed-form-population-risk"}


def test_every_cited_derivation_anchor_exists():
    cited, bad = 0, []
    for path, text in repository_text_files():
        for page, anchor in CITATION.findall(text):
            cited += 1
            target = MATH / page
            if not target.is_file() or anchor not in anchors(target):
                bad.append(f"{path.relative_to(ROOT)}: docs/math/{page}#{anchor}")
    assert not bad, "references to missing derivation pages or anchors:\n" + "\n".join(sorted(set(bad)))
    assert cited > 0


def test_links_between_documentation_pages_resolve():
    bad = []
    for source in sorted(DOCS.rglob("*.md")):
        if any(part in SKIP_DIRS for part in source.relative_to(DOCS).parts):
            continue
        for page, anchor in PAGE_LINK.findall(source.read_text()):
            target = (source.parent / page).resolve()
            if "_generated" in target.parts:
                continue  # written at build time; checked on the built site
            if not target.is_file() or (anchor and anchor not in anchors(target)):
                bad.append(f"{source.relative_to(ROOT)}: {page}#{anchor}")
    assert not bad, "broken links between pages:\n" + "\n".join(bad)


@functools.lru_cache(maxsize=None)
def _defined_tests(path: Path) -> frozenset[str]:
    """The functions defined in a test file, parsed once per process (the pages name ~250 tests,
    several per file)."""
    return frozenset(node.name for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


@pytest.fixture(scope="module")
def claim_ids():
    from figures.verify.framework import discover_claims

    return {c.claim_id for c in discover_claims()}


@pytest.mark.parametrize("page", math_pages(), ids=lambda p: p.name)
def test_each_math_page_names_existing_tests_and_claims(page, claim_ids):
    text = page.read_text()
    tests, claims = TEST_ROLE.findall(text), CLAIM_ROLE.findall(text)
    assert tests and claims, f"{page.name} must name the tests and the claims that check it"
    missing = []
    for ref in tests:
        file, _, func = ref.partition("::")
        path = ROOT / file
        if not path.is_file() or not func or func not in _defined_tests(path):
            missing.append(ref)
    missing += [c for c in claims if c not in claim_ids]
    assert not missing, f"{page.name} names tests or claims that do not exist: {missing}"


def test_math_index_lists_every_page():
    index = (MATH / "index.md").read_text()
    assert all(page.stem in index.split() for page in math_pages())


def test_checks_detect_a_dangling_reference(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Title\n\n## Some section\n\n```\n# not a heading\n```\n")
    assert anchors(page) == {"title", "some-section"}
    assert "not-a-heading" not in anchors(page)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_python_names_cited_by_the_pages_exist():
    """`theory.x`, `numerics.y.z`, `figures.w` named in the documentation pages can be imported."""
    bad = []
    for source in sorted(DOCS.rglob("*.md")):
        if any(part in SKIP_DIRS for part in source.relative_to(DOCS).parts):
            continue
        for name in sorted(set(PYTHON_NAME.findall(source.read_text()))):
            if not _resolves(name):
                bad.append(f"{source.relative_to(ROOT)}: {name}")
    assert not bad, "names that do not exist (moved or renamed?):\n" + "\n".join(bad)


# The paper's mathematics is cited by the paper's numbering or by docs/math pages; the name of the
# out-of-repository notes it was once collected in must not appear (spelled in two parts so that this
# file does not match itself).
_NOTES = "S" + "PEC"
UPPER_NAME = re.compile(rf"\b{_NOTES}(?![A-Za-z])")
IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")
ALLOWED_IDENTIFIERS = {"spec", "find_spec", "spec_from_file_location", "module_from_spec"}  # importlib


def _notes_references(text: str) -> list:
    found = UPPER_NAME.findall(text)
    if _NOTES.lower() in text:   # else no identifier has it as a part: not split into identifiers
        found += [tok for tok in IDENTIFIER.findall(text)
                  if _NOTES.lower() in tok.split("_") and tok not in ALLOWED_IDENTIFIERS]
    return found


def test_no_reference_to_notes_outside_the_repository():
    bad = [f"{path.relative_to(ROOT)}: {refs[:3]}" for path, text in repository_text_files()
           if (refs := _notes_references(text))]
    assert not bad, "cite the paper's numbering or docs/math/<page>.md#<anchor> instead:\n" + "\n".join(bad)


def test_notes_check_catches_every_form():
    assert _notes_references(f"closed form ({_NOTES} §5)") == [_NOTES]
    assert _notes_references(f"{_NOTES}_ROWS = []") == [_NOTES]
    name = f"test_fixed_points_of_{_NOTES.lower()}_7"
    assert _notes_references(f"def {name}():") == [name]
    assert _notes_references("SPECIAL, special, inspect, spec = find_spec(name)") == []


# ASCII control characters other than tab and newline; tab only where it is the file's indentation (.md
# pages use spaces). A TeX command written through a non-raw Python string loses its backslash this
# way: "\alpha" -> BEL + "lpha", "\varepsilon" -> VT, "\text" -> TAB. A lost "\n" or "\r" ("\nu", "\rho")
# becomes a line break once the file is read, which this cannot see; the site's browser test
# (tests/test_docs_site.py) reports the TeX error it leaves.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CONTROL_OR_TAB = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def _control_characters(path: Path, text: str) -> list:
    pattern = _CONTROL_OR_TAB if path.suffix == ".md" else _CONTROL
    return [f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{text.count(chr(10), 0, m.start()) + 1}: "
            f"{m.group()!r}" for m in pattern.finditer(text)]


def test_no_control_characters_in_the_repository_text():
    found = [hit for path, text in repository_text_files() for hit in _control_characters(path, text)]
    assert not found, "\n".join(found[:20])


def test_control_character_check_catches_a_lost_backslash(tmp_path):
    page = tmp_path / "page.md"
    text = "the step $\alpha$, the noise $\varepsilon$ and $\text{se}$ at $\rho = 0$\n"   # not raw: on purpose
    assert len(_control_characters(page, text)) == 4
    assert _control_characters(page, r"the step $\alpha$ and $\rho$" + "\n") == []
