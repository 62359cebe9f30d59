"""Population risk of any member of the family by Monte Carlo (docs/math/nonlinearities.md#monte-carlo).

The tokens are drawn by the toolkit's span-reduced sampler (``numerics.sample_sequences``
with (k, v, k*, v*) from ``numerics.vectors_from_overlaps`` in R^4): exact in law for
every member, since each sees X only through <X_l, k> and <X_l, v> and Y only through <X_J, v*>
(the argument of ``numerics.population_risk_mc``). The loss (Y - T_sigma(X))^2 is averaged over n
sequences with ``RunningMean``. Siblings: ``theory.nonlinearity.population_risk_sigma_quad``.
"""

from __future__ import annotations

import numpy as np

from numerics import Estimate, sample_sequences, vectors_from_overlaps
from numerics.montecarlo.population_risk import RunningMean
from theory.nonlinearity import nonlinearity
from theory.parameters import Overlaps, Problem

__all__ = ["population_risk_sigma_mc", "predictor_sigma"]

_MAX_BATCH_FLOATS = 2**22   # token coordinates per batch (32 MiB), as numerics.population_risk_mc


def predictor_sigma(X, k, v, lam, sigma="erf"):
    """T_sigma(X) from tokens X (..., L, r) and vectors k, v in R^r (no validation)."""
    return nonlinearity(sigma).predict(lam, X @ k, X @ v)


def population_risk_sigma_mc(problem: Problem, overlaps: Overlaps, sigma="erf", *, n: int,
                             rng: np.random.Generator, J=None, chunk: int = 2**16) -> Estimate:
    """R = E[(Y - T_sigma(X))^2] by Monte Carlo with n sequences; scalar fields (module docstring).

    Unbiased at every finite d; stderr = sample standard deviation of the loss / sqrt(n).
    J = None draws the informative location uniformly, an int fixes it (0-based).
    """
    member = nonlinearity(sigma)
    for name, value in (("n", n), ("chunk", chunk)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 2 - (name == "chunk"):
            raise ValueError(f"{name}={value!r} is not allowed: {name} must be an int >= {2 - (name == 'chunk')}")
    fields = dict(d=problem.d, L=problem.L, gamma=problem.gamma, eps=problem.eps, lam=problem.lam,
                  **overlaps.as_dict())
    for name, value in fields.items():
        if np.ndim(value) != 0:
            raise ValueError(f"{name}={value!r} is not allowed: the Monte Carlo route takes scalar fields only")
    d, L = int(problem.d), int(problem.L)
    gamma, eps, lam = float(problem.gamma), float(problem.eps), float(problem.lam)
    k, v, k_star, v_star = vectors_from_overlaps(overlaps, 4)
    s = np.sqrt(d / 2.0)
    batch = max(1, min(int(chunk), _MAX_BATCH_FLOATS // (4 * L)))
    acc, done = RunningMean(), 0
    while done < n:
        m = min(batch, n - done)
        X, Y, _ = sample_sequences(s, gamma, eps, L, k_star, v_star, m, rng, J)
        acc.add(np.square(Y - member.predict(lam, X @ k, X @ v)))
        done += m
    return acc.estimate()
