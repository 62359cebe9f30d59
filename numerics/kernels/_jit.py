"""The one way the kernels are compiled: numba's ``njit`` with its on-disk cache.

``cache=True`` writes the machine code to disk, so a kernel compiles once per machine and later
processes load it in milliseconds; compilation is lazy (at the first call of each kernel, never at
import). numba keys a cached kernel on its own file's timestamp only, and a kernel compiles into
itself the helpers it calls from other files (``sfc64``, ``sgd_plane``, ``erf_poly``): after an edit of
a helper, numba would load the old machine code. So the cache lives in a folder named by a digest of
every kernel module's source (``kernel_cache_dir``: ``__pycache__/numba-<digest>`` next to the modules,
or under ``NUMBA_CACHE_DIR`` when set): any edit of any kernel module starts a fresh cache.
``error_model="numpy"``: a division by zero gives inf/nan as in NumPy instead of raising, so the
kernels report non-finite iterates themselves, as the reference routes do. No ``fastmath``: the
kernels evaluate the reference formulas operation by operation (IEEE-rounded +, -, *, /, sqrt), so
they agree with the NumPy routes to round-off (see ``docs/math/kernels.md``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import pathlib
import shutil

__all__ = ["jit", "ENGINES", "check_engine", "source_digest", "kernel_cache_dir"]

ENGINES = ("kernel", "numpy")
_HERE = pathlib.Path(__file__).resolve().parent
_PREFIX = "numba-"


def source_digest(paths) -> str:
    """16 hex digits of SHA-256 over the names and bytes of ``paths`` (in sorted order)."""
    digest = hashlib.sha256()
    for path in sorted(pathlib.Path(p) for p in paths):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def kernel_cache_dir(base=None, sources=None) -> pathlib.Path:
    """The folder of the kernels' compiled code: ``<base>/numba-<source_digest(sources)>``;
    ``base``: ``NUMBA_CACHE_DIR`` when set, else the kernels' ``__pycache__``; ``sources``: every
    module of this package."""
    if base is None:
        base = os.environ.get("NUMBA_CACHE_DIR") or _HERE / "__pycache__"
    return pathlib.Path(base) / (_PREFIX + source_digest(sources if sources is not None else _HERE.glob("*.py")))


@functools.lru_cache(maxsize=1)
def _use_kernel_cache_dir(numba) -> None:
    """Point numba's cache at ``kernel_cache_dir()`` (once per process); in the kernels' own
    ``__pycache__``, remove the folders of earlier sources (their code is never loaded again). Where
    the folder cannot be written, numba keeps its own choice."""
    folder = kernel_cache_dir()
    try:
        if not folder.is_dir() and folder.parent == _HERE / "__pycache__":
            for old in folder.parent.glob(_PREFIX + "*"):
                shutil.rmtree(old, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    if os.access(folder, os.W_OK):
        numba.config.CACHE_DIR = str(folder)


def jit(fn=None, *, inline=False, refcounts=True):
    """``numba.njit(cache=True, nogil=True, error_model="numpy")`` of ``fn`` (numba is imported
    here, by the kernel modules, which the routes import only when they run a kernel).
    ``@jit(inline=True)``: numba inlines the function into its callers' IR (``inline="always"``), for
    small helpers that several kernels share inside their per-step loops.
    ``@jit(refcounts=False)``: compiled without numba's reference counting (its ``_nrt`` option off), for
    per-step loops that receive every array from a caller holding it: with counting, each array or row
    view an inlined helper receives costs an atomic increment and decrement and two calls, which its
    pruning pass leaves in loops; without, such a function cannot allocate (``np.empty``, an array
    assignment that may copy: numba refuses to compile it) and must not return an array it made."""
    import numba

    _use_kernel_cache_dir(numba)
    options = dict(cache=True, nogil=True, error_model="numpy", inline="always" if inline else "never")
    if not refcounts:
        options["_nrt"] = False
    if fn is None:
        return numba.njit(**options)
    return numba.njit(**options)(fn)


def check_engine(engine) -> str:
    """``engine`` if it is one of ENGINES, else ValueError naming it."""
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is not allowed: use one of {ENGINES} "
                         "('kernel': compiled numba kernel, 'numpy': the NumPy reference route)")
    return engine
