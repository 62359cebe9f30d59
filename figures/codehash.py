"""Which project code a recipe runs, read from its imports, and one hash over it (the cache key's code part).

``code_closure(module)`` follows the ``import`` statements (anywhere in a file, functions
included) of a module of the project packages (``theory``, ``numerics``, ``figures``),
transitively, without importing anything: files are found under the folder that holds those
packages and parsed with ``ast``. Imports of other packages are not followed (their versions
are in the cache key instead). Rules:

- ``from pkg import name``: if ``pkg.name`` is a module, that module; else the module that
  ``pkg`` re-exports ``name`` from (``from .sub import name`` in ``pkg/__init__.py``, followed
  through further re-exports), plus the text of ``pkg/__init__.py`` itself (it decides what
  ``name`` is); a name defined in ``pkg/__init__.py`` itself makes ``pkg`` a dependency. A lazy
  package's table (``lazy_namespace(__name__, {".sub": ("name", ...)})``, ``theory.namespace``)
  counts as ``from .sub import name``, and ``theory.namespace`` (its ``__getattr__`` runs) joins it.
- A project module or name that cannot be found is an error (ValueError), never skipped.
- ``skip``: names of functions left out, at any depth, of the starting module and of the
  modules under ``skip_under`` (a recipe's ``plot``, and the ``plot`` its helpers build:
  restyling a figure does not recompute its data), with the module-level imports used only by
  them.

``code_hash(module)`` is the SHA-256 over the names and texts of the closure.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import os
from pathlib import Path

from .codetree import flush, import_nodes, outline, pruned

__all__ = ["CodeClosure", "code_closure", "code_hash", "is_project_module", "module_file", "project_root"]

PROJECT_PACKAGES = ("theory", "numerics", "figures")


def project_root() -> Path:
    """The folder that holds the project packages (the checkout, or site-packages)."""
    return Path(__file__).resolve().parent.parent


def module_file(name: str, root: Path) -> Path | None:
    """``<root>/a/b.py`` or ``<root>/a/b/__init__.py`` for module ``a.b``, or None (string paths:
    a closure looks up thousands)."""
    base = os.path.join(root, *name.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return Path(path)
    return None


def is_project_module(name: str) -> bool:
    return name.split(".")[0] in PROJECT_PACKAGES


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[:len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


@dataclasses.dataclass
class CodeClosure:
    """Modules whose code runs (``followed``) and package files that only re-export (``texts``)."""

    root: Path
    start: str = ""
    followed: dict = dataclasses.field(default_factory=dict)   # name -> text
    texts: dict = dataclasses.field(default_factory=dict)      # name -> text of a re-exporting __init__
    read: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)  # name -> _read's answer
    found: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)  # name -> module_file's answer

    def modules(self) -> list[str]:
        return sorted(set(self.followed) | set(self.texts))

    def files(self) -> list[Path]:
        return [module_file(name, self.root) for name in self.modules()]

    def digest(self) -> str:
        h = hashlib.sha256()
        for name, text in sorted({**self.texts, **self.followed}.items()):
            label = "<start>" if name == self.start else name  # the recipe's own name keys it elsewhere
            h.update(label.encode() + b"\0" + text.encode() + b"\0")
        return h.hexdigest()


def _found(name: str, closure: CodeClosure) -> Path | None:
    """``module_file(name, closure.root)``, looked up once per closure (a recipe's closure asks ~300
    times for ~150 names: two ``stat`` calls each)."""
    if name not in closure.found:
        closure.found[name] = module_file(name, closure.root)
    return closure.found[name]


def _read(name: str, closure: CodeClosure, importer: str) -> tuple[str, ast.Module, bool]:
    """(text, tree, is a package) of module ``name``, read once per closure (one snapshot of each file)."""
    if name not in closure.read:
        closure.read[name] = _read_file(name, closure, importer)
    return closure.read[name]


def _read_file(name: str, closure: CodeClosure, importer: str) -> tuple[str, ast.Module, bool]:
    path = _found(name, closure)
    if path is None:
        raise ValueError(f"module {name!r} imported by {importer} is not allowed: no such project module "
                         f"under {closure.root}")
    text = path.read_text()
    return text, outline(text, str(path)), path.name == "__init__.py"


def _defines(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _lazy_exports(tree: ast.Module) -> dict[str, str]:
    """name -> relative module of a lazy package's table, ``lazy_namespace(__name__, {".module":
    ("name", ...), ...})`` in its ``__init__.py`` (``theory.namespace``); literal tuples only."""
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if (isinstance(call, ast.Call) and getattr(call.func, "id", None) == "lazy_namespace"
                and len(call.args) == 2 and isinstance(call.args[1], ast.Dict)):
            table = call.args[1]
            return {elt.value: key.value for key, names in zip(table.keys, table.values)
                    if isinstance(names, ast.Tuple) for elt in names.elts}
    return {}


def _reexport(pkg: str, name: str, closure: CodeClosure, importer: str) -> str:
    """The module ``name`` comes from when imported from package ``pkg``."""
    text, tree, _ = _read(pkg, closure, importer)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            source = _absolute(node, pkg, True)
            if is_project_module(source):
                closure.texts[pkg] = text
                original = next(a.name for a in node.names if (a.asname or a.name) == name)
                return _target(source, original, closure, pkg)
    module = _lazy_exports(tree).get(name)
    if module is not None:
        closure.texts[pkg] = text
        namespace = _absolute(next(n for n in tree.body if isinstance(n, ast.ImportFrom)
                                   and any(a.name == "lazy_namespace" for a in n.names)), pkg, True)
        closure.texts[namespace] = _read(namespace, closure, pkg)[0]   # its __getattr__ runs
        return _target(_absolute(ast.ImportFrom(module=module.lstrip("."), level=1), pkg, True), name,
                       closure, pkg)
    if _defines(tree, name) or name == "*":
        return pkg
    raise ValueError(f"name {name!r} imported from {pkg} by {importer} is not allowed: {pkg} does not "
                     "define or re-export it")


def _target(module: str, name: str, closure: CodeClosure, importer: str) -> str:
    """The module that ``from module import name`` depends on."""
    if _found(f"{module}.{name}", closure) is not None:
        return f"{module}.{name}"
    path = _found(module, closure)
    if path is not None and path.name == "__init__.py":
        return _reexport(module, name, closure, importer)
    return module


def _imported(tree: ast.Module, module: str, is_package: bool, closure: CodeClosure) -> set[str]:
    found = set()
    for node in import_nodes(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if is_project_module(a.name)}
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            if is_project_module(source):
                found |= {_target(source, a.name, closure, module) for a in node.names}
    return found


def code_closure(module: str, *, root: Path | None = None, skip=(), skip_under: str = "figures.recipes",
                 text: str | None = None) -> CodeClosure:
    """The project modules ``module`` runs (see the module docstring). ``text``: the source of
    ``module`` when it is not a file under ``root`` (a module loaded from elsewhere)."""
    closure = CodeClosure(root=project_root() if root is None else Path(root), start=module)
    if text is None:
        text, tree, is_package = _read(module, closure, "the caller")
        filename = str(_found(module, closure))
    else:
        tree, is_package, filename = outline(text), False, "<unknown>"
    if skip:
        text, tree = pruned(text, filename, skip)
    closure.followed[module] = text
    todo = sorted(_imported(tree, module, is_package, closure))
    while todo:
        name = todo.pop()
        if name in closure.followed:
            continue
        text, tree, is_package = _read(name, closure, module)
        if skip and name.startswith(skip_under + "."):
            text, tree = pruned(text, str(_found(name, closure)), skip)
        closure.followed[name] = text
        todo += sorted(_imported(tree, name, is_package, closure) - set(closure.followed))
    flush()
    return closure


def code_hash(module: str, **kwargs) -> str:
    """SHA-256 over the code ``module`` runs (``code_closure(module, **kwargs).digest()``)."""
    return code_closure(module, **kwargs).digest()
