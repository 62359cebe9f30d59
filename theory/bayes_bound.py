"""An upper bound on the Bayes risk's excess over eps^2, from the Bhattacharyya coefficient.

Derivation: ``docs/math/baselines.md#an-upper-bound-on-the-bayes-excess``. With B = Bayes risk - eps^2
(docs/math/baselines.md#bayes-risk; ``theory.bayes``), f_1 = N(s k*, gamma^2 I_d), f_0 = N(0, I_d) and s^2 = d / 2,

    0 <= B <= 4 (L - 1) gamma^2 / (1 + gamma^2) * BC^2,
    log BC^2 = -d [1 / (4 (1 + gamma^2)) + log((1 + gamma^2) / (2 gamma))],

BC = int sqrt(f_0 f_1) the Bhattacharyya coefficient of the two token laws. The bracket is
>= 1/8 (its minimum, at gamma = 1), so B <= 2 (L - 1) e^{-d/8} for every gamma: the excess is
below float64 resolution of eps^2 ~ 1 once d >~ 400, and far sooner when gamma is far from 1.
Exact as a bound at every d >= 2, L, gamma > 0 (no asymptotics); within a factor ~10-20 of B
where both were computed (tests/test_bayes_limits.py).
"""

from __future__ import annotations

import math

__all__ = ["bayes_excess_bound", "log_bhattacharyya_squared"]


def log_bhattacharyya_squared(d: float, gamma: float) -> float:
    """log BC^2 = -d [1 / (4 (1 + gamma^2)) + log((1 + gamma^2) / (2 gamma))] (module docstring).

    Written without overflow: log((1 + gamma^2) / (2 gamma)) = log(gamma + 1/gamma) - log 2.
    """
    return -d * (0.25 / (1.0 + gamma * gamma) + math.log(gamma + 1.0 / gamma) - math.log(2.0))


def bayes_excess_bound(d: float, L: float, gamma: float) -> float:
    """The upper bound 4 (L-1) gamma^2 / (1 + gamma^2) BC^2 on B = Bayes risk - eps^2 (module
    docstring); 0 when it underflows."""
    log_bc2 = log_bhattacharyya_squared(d, gamma)
    if log_bc2 < -745.0:           # exp underflows to 0
        return 0.0
    ratio = gamma / (gamma + 1.0 / gamma)   # gamma^2 / (1 + gamma^2), no overflow or underflow to 0/0
    return 4.0 * (L - 1.0) * ratio * math.exp(log_bc2)
