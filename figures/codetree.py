"""Parsed Python source shared by every code closure of a process (``figures.codehash``): each text
parsed once (``parse``), its ``import`` statements at any depth (``import_nodes``), the tree without
some functions and the imports only they used (``without``), and its text again (``unparse``).

Every tree returned is shared and never modified: ``without`` builds new statement lists and copies
only the statements that held a function it leaves out.
"""

from __future__ import annotations

import ast
import copy
import functools

__all__ = ["import_nodes", "parse", "unparse", "without"]


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
