"""Versions of the installed packages that can change the computed numbers (part of every cache key and
report, ``figures.cache``, ``figures.provenance``)."""

from __future__ import annotations

import functools
from importlib import metadata

__all__ = ["VERSIONED", "package_versions"]

VERSIONED = ("numpy", "scipy", "matplotlib", "mpmath", "sympy", "single-location-regression")


def package_versions() -> dict:
    """{package: installed version or None} for the packages of ``VERSIONED``, a new dict each call.

    Read once per process (``importlib.metadata`` costs ~10 ms a read, and a run computes dozens of cache
    keys): a process computes with the code it imported first, so those are the versions of its numbers."""
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> tuple:
    versions = []
    for package in VERSIONED:
        try:
            versions.append((package, metadata.version(package)))
        except metadata.PackageNotFoundError:
            versions.append((package, None))
    return tuple(versions)
