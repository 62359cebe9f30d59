"""The noise covariance C(x) and the correction alpha D(x) of online SGD expanded about the saddle, for
the window SDE (docs/math/highdim.md#the-state-dependence-of-the-window).

The window SDE (``escape_window``) freezes the per-sample increment covariance at the saddle's C_0 and
linearises alpha D there. Both depend on the state through the informative token's mean s k*: its
projections s kappa, s theta enter the gates and the residual, so the derivatives of C and of the
scalars (E[N_k], E[N_v], E[M]) of D (``theory.highdim.noise_scalars``) are of order sqrt(d) (first) and
d (second), and in u = sqrt(d) x their change across the window is of order one. By the flow's two sign
symmetries, x -> (-kappa, -nu, -theta, -eta, rho) and x -> (kappa, nu, -theta, -eta, -rho), the first
order carries only the cross terms of rho with the other four overlaps; the diagonal blocks start at the
second order. So

    C(x) = C_0 + sum_i x_i C_i + (1/2) sum_ij x_i x_j C_ij + ...,   (order 1: the first two terms)

and the scalars of D likewise, D(x) assembled from them (``theory.highdim.drift_from_scalars``; at order 1
it is the saddle's linearisation, ``escape_window``'s). The derivatives are central differences of the
quadrature (``theory.highdim.gradient_moments``) with step h = _H_SCALED / sqrt(d): the truncation error
of a second difference is h^2 f'''' / 12, with f'''' ~ d^2 f (the scale 1/sqrt(d)), relative
_H_SCALED^2 / 12 ~ 1e-3; round-off 1e-13 |f| / h^2 <= 1e-7 |f| at d <= 10^5 (quadrature error,
docs/math/highdim.md#quadrature). 51 quadratures, one time.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from theory.highdim import drift_from_scalars, gradient_moments, noise_scalars

from .fluctuations import increment_covariance

__all__ = ["SaddleExpansion", "saddle_expansion", "EXPANSION_ORDERS"]

_H_SCALED = 0.1
EXPANSION_ORDERS = (1, 2)


@dataclasses.dataclass(frozen=True)
class SaddleExpansion:
    """Taylor coefficients at the saddle, to ``order``: of C (``cov``: C_0 (5, 5), C_i (5, 5, 5),
    C_ij (5, 5, 5, 5), derivative indices first) and of the scalars (E[N_k], E[N_v], E[M])
    (``scalars``: (3,), (5, 3), (5, 5, 3)); ``alpha``, ``step`` h."""

    order: int
    alpha: float
    step: float
    cov: tuple
    scalars: tuple

    def _evaluate(self, coefficients, X):
        f0, f1, f2 = coefficients
        out = f0 + np.tensordot(X, f1, axes=(1, 0))
        if self.order >= 2:
            out = out + 0.5 * np.einsum("ni,nj,ij...->n...", X, X, f2)
        return out

    def covariance(self, X) -> np.ndarray:
        """C at the rows of X (n, 5): (n, 5, 5)."""
        return self._evaluate(self.cov, np.atleast_2d(X))

    def correction(self, X) -> np.ndarray:
        """alpha D at the rows of X (n, 5): (n, 5)."""
        X = np.atleast_2d(X)
        return self.alpha * drift_from_scalars(self._evaluate(self.scalars, X), X.T).T


def _taylor(values, h):
    """(f_0, f_i, f_ij) from the values f(0), f(+-h e_i), f(+-h e_i +- h e_j) (central differences)."""
    f0 = values[()]
    f1 = np.stack([(values[(i, 1)] - values[(i, -1)]) / (2 * h) for i in range(5)])
    f2 = np.empty((5, 5) + f0.shape)
    for i, j in itertools.product(range(5), repeat=2):
        if i == j:
            f2[i, i] = (values[(i, 1)] - 2 * f0 + values[(i, -1)]) / h ** 2
        else:
            a, b = min(i, j), max(i, j)
            f2[i, j] = (values[(a, 1, b, 1)] - values[(a, 1, b, -1)] - values[(a, -1, b, 1)]
                        + values[(a, -1, b, -1)]) / (4 * h ** 2)
    return f0, f1, f2


def saddle_expansion(problem, *, alpha, batch_size=1, order=2) -> SaddleExpansion:
    """The expansion of the module docstring for the ``theory.Problem`` ``problem`` (scalar fields)
    at step ``alpha`` and minibatch ``batch_size``, to ``order`` 1 or 2 (the second-order coefficients
    are computed in both cases, used at order 2)."""
    if order not in EXPANSION_ORDERS:
        raise ValueError(f"order={order!r} is not allowed: choose among {EXPANSION_ORDERS}")
    h = _H_SCALED / np.sqrt(problem.d)
    keys = [()] + [(i, s) for i in range(5) for s in (1, -1)]
    keys += [(i, si, j, sj) for i, j in itertools.combinations(range(5), 2) for si in (1, -1) for sj in (1, -1)]
    cov, sca = {}, {}
    for key in keys:
        x = np.zeros(5)
        for i, sign in zip(key[::2], key[1::2]):
            x[i] += sign * h
        m = gradient_moments(problem, tuple(x), check=False)
        cov[key], sca[key] = increment_covariance(m, tuple(x)), noise_scalars(m, batch_size)
    return SaddleExpansion(order, float(alpha), float(h), _taylor(cov, h), _taylor(sca, h))
