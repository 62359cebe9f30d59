"""Elementary special functions of the risk: derivatives of erf and the gate correlation.

docs/math/risk.md#gaussian-erf-identities: erf'(x) = (2/sqrt(pi)) exp(-x^2), erf''(x) = -2x erf'(x),
erf'''(x) = (4x^2 - 2) erf'(x), and C_lambda = E[erf(lambda Z) Z] = 2 lambda / sqrt(pi (1 + 2 lambda^2)).
All functions are numpy ufunc-like: they broadcast and return float64 arrays (or scalars).
"""

from __future__ import annotations

import numpy as np

__all__ = ["erf_prime", "erf_second", "erf_third", "erf_derivatives", "gate_correlation"]

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
# exp(-x^2) is exactly 0 in float64 for |x| > 27.3 (below the smallest subnormal), so clipping x
# to [-40, 40] changes no value and keeps x^2 (and x times it) from overflowing for huge x.
_X_CLIP = 40.0


def _clipped(x):
    # np.minimum/np.maximum rather than np.clip: the same values (NaN kept), without np.clip's
    # Python-level dispatch, which dominated the gradient of the closed form on small arrays
    return np.minimum(np.maximum(np.asarray(x, dtype=float), -_X_CLIP), _X_CLIP)


def erf_prime(x):
    """erf'(x) = (2/sqrt(pi)) exp(-x^2)."""
    x = _clipped(x)
    return _TWO_OVER_SQRT_PI * np.exp(-x * x)


def _second(x, p):
    """erf''(x) = -2 x erf'(x), from x (clipped) and p = erf'(x)."""
    return -2.0 * x * p


def _third(x, p):
    """erf'''(x) = (4 x^2 - 2) erf'(x), from x (clipped) and p = erf'(x)."""
    return (4.0 * x * x - 2.0) * p


def erf_second(x):
    """erf''(x) = -2 x erf'(x)."""
    x = _clipped(x)
    return _second(x, erf_prime(x))


def erf_third(x):
    """erf'''(x) = (4 x^2 - 2) erf'(x)."""
    x = _clipped(x)
    return _third(x, erf_prime(x))


def erf_derivatives(x):
    """The first three derivatives of erf at x from one exp: the values of ``erf_prime``, ``erf_second``
    and ``erf_third``, operation for operation (where the three are needed at one x)."""
    x = _clipped(x)
    p = erf_prime(x)
    return p, _second(x, p), _third(x, p)


def gate_correlation(lam):
    """C_lambda = E[erf(lambda Z) Z] = 2 lambda / sqrt(pi (1 + 2 lambda^2)), Z ~ N(0, 1) (docs/math/risk.md#gaussian-erf-identities).

    By Stein's lemma, E[erf(lambda Z) Z] = lambda E[erf'(lambda Z)] = lambda erf'-average,
    and E[erf'(lambda Z)] = (2/sqrt(pi)) / sqrt(1 + 2 lambda^2).
    """
    lam = np.asarray(lam, dtype=float)
    # Two algebraically equal forms: the first for |lam| <= 1, the second where lam^2 may overflow.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        small = 2.0 * lam / np.sqrt(np.pi * (1.0 + 2.0 * lam * lam))
        large = 2.0 * np.sign(lam) / np.sqrt(np.pi * (1.0 / (lam * lam) + 2.0))
    out = np.where(np.abs(lam) <= 1.0, small, large)
    return out[()] if out.ndim == 0 else out
