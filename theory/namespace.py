"""Lazy package namespaces: a package re-exports the public names of its modules, and each module is
imported when one of its names is first used (PEP 562), so that importing the package, or one module
of it (``import numerics.pool``), loads only that module and what it imports.

``from package import name``, ``package.name``, ``dir(package)``, ``package.__all__`` and
``from package import *`` behave as with eager ``from .module import name`` re-exports.
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["lazy_namespace"]


class _LazyNamespace(types.ModuleType):
    """A package whose exported names resolve on first access (``_exports``: name -> module)."""

    def __getattr__(self, name: str):
        exports = self.__dict__.get("_exports", {})
        if name not in exports:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name], self.__name__), name)
        setattr(self, name, value)
        return value

    def __dir__(self):
        return sorted(set(self.__dict__) | set(self.__dict__.get("_exports", {})))

    def __setattr__(self, name: str, value) -> None:
        # The import system binds a module on its package once loaded; where an exported name is
        # also the name of the module defining it (theory.zeta), the name keeps the exported object,
        # as an eager ``from .zeta import zeta`` in the package would.
        if isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}":
            value = getattr(value, name, value) if name in self.__dict__.get("_exports", {}) else value
        super().__setattr__(name, value)


def lazy_namespace(package: str, modules: dict[str, tuple[str, ...]]) -> None:
    """Make the package ``package`` (its ``__init__`` passes ``__name__``) export ``modules``:
    relative module name (``".zeta"``) -> the names it exports, imported on first access.
    Sets ``__all__`` to the names in the order given."""
    exports = {name: module for module, names in modules.items() for name in names}
    namespace = sys.modules[package]
    namespace.__class__ = _LazyNamespace
    namespace._exports = exports
    namespace.__all__ = list(exports)
