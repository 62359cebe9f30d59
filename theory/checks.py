"""Argument checks shared by every public route: numbers are numbers, counts are integers.

A bad argument raises ``ValueError`` naming the parameter, the value and what is allowed.
``True`` is not the number 1 and ``'1e3'`` is not the number 1000 here: bools and strings are
rejected wherever a number is expected (numpy would silently convert both), and integers
beyond the float64 range (|x| > 1.8e308) are rejected instead of overflowing later.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_real_array", "check_integer", "check_nonnegative_real", "check_positive_real", "short_repr"]

_NUMERIC_KINDS = "iuf"   # numpy dtype kinds of signed/unsigned integers and floats


def short_repr(value) -> str:
    """repr(value), cut to 80 characters (messages stay short for large arrays)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_real_scalar(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def as_real_array(name: str, value, *, finite: bool = True) -> np.ndarray:
    """``value`` as a float64 array, or ValueError naming ``name``.

    Accepted: Python / numpy integers and floats and arrays of them. Rejected: bools, strings,
    complex numbers, other objects, integers past the float64 range, and (if ``finite``) NaN
    and infinities.
    """
    raw = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    ok = raw is not None and (raw.dtype.kind in _NUMERIC_KINDS or (
        raw.dtype.kind == "O" and all(_is_real_scalar(x) for x in raw.ravel())))
    if ok and raw.ndim and not isinstance(value, np.ndarray):   # a list may mix in bools
        ok = not any(isinstance(x, (bool, np.bool_))
                     for x in np.asarray(value, dtype=object).ravel())
    if not ok:
        raise ValueError(f"{name}={short_repr(value)} is not allowed: {name} must be a real number "
                         "or an array of real numbers (not a bool, string or complex)")
    try:
        arr = raw.astype(float)
    except OverflowError:
        raise ValueError(f"{name}={short_repr(value)} is not allowed: {name} exceeds the float64 "
                         "range (|x| <= 1.8e308)") from None
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}={short_repr(value)} is not allowed: {name} must be finite "
                         "(not NaN or infinite, within the float64 range)")
    return arr


def check_integer(name: str, value, minimum: int = 0) -> int:
    """``value`` as a Python int if it is an integer (not a bool) >= ``minimum``, else ValueError."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < minimum:
        raise ValueError(f"{name}={short_repr(value)} is not allowed: {name} must be an integer "
                         f">= {minimum}")
    return int(value)


def check_positive_real(name: str, value) -> float:
    """``value`` as a float if it is a finite real scalar > 0, else ValueError."""
    arr = as_real_array(name, value)
    if arr.ndim != 0 or not arr > 0:
        raise ValueError(f"{name}={short_repr(value)} is not allowed: {name} must be a finite real "
                         "number > 0")
    return float(arr)


def check_nonnegative_real(name: str, value) -> float:
    """``value`` as a float if it is a finite real scalar >= 0, else ValueError."""
    arr = as_real_array(name, value)
    if arr.ndim != 0 or not arr >= 0:
        raise ValueError(f"{name}={short_repr(value)} is not allowed: {name} must be a finite real number >= 0")
    return float(arr)
