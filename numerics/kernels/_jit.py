"""The one way the kernels are compiled: numba's ``njit`` with its on-disk cache.

``cache=True`` writes the machine code next to the module (``__pycache__``, or under
``NUMBA_CACHE_DIR``), so a kernel compiles once per machine and later processes load it in
milliseconds; compilation is lazy (at the first call of each kernel, never at import).
``error_model="numpy"``: a division by zero gives inf/nan as in NumPy instead of raising, so the
kernels report non-finite iterates themselves, as the reference routes do. No ``fastmath``: the
kernels evaluate the reference formulas operation by operation (IEEE-rounded +, -, *, /, sqrt), so
they agree with the NumPy routes to round-off (see ``docs/math/kernels.md``).
"""

from __future__ import annotations

__all__ = ["jit", "ENGINES", "check_engine"]

ENGINES = ("kernel", "numpy")


def jit(fn=None, *, inline=False):
    """``numba.njit(cache=True, nogil=True, error_model="numpy")`` of ``fn`` (numba is imported
    here, by the kernel modules, which the routes import only when they run a kernel).
    ``@jit(inline=True)``: numba inlines the function into its callers' IR (``inline="always"``), for
    small helpers that several kernels share inside their per-step loops."""
    import numba

    options = dict(cache=True, nogil=True, error_model="numpy", inline="always" if inline else "never")
    if fn is None:
        return numba.njit(**options)
    return numba.njit(**options)(fn)


def check_engine(engine) -> str:
    """``engine`` if it is one of ENGINES, else ValueError naming it."""
    if engine not in ENGINES:
        raise ValueError(f"engine={engine!r} is not allowed: use one of {ENGINES} "
                         "('kernel': compiled numba kernel, 'numpy': the NumPy reference route)")
    return engine
