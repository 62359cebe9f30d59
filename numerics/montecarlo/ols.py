"""Ordinary least squares on sampled sequences: the linear baseline by Monte Carlo (docs/math/baselines.md#best-linear-predictor).

The flattened sequence x = vec(X) in R^{L d} is regressed on Y (no intercept: E[Y] = 0 and the
token means lie along k* ⟂ v*, see ``theory.baselines``) over n_train sequences from
``numerics.montecarlo.task.sample_task``; the normal equations are accumulated in chunks (memory
O((L d)^2), time O(n (L d)^2)). The fitted predictor is then scored on n_test fresh sequences.

Estimation excess. The test risk of the fitted coefficients exceeds the best linear risk by
(beta_hat - beta)^T Sigma (beta_hat - beta), whose expectation is tr(Sigma^-1 S) / n_train
+ O((L d / n_train)^2) with S = E[e^2 x x^T], e = Y - <beta, x> (the sandwich formula; the model
is misspecified and heteroscedastic, so sigma^2 p / n does not apply). ``excess_correction``
estimates it with the fitted residuals on the first test chunk (at least 2^21 / (L d) sequences);
``corrected`` subtracts it. Its own error is of relative order sqrt(L d / chunk) + L d / n_train,
negligible next to the stderr when the correction itself is a fraction of it. The excess of the
fitted coefficients scatters around its expectation: to first order beta_hat - beta is normal with
covariance Sigma^-1 S Sigma^-1 / n_train, so the excess has standard deviation
``excess_sd`` = sqrt(2 tr((Sigma^-1 S)^2)) / n_train (docs/math/baselines.md#ols-sample-sizes), which
``corrected`` adds to the stderr of the test mean. Sibling: ``theory.baselines.linear_risk`` (paper Prop 3, closed form).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.checks import check_integer
from theory.parameters import Task

from .population_risk import Estimate, RunningMean
from .task import sample_task

__all__ = ["OLSResult", "ols_fit", "ols_risk_mc"]

# Sequences per chunk are chosen so that a chunk holds at most this many token coordinates.
_CHUNK_FLOATS = 2**21


@dataclasses.dataclass(frozen=True)
class OLSResult:
    """Fitted OLS coefficients (L, d), their test risk and the first-order estimation excess."""

    coef: np.ndarray
    test_risk: Estimate
    excess_correction: float
    n_train: int
    excess_sd: float = 0.0

    @property
    def corrected(self) -> Estimate:
        """Test risk minus the expected estimation excess: an estimate of the best linear risk. Its
        stderr combines the test sample's and the spread ``excess_sd`` of the excess of these
        particular coefficients around its expectation (independent: training vs test samples)."""
        t = self.test_risk
        return Estimate(mean=t.mean - self.excess_correction, stderr=float(np.hypot(t.stderr, self.excess_sd)), n=t.n)


def ols_fit(X, Y):
    """Least-squares coefficients of Y on the flattened X (X (n, L, d), Y (n,)), shape (L, d)."""
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    n, L, d = X.shape
    coef, *_ = np.linalg.lstsq(X.reshape(n, L * d), Y, rcond=None)
    return coef.reshape(L, d)


def _chunks(n, size):
    for start in range(0, n, size):
        yield min(size, n - start)


def ols_risk_mc(problem: Task, k_star, v_star, n_train: int, n_test: int,
                rng: np.random.Generator, J=None) -> OLSResult:
    """Fit OLS on n_train sequences and score it on n_test fresh ones (module docstring).

    ``problem`` is a scalar ``Task`` (a ``Problem``'s lam is not used); k_star, v_star are orthonormal in R^d; J = None draws
    the location uniformly (the linear risk of paper Prop 3), an int fixes it (risk eps^2).
    Needs n_train > L d. The stderr is that of the test-sample mean of the squared error given the
    fitted coefficients.
    """
    L, d = int(problem.L), int(problem.d)
    p = L * d
    for name, value, low in (("n_train", n_train, p + 1), ("n_test", n_test, 2)):
        check_integer(name, value, low)   # n_train > L d: the least-squares fit is determined
    size = max(1, _CHUNK_FLOATS // p)
    gram, moment = np.zeros((p, p)), np.zeros(p)
    for m in _chunks(n_train, size):
        X, Y, _ = sample_task(problem, k_star, v_star, m, rng, J)
        x = X.reshape(m, p)
        gram += x.T @ x
        moment += x.T @ Y
    coef = np.linalg.solve(gram, moment)
    sigma = gram / n_train
    sandwich, n_sandwich = np.zeros((p, p)), 0
    acc = RunningMean()
    for m in _chunks(n_test, size):
        X, Y, _ = sample_task(problem, k_star, v_star, m, rng, J)
        x = X.reshape(m, p)
        loss = np.square(Y - x @ coef)
        if n_sandwich == 0:  # the first chunk (>= 2^21 / (L d) sequences) suffices for a correction
            sandwich, n_sandwich = (x * loss[:, None]).T @ x, m
        acc.add(loss)
    a = np.linalg.solve(sigma, sandwich / n_sandwich)   # Sigma^-1 S
    test = acc.estimate()
    return OLSResult(coef=coef.reshape(L, d), test_risk=test, excess_correction=float(np.trace(a)) / n_train,
                     n_train=int(n_train), excess_sd=float(np.sqrt(2.0 * np.sum(a * a.T))) / n_train)
