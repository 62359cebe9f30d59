"""The shape of the code base: layers, private names, module and function sizes (read from the source).

- Layers: theory imports neither numerics nor figures; numerics does not import figures.
- A private name (leading underscore) is private to its module, and a private module to its
  package: no module imports another module's private name, or a private module of another package.
- Library modules (theory/, numerics/, figures/) stay under MAX_MODULE_LINES lines, and every
  function of the project (tests and scripts included) under MAX_FUNCTION_LINES lines, unless a
  comment block right above it (above its decorators) has a line ``# long function: <reason>``.
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("theory", "numerics", "figures")
ALL_CODE = LIBRARY + ("tests", "scripts", "benchmarks")
MAX_MODULE_LINES = 250
MAX_FUNCTION_LINES = 60
LONG_MARK = "# long function:"


def _python_files(folders):
    for folder in folders:
        yield from sorted(p for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(importer: Path, node: ast.ImportFrom) -> str:
    """The absolute module named by ``from <module> import ...`` inside ``importer``."""
    if not node.level:
        return node.module or ""
    package = _module_name(importer).split(".")
    if importer.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


@functools.lru_cache(maxsize=None)
def _outline(text: str):
    """(imports, functions) of a source text, parsed once per process and text (the scans below
    read the code tree three times; a parse of it costs ~1 s CPU in a test process, most of it the
    cycle collector walking the test process's objects): its ``import`` statements at any depth in
    ``ast.walk`` order, and (name, first line, last line, first line of its decorators) of each
    function definition. Not the tree itself: kept for the process, it would cost every later
    collection."""
    imports, functions = [], []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top = min([node.lineno] + [d.lineno for d in node.decorator_list])
            functions.append((node.name, node.lineno, node.end_lineno, top))
    return tuple(imports), tuple(functions)


def _private_violations(path: Path):
    """(line, text) of every import of a private name across modules in ``path``."""
    importer = _module_name(path)
    importer_package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    for node in _outline(path.read_text(encoding="utf-8"))[0]:
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            targets = [(module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in targets:
            parts = module.split(".")
            for i, part in enumerate(parts):
                owner = ".".join(parts[:i])
                if part.startswith("_") and not part.startswith("__") and owner != importer_package:
                    yield node.lineno, f"private module {module}"
            if name and name.startswith("_") and not name.startswith("__"):
                # ``from package import _module`` inside that package is a package-private import.
                own = ROOT / Path(*module.split("."), name + ".py")
                is_own_submodule = module == importer_package and own.exists()
                if not is_own_submodule:
                    yield node.lineno, f"from {module} import {name}"


def _all_private_imports():
    return {f"{p.relative_to(ROOT)}: {text}": line
            for p in _python_files(ALL_CODE) for line, text in _private_violations(p)}


def test_no_private_name_is_imported_across_modules():
    found = [f"{where} (line {line})" for where, line in _all_private_imports().items()]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_private_import_scan_finds_violations(tmp_path, monkeypatch):
    """The scan is not vacuous: it flags a private name and a foreign private module."""
    (tmp_path / "pkg").mkdir()
    bad = tmp_path / "pkg" / "user.py"
    bad.write_text("from theory.zeta import _helper\nimport figures._hidden\nfrom . import _own\n")
    (tmp_path / "pkg" / "_own.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    texts = [text for _, text in _private_violations(bad)]
    assert texts == ["from theory.zeta import _helper", "private module figures._hidden"]


@pytest.mark.parametrize("layer, forbidden", [("theory", ("numerics", "figures")), ("numerics", ("figures",))])
def test_layers_have_no_back_edges(layer, forbidden):
    found = []
    for path in _python_files((layer,)):
        for node in _outline(path.read_text(encoding="utf-8"))[0]:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [_absolute(path, node)]
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names
                      if n.split(".")[0] in forbidden]
    assert not found, f"{layer} imports a higher layer:\n" + "\n".join(found)


def test_library_modules_are_small():
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in _python_files(LIBRARY)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by idea):\n" + "\n".join(long)


def _long_functions(path: Path):
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for name, first, last, top in _outline(text)[1]:
        length = last - first + 1
        above = top - 2
        comments = []
        while above >= 0 and lines[above].strip().startswith("#"):  # the comment block above
            comments.append(lines[above].strip())
            above -= 1
        marked = any(c.startswith(LONG_MARK) for c in comments)
        if length > MAX_FUNCTION_LINES and not marked:
            yield name, length


def test_functions_are_short_or_say_why():
    long = [f"{p.relative_to(ROOT)}: {name} has {n} lines" for p in _python_files(ALL_CODE)
            for name, n in _long_functions(p)]
    assert not long, (f"functions over {MAX_FUNCTION_LINES} lines without a '{LONG_MARK} <reason>' "
                      "comment above them:\n" + "\n".join(long))


def test_the_size_scan_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    path = tmp_path / "m.py"
    path.write_text(f"def f():\n{body}\n")
    assert [name for name, _ in _long_functions(path)] == ["f"]
    path.write_text(f"{LONG_MARK} a table written out\ndef f():\n{body}\n")
    assert list(_long_functions(path)) == []
