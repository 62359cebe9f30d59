"""Parsed Python source shared by every code closure of a process (``figures.codehash``): each text
parsed once (``parse``), its ``import`` statements at any depth (``import_nodes``), the tree without
some functions and the imports only they used (``without``), and its text again (``unparse``).

Every tree returned is shared and never modified: ``without`` builds new statement lists and copies
only the statements that held a function it leaves out.

``outline`` and ``pruned`` give what ``figures.codehash`` reads of a text, from a store kept on disk
(``__pycache__/codetree-<python>-<digest of this file>.pickle`` next to this module) under the
SHA-256 of the text: parsing the ~110 modules of the recipes' closures is most of the ~0.4 s CPU
that computing their code keys costs a process; a text outlined once is not parsed again. An
outline is a tree of the text's top-level imports, the names of its top-level functions and classes,
its top-level assignment targets, its top-level calls (a lazy package's table) and, in one
``if False:`` block, its imports at any depth: exactly the nodes ``figures.codehash`` looks at. A
store that cannot be read is ignored, one that cannot be written is not written (every answer is
then computed, as without a store); it is written atomically (a reader sees the old or the new one).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import hashlib
import os
import pickle
import sys
from pathlib import Path

__all__ = ["flush", "import_nodes", "outline", "parse", "pruned", "unparse", "without"]


@functools.lru_cache(maxsize=1024)
def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """The tree of ``text``, parsed once per process and text (every recipe's closure reads the
    same files; a changed file is a new text). Shared: never modified (``without`` copies it)."""
    return ast.parse(text, filename=filename)


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")  # the fields that hold statements


def _statements(body):
    """Every statement of ``body`` at any depth (an import is a statement: expressions hold none)."""
    for node in body:
        yield node
        for field in _BODIES:
            yield from _statements(getattr(node, field, None) or ())


@functools.lru_cache(maxsize=1024)
def import_nodes(tree: ast.Module) -> tuple:
    """The ``import`` statements of ``tree`` at any depth (cached by the tree's identity)."""
    return tuple(n for n in _statements(tree.body) if isinstance(n, (ast.Import, ast.ImportFrom)))


def _dropped(body: list, skip: frozenset) -> list:
    """``body`` without the function definitions named in ``skip``, at any depth: a new list, and
    a shallow copy of each statement whose nested bodies lost one; unchanged statements are shared."""
    kept = []
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.name in skip:
            continue
        bodies = {f: getattr(node, f) for f in _BODIES if isinstance(getattr(node, f, None), list)}
        pruned = {f: _dropped(b, skip) for f, b in bodies.items()}
        if any(len(pruned[f]) != len(b) or any(x is not y for x, y in zip(pruned[f], b))
               for f, b in bodies.items()):
            node = copy.copy(node)
            for f, b in pruned.items():
                setattr(node, f, b)
        kept.append(node)
    return kept


def without(tree: ast.Module, skip) -> ast.Module:
    """The tree without the functions named in ``skip`` (at any depth) and the module-level
    imports that only they use."""
    if not skip:
        return tree
    return _pruned(tree, frozenset(skip))


@functools.lru_cache(maxsize=1024)
def _pruned(tree: ast.Module, skip: frozenset) -> ast.Module:
    """``without(tree, skip)``, once per process, parsed tree (cached by its identity, as
    ``import_nodes``) and ``skip``: every recipe's closure prunes the same shared modules. Shared:
    never modified."""
    body = _dropped(tree.body, skip)   # new lists, and copies where a function went: ``tree`` stays as parsed
    kept = ast.Module(body=[n for n in body if not isinstance(n, (ast.Import, ast.ImportFrom))], type_ignores=[])
    used = {n.id for n in ast.walk(kept) if isinstance(n, ast.Name)}
    used |= {n.value.id for n in ast.walk(kept) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}

    def needed(node):
        return any((a.asname or a.name).split(".")[0] in used for a in node.names)

    body = [n for n in body if not isinstance(n, (ast.Import, ast.ImportFrom)) or needed(n)]
    return ast.Module(body=body, type_ignores=[])


@functools.lru_cache(maxsize=1024)
def unparse(tree: ast.Module) -> str:
    """``ast.unparse(tree)``, once per (shared, never modified) tree."""
    return ast.unparse(tree)


def _outline(tree: ast.Module) -> ast.Module:
    """The nodes of ``tree`` that ``figures.codehash`` reads (module docstring): its top-level imports,
    functions and classes (name only), assignments (targets only) and calls, then its imports at
    any depth in one ``if False:`` block."""
    body, top = [], set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            body.append(node)
            top.add(id(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body.append(type(node)(name=node.name, body=[], decorator_list=[]))
        elif isinstance(node, ast.Assign):
            body.append(ast.Assign(targets=node.targets, value=ast.Constant(None)))
        elif isinstance(node, ast.AnnAssign):
            body.append(ast.AnnAssign(target=node.target, annotation=ast.Constant(None), simple=node.simple))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            body.append(node)
    nested = [node for node in import_nodes(tree) if id(node) not in top]
    if nested:
        body.append(ast.If(test=ast.Constant(False), body=nested, orelse=[]))
    return ast.Module(body=body, type_ignores=[])


_STORE = {"answers": None, "dirty": False, "used": set()}   # key -> outline, or (text, outline) of a pruned tree
_STORE_LIMIT = 2000   # answers kept; beyond, a write keeps only those this process used (old texts go)


def _store_path() -> Path:
    here = Path(__file__).resolve()
    digest = hashlib.sha256(here.read_bytes()).hexdigest()[:16]
    return here.parent / "__pycache__" / f"codetree-{sys.implementation.cache_tag}-{digest}.pickle"


def _answers() -> dict:
    if _STORE["answers"] is None:
        try:
            with open(_store_path(), "rb") as fh:
                answers = pickle.load(fh)
            _STORE["answers"] = answers if isinstance(answers, dict) else {}
        except Exception:   # missing, unreadable or not a store: answers are computed
            _STORE["answers"] = {}
    return _STORE["answers"]


def _remembered(key: str, compute):
    answers = _answers()
    _STORE["used"].add(key)
    if key not in answers:
        answers[key] = compute()
        _STORE["dirty"] = True
    return answers[key]


def outline(text: str, filename: str = "<unknown>") -> ast.Module:
    """The outline of ``text`` (module docstring): what ``figures.codehash`` reads of its tree; from
    the store when this text was outlined before, else from ``parse``. Shared: never modified."""
    return _remembered(hashlib.sha256(text.encode()).hexdigest(), lambda: _outline(parse(text, filename)))


def pruned(text: str, filename: str, skip) -> tuple[str, ast.Module]:
    """(``unparse(without(parse(text), skip))``, the outline of that tree); from the store when this
    text was pruned of ``skip`` before."""
    key = hashlib.sha256(text.encode()).hexdigest() + "\0" + "\0".join(sorted(skip))

    def compute():
        tree = without(parse(text, filename), skip)
        return unparse(tree), _outline(tree)

    return _remembered(key, compute)


def flush() -> None:
    """Write the store if answers were added since it was read (atomically; the stores of an earlier
    version of this module removed); nothing where the folder cannot be written."""
    if not _STORE["dirty"]:
        return
    if len(_STORE["answers"]) > _STORE_LIMIT:
        _STORE["answers"] = {k: v for k, v in _STORE["answers"].items() if k in _STORE["used"]}
    path = _store_path()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)
        with open(tmp, "wb") as fh:
            pickle.dump(_STORE["answers"], fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        for old in path.parent.glob(f"codetree-{sys.implementation.cache_tag}-*.pickle"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return
    _STORE["dirty"] = False
