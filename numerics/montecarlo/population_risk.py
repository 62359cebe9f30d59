"""Population risk by Monte Carlo over samples of the task (docs/math/task.md#the-task).

R = E[(Y - T(X))^2] is estimated by the sample mean of the loss (Y - T(X))^2 over n i.i.d.
sequences, with its standard error. Default route: exact in law in the span of (k, v, k*, v*):
in an orthonormal basis of R^d whose first r vectors span k, v, k*, v*, the token coordinates
are independent Gaussians and the other d - r coordinates enter neither T nor Y, so only the
first coordinates need be drawn; the law of the projections is the same in any frame holding
vectors with the same Gram matrix, so 4 coordinates per token are drawn for every d (cost
independent of d; the scale s = sqrt(d/2) keeps the true d). ``full_dim=True`` draws whole
d-dimensional tokens (to check the reduction).
Siblings: ``theory.risk.population_risk`` (closed form) and ``theory.risk_quad.population_risk_quad``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.checks import check_integer
from theory.parameters import OVERLAP_NAMES, Overlaps, Problem, check_realisable

from .geometry import vectors_from_overlaps
from ..kernels import check_engine
from .task import (unit_vector, attention_predictor, sample_sequences, sample_task, sequence_draws,
                   sequence_locations)

__all__ = ["Estimate", "population_risk_mc", "risk_mc_from_vectors"]

# Upper bound on the number of token coordinates held in memory per batch (32 MiB of float64).
_MAX_BATCH_FLOATS = 2**22


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A Monte-Carlo estimate: sample mean, its standard error sqrt(var / n), sample size."""

    mean: float
    stderr: float
    n: int

    def z(self, reference) -> float:
        """z-score (mean - reference) / stderr of the estimate against a reference value."""
        return (self.mean - float(reference)) / self.stderr


class RunningMean:
    """Sample mean and variance of a stream of batches, in bounded memory: the batch summaries
    (n, mean, M2 = sum of squared deviations) are merged with Chan et al.'s (1979) stable update."""

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, x) -> None:
        x = np.asarray(x, dtype=float).ravel()
        m = x.size
        if m == 0:
            return
        batch_mean = float(np.mean(x))
        batch_m2 = float(np.sum(np.square(x - batch_mean)))
        total = self.n + m
        delta = batch_mean - self.mean
        self.m2 += batch_m2 + delta * delta * (self.n * m / total)
        self.mean += delta * (m / total)
        self.n = total

    def estimate(self, offset: float = 0.0) -> Estimate:
        """``Estimate`` of offset + the mean; stderr = sqrt(sample variance / n) (needs n >= 2)."""
        if self.n < 2:
            raise ValueError(f"n={self.n} is not allowed: a standard error needs at least 2 samples")
        return Estimate(mean=offset + self.mean, stderr=float(np.sqrt(self.m2 / (self.n - 1) / self.n)),
                        n=self.n)


def _check_run(n, chunk):
    check_integer("n", n, 2)
    check_integer("chunk", chunk, 1)


def _kernel_losses(s, gamma, eps, L, lam, k, v, k_star, v_star, m, rng, J):
    """The m losses of one batch by the compiled kernel (same draws as ``sample_sequences``; on an SFC64
    generator the kernel draws the normals itself from its state, ``numerics.kernels.sfc64``)."""
    from ..kernels.montecarlo_step import span_risk_kernel
    from ..kernels.sfc64 import on_sfc64_state

    r = k_star.size
    k, v = unit_vector("k", k, r), unit_vector("v", v, r)
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"lam={lam!r} is not allowed: lam must be a finite scalar > 0")
    loss = np.empty(m)
    kernel = lambda J, Z, xi, state: span_risk_kernel(J, Z, xi, eps, s, gamma, lam, k, v, k_star, v_star, loss, state)
    if isinstance(rng, np.random.Generator) and isinstance(rng.bit_generator, np.random.SFC64):
        J = sequence_locations(L, k_star, v_star, m, rng, J)
        on_sfc64_state(rng, lambda state: kernel(J, np.empty((0, L, 0)), np.empty(0), state))
    else:
        J, Z, xi = sequence_draws(eps, L, k_star, v_star, m, rng, J)
        kernel(J, Z, np.empty(0) if xi is None else xi, np.empty(0, dtype=np.uint64))
    return loss


def risk_mc_from_vectors(problem: Problem, k, v, k_star, v_star, n: int, rng: np.random.Generator,
                         J=None, chunk: int = 2**16, engine: str = "kernel") -> Estimate:
    """Monte-Carlo risk for explicit unit vectors given in coordinates of an orthonormal basis.

    The vectors may have r < d coordinates (the span reduction of the module docstring; drawn
    by ``sample_sequences``) or r = d (whole tokens, drawn by ``sample_task``). Sequences are
    drawn in batches of at most ``chunk``, fewer when L r is large (at most 2**22 token
    coordinates, 32 MiB, per batch); the batches are merged by ``RunningMean``. J as in ``sample_task``.
    ``engine``: "kernel" (the losses by the compiled ``numerics.kernels.span_risk_kernel`` from the
    same random numbers) or "numpy" (the reference route); equal to round-off.
    """
    _check_run(n, chunk)
    check_engine(engine)
    for name in ("d", "L", "gamma", "eps", "lam"):
        if np.ndim(getattr(problem, name)) != 0:
            raise ValueError(f"problem.{name}={getattr(problem, name)!r} is not allowed: the Monte "
                             "Carlo route takes scalar fields only")
    s = np.sqrt(float(problem.d) / 2.0)
    L, gamma, eps, lam = int(problem.L), float(problem.gamma), float(problem.eps), float(problem.lam)
    k_star, v_star = np.asarray(k_star, dtype=float), np.asarray(v_star, dtype=float)
    full = k_star.size == int(problem.d)
    batch = max(1, min(int(chunk), _MAX_BATCH_FLOATS // (L * k_star.size)))
    acc = RunningMean()
    done = 0
    while done < n:
        m = min(batch, n - done)
        if engine == "kernel":
            loss = _kernel_losses(s, gamma, eps, L, lam, k, v, k_star, v_star, m, rng, J)
        elif full:
            X, Y, _ = sample_task(problem, k_star, v_star, m, rng, J)
            loss = np.square(Y - attention_predictor(X, k, v, lam))
        else:
            X, Y, _ = sample_sequences(s, gamma, eps, L, k_star, v_star, m, rng, J)
            loss = np.square(Y - attention_predictor(X, k, v, lam))
        acc.add(loss)
        done += m
    return acc.estimate()


def population_risk_mc(problem: Problem, overlaps: Overlaps, n: int, rng: np.random.Generator,
                       J=None, chunk: int = 2**16, full_dim: bool = False,
                       engine: str = "kernel") -> Estimate:
    """Population risk R = E[(Y - T(X))^2] by Monte Carlo with n sequences (docs/math/task.md#the-task).

    Scalar ``problem`` and ``overlaps``. The vectors come from ``vectors_from_overlaps``: in
    R^4 by default (exact-in-law span reduction, module docstring), in R^d with a random
    frame drawn from ``rng`` when ``full_dim`` (memory and time grow with d). J = None draws the
    informative location uniformly, an int fixes it (0-based). Unbiased at every finite d; the
    stderr is the sample standard deviation of the loss over sqrt(n).
    Siblings: ``population_risk`` (closed form) and ``population_risk_quad`` (quadrature).
    ``engine``: as ``risk_mc_from_vectors``.
    """
    _check_run(n, chunk)
    check_engine(engine)
    for name in OVERLAP_NAMES:
        if np.ndim(getattr(overlaps, name)) != 0:
            raise ValueError(f"overlaps.{name}={getattr(overlaps, name)!r} is not allowed: the Monte "
                             "Carlo route takes scalar fields only")
    if np.ndim(problem.d) != 0:
        raise ValueError(f"problem.d={problem.d!r} is not allowed: the Monte Carlo route takes "
                         "scalar fields only")
    d = int(problem.d)
    if full_dim:
        k, v, k_star, v_star = vectors_from_overlaps(overlaps, d, rng)
    else:
        # Any orthonormal frame containing the span gives the same law: use R^4 even when d < 4,
        # after checking that the overlaps are realisable in R^d.
        check_realisable(problem, overlaps)
        k, v, k_star, v_star = vectors_from_overlaps(overlaps, 4)
    return risk_mc_from_vectors(problem, k, v, k_star, v_star, n, rng, J=J, chunk=chunk,
                                engine=engine)
