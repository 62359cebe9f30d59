"""The mean one-step increment of online SGD from a fixed state, by the exact reduced step
(docs/math/highdim.md#the-effective-ode).

From a fixed state x, n_runs independent single steps of the reduced simulator's step
(``numerics.sgd.reduced``, module docstring steps 2-4: tokens in the frame F, targets, and the
Bartlett variables of the perpendicular pair, drawn here for all runs at once from one
Generator) give (x_1 - x)/alpha, whose mean is F(x) + alpha D(x) + O(alpha^2 E|g|^3)
(``theory.highdim.effective_drift``, its sibling).
"""

from __future__ import annotations

import numpy as np

from theory.checks import check_integer
from theory.parameters import OVERLAP_NAMES, Overlaps

from ..sgd.frame import cholesky_coordinates
from ..sgd.reduced import sgd_step
from .effective_flow import check_highdim_settings
from .moments_mc import MomentsEstimate

__all__ = ["one_step_increment_mc"]

_CHUNK = 50_000


def _one_step(KV, problem, alpha, B, rng):
    R, d, L, gamma = KV.shape[0], int(problem.d), int(problem.L), float(problem.gamma)
    X = rng.standard_normal((R, 4, B * L))
    X[..., ::L] *= gamma
    X[:, 0, ::L] += np.sqrt(d / 2.0)
    Y = X[:, 1, ::L] + float(problem.eps) * rng.standard_normal((R, B))
    a11 = np.sqrt(rng.chisquare(d - 4, R)) if d > 4 else np.zeros(R)
    n21 = rng.standard_normal(R) if d > 4 else np.zeros(R)
    a22 = np.sqrt(rng.chisquare(d - 5, R)) if d > 5 else np.zeros(R)
    scale2 = np.ones(B * L)
    scale2[::L] = gamma * gamma
    new = sgd_step(KV, X, Y, float(problem.lam), alpha, 2.0 / B, B, scale2, -alpha * a11,
                    -alpha * n21, -alpha * a22, np.zeros((R, 2, 6)))
    return np.stack([new[:, 0, 0], new[:, 1, 1], new[:, 1, 0], new[:, 0, 1],
                     np.sum(new[:, 0] * new[:, 1], axis=-1)], axis=1)


def one_step_increment_mc(problem, overlaps, *, c, batch_size, n_runs: int, rng) -> MomentsEstimate:
    """Mean and standard error of (x_1 - x_0) / alpha, alpha = c/d, over ``n_runs`` independent
    single SGD steps from the scalar state ``overlaps`` (5-tuple; components as ``OVERLAP_NAMES``);
    ``problem.lam`` a number. Cost ~ n_runs B L, independent of d."""
    d, _, _, _, alpha = check_highdim_settings(problem, c, batch_size)
    n_runs = check_integer("n_runs", n_runs, minimum=2)
    x0 = np.array([float(x) for x in overlaps])
    KV0 = cholesky_coordinates(Overlaps(**{n: np.full(1, x) for n, x in zip(OVERLAP_NAMES, x0)}))  # checked once
    total, total2 = np.zeros(5), np.zeros(5)
    for start in range(0, n_runs, _CHUNK):
        m = min(_CHUNK, n_runs - start)
        KV = np.repeat(KV0, m, axis=0)
        inc = (_one_step(KV, problem, alpha, batch_size, rng) - x0) / alpha
        total += inc.sum(axis=0)
        total2 += (inc * inc).sum(axis=0)
    mean = total / n_runs
    var = np.maximum(total2 / n_runs - mean * mean, 0.0) * n_runs / (n_runs - 1)
    return MomentsEstimate(mean=mean, stderr=np.sqrt(var / n_runs), n=n_runs)
