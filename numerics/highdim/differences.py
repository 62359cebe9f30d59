"""The central-difference Jacobian that the fixed points (``aligned_fixed_point``, ``limit_fixed_point``) and the
end of the branch (``saddle_jacobian_on_m``) take of a drift evaluated point by point."""

from __future__ import annotations

import numpy as np

__all__ = ["central_jacobian"]


def central_jacobian(f, x, steps) -> np.ndarray:
    """J[:, i] = (f(x + h_i e_i) - f(x - h_i e_i)) / (2 h_i) for f: R^n -> R^m at x; ``steps``: h, one for every
    coordinate or one per coordinate. Truncation O(h^2) (O(h^3) terms vanish where f is odd about x), round-off
    (the noise of f) / h: each caller says why its step suits its f."""
    x = np.asarray(x, dtype=float)
    h = np.broadcast_to(np.asarray(steps, dtype=float), x.shape)
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h[i]
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h[i]))
    return np.array(columns).T
