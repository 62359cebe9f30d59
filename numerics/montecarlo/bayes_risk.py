"""Bayes predictor and Bayes risk by Monte Carlo (docs/math/baselines.md#bayes-risk).

Given X, the location J has posterior p_l = P(J = l | X) proportional to
f_1(X_l) / f_0(X_l) = gamma^-d exp(-|X_l - s k*|^2 / (2 gamma^2) + |X_l|^2 / 2)   (uniform prior;
f_1 = N(s k*, gamma^2 I), f_0 = N(0, I), s = sqrt(d/2)), and <X_J, v*> is known for each candidate
J, so with w_l = <X_l, v*>

    E[Y | X] = sum_l p_l w_l,    Var(Y | X) = eps^2 + sum_l p_l (w_l - E[Y | X])^2,

and the Bayes risk is E[Var(Y | X)]. The log-weights are combined by log-sum-exp.

Reduction (exact in law at every d): the weights and Y involve a token only through
u = <X_l, k*>, w = <X_l, v*> and r = |X_l|^2 - u^2 - w^2; given J these are independent with
u ~ N(s, gamma^2), w ~ N(0, gamma^2), r ~ gamma^2 chi^2_{d-2} (informative token) or N(0, 1),
N(0, 1), chi^2_{d-2} (noise token), so each token costs three draws whatever d.

Reliability: the estimate is unbiased, but for large separation (d large, gamma^2 away from 1)
Var(Y | X) is dominated by rare sequences in which two tokens look alike; the sample then misses
them and both the mean and the stderr come out too small (measured in ``tests/test_bayes.py``).
Trust it where the relative stderr is small and it agrees with the quadrature sibling
``theory.bayes.bayes_risk_quad``.
"""

from __future__ import annotations

import numpy as np

from theory.bayes import scalar_problem_fields
from theory.checks import check_integer
from theory.parameters import Task

from .population_risk import Estimate, RunningMean
from .task import standard_normals

__all__ = ["sample_token_statistics", "posterior_weights", "conditional_variance",
           "bayes_predictor", "bayes_risk_mc"]


def _check_rng_n(n, rng, low=1):
    check_integer("n", n, low)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r} is not allowed: rng must be a numpy.random.Generator")


def sample_token_statistics(problem: Task, n: int, rng: np.random.Generator):
    """Draw (u, w, r, J) for n sequences in the reduced coordinates of the module docstring.

    u, w, r have shape (n, L); J (n,) is the 0-based informative location, uniform. Exact in law.
    """
    d, L, gamma, _ = scalar_problem_fields(problem)
    _check_rng_n(n, rng)
    J = rng.integers(0, L, size=n)
    informative = np.zeros((n, L), dtype=bool)
    informative[np.arange(n), J] = True
    sigma = np.where(informative, gamma, 1.0)
    u = sigma * standard_normals(rng, (n, L)) + np.sqrt(d / 2.0) * informative
    w = sigma * standard_normals(rng, (n, L))
    r = sigma**2 * rng.chisquare(d - 2, size=(n, L)) if d > 2 else np.zeros((n, L))
    return u, w, r, J


def posterior_weights(problem: Task, u, sqnorm):
    """p_l = P(J = l | X) from u_l = <X_l, k*> and sqnorm_l = |X_l|^2, arrays of shape (..., L).

    log p_l = -(sqnorm_l - 2 s u_l + s^2) / (2 gamma^2) + sqnorm_l / 2 + const, normalised by
    log-sum-exp over the last axis.
    """
    d, _, gamma, _ = scalar_problem_fields(problem)
    s = np.sqrt(d / 2.0)
    u, sqnorm = np.asarray(u, dtype=float), np.asarray(sqnorm, dtype=float)
    log_w = -(sqnorm - 2.0 * s * u + s * s) / (2.0 * gamma * gamma) + 0.5 * sqnorm
    log_w = log_w - np.max(log_w, axis=-1, keepdims=True)
    p = np.exp(log_w)
    return p / np.sum(p, axis=-1, keepdims=True)


def conditional_variance(p, w):
    """(E[<X_J, v*> | X], Var(<X_J, v*> | X)) = (sum p w, sum p (w - sum p w)^2), last axis summed."""
    mean = np.sum(p * w, axis=-1)
    return mean, np.sum(p * np.square(w - mean[..., None]), axis=-1)


def bayes_predictor(problem: Task, X, k_star, v_star):
    """The Bayes predictor on whole tokens: (E[Y | X], Var(Y | X)) for X of shape (..., L, d).

    k_star, v_star are the orthonormal task directions in R^d. Var includes eps^2.
    """
    d, L, _, eps = scalar_problem_fields(problem)
    X = np.asarray(X, dtype=float)
    if X.ndim < 2 or X.shape[-2:] != (L, d):
        raise ValueError(f"X has shape {X.shape}: it must have shape (..., L, d) = (..., {L}, {d})")
    u, w = X @ np.asarray(k_star, dtype=float), X @ np.asarray(v_star, dtype=float)
    mean, var = conditional_variance(posterior_weights(problem, u, np.sum(X * X, axis=-1)), w)
    return mean, var + eps * eps


def bayes_risk_mc(problem: Task, n: int, rng: np.random.Generator, chunk: int = 2**16) -> Estimate:
    """Bayes risk E[Var(Y | X)] by Monte Carlo over n sequences (docs/math/baselines.md#bayes-risk; module docstring).

    Uses d, L, gamma, eps of a scalar ``problem`` (a ``Task``; a ``Problem``'s lam is not used); needs d >= 2. Sequences are
    drawn in the reduced coordinates (cost independent of d), ``chunk`` at a time; the stderr is
    the sample standard deviation of Var(Y | X) over sqrt(n). See the module docstring for where
    it is reliable. Sibling: ``theory.bayes.bayes_risk_quad`` (quadrature).
    """
    _, _, _, eps = scalar_problem_fields(problem)
    _check_rng_n(n, rng, low=2)
    check_integer("chunk", chunk, 1)
    acc = RunningMean()
    while acc.n < n:
        m = min(int(chunk), n - acc.n)
        u, w, r, _ = sample_token_statistics(problem, m, rng)
        _, var = conditional_variance(posterior_weights(problem, u, u * u + w * w + r), w)
        acc.add(var)
    return acc.estimate(offset=eps * eps)
