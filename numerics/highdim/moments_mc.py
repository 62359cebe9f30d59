"""Monte Carlo of the per-sample gradient moments with explicit d-dimensional vectors
(docs/math/highdim.md#second-moments-of-the-per-sample-gradient).

Sibling of ``theory.highdim.gradient_moments`` (quadrature): the same twelve numbers
(P_k G_k and P_v G_v in the frame (k*, v*, f3, f4), S_kk, S_vv, S_kv and the risk E r^2) as
sample means over n fresh samples of the task, with their standard errors. The samples and the
per-sample gradients come from ``numerics.sgd.full`` (batch size 1), nothing of the quadrature's
frame reduction is used: k*, v*, f3, f4 are the first four axes of R^d and the d - 4 other
coordinates of every token are sampled.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.checks import check_integer
from theory.highdim import frame_coordinates, problem_scalars

from ..sgd.full import minibatch_loss_grad

__all__ = ["MomentsEstimate", "gradient_moments_mc"]

_CHUNK = 4096


@dataclasses.dataclass(frozen=True)
class MomentsEstimate:
    """Sample means ``mean`` (12,) in the order of ``GradientMoments.as_vector``, their
    standard errors ``stderr`` and the sample size ``n``."""

    mean: np.ndarray
    stderr: np.ndarray
    n: int


def _per_sample(X, Y, k, v, lam):
    n = X.shape[0]
    r2, gk, gv = minibatch_loss_grad(X[:, None], Y[:, None], np.broadcast_to(k, (n, k.size)),
                                     np.broadcast_to(v, (n, v.size)), lam)
    pk = gk - (gk @ k)[:, None] * k
    pv = gv - (gv @ v)[:, None] * v
    return np.column_stack([pk[:, :4], pv[:, :4], np.sum(pk * pk, axis=1), np.sum(pv * pv, axis=1),
                            np.sum(pk * pv, axis=1), r2])


def gradient_moments_mc(problem, overlaps, *, n: int, rng) -> MomentsEstimate:
    """Monte Carlo estimate of the per-sample gradient moments (module docstring) of the
    ``theory.Problem`` ``problem`` (scalar fields, d >= 4) at ``overlaps``; cost ~ n L d."""
    d, L, gamma, eps, lam = problem_scalars(problem)
    n = check_integer("n", n, minimum=2)
    k4, v4 = frame_coordinates(*(float(x) for x in overlaps))
    k, v = np.zeros(d), np.zeros(d)
    k[:4], v[:4] = k4, v4
    total, total2 = np.zeros(12), np.zeros(12)
    for start in range(0, n, _CHUNK):
        m = min(_CHUNK, n - start)
        X = rng.standard_normal((m, L, d))
        X[:, 0] *= gamma
        X[:, 0, 0] += np.sqrt(d / 2.0)
        Y = X[:, 0, 1] + eps * rng.standard_normal(m)
        values = _per_sample(X, Y, k, v, lam)
        total += values.sum(axis=0)
        total2 += (values * values).sum(axis=0)
    mean = total / n
    var = np.maximum(total2 / n - mean * mean, 0.0) * n / (n - 1)
    return MomentsEstimate(mean=mean, stderr=np.sqrt(var / n), n=n)
