"""Measurements beyond Theorem 5 (docs/math/dynamics.md#the-papers-experiments): stalls off M, the nature of the oracle off M, and
what the lambda schedule does. Everything here is measured, not proved. The oracle's Hessian in
local coordinates is ``numerics.dynamics.hessian_fd.local_oracle_hessian_fd``.

- ``perturbed_pgd``: PGD started at small random perturbations of a point (the oracle, a stall
  point); reports whether the runs return to it or leave it.
- ``stall_summary``: runs of an experiment that did not align, where they ended and at what risk.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import Overlaps, Problem
from theory.risk import oracle_risk

from .experiments import ExperimentResult, summarize_alignment
from ..montecarlo.geometry import overlaps_from_vectors, vectors_from_overlaps
from .hessian_fd import local_oracle_hessian_fd
from .pgd import PGDTrajectory, overlap_pgd

__all__ = ["PerturbationResult", "perturbed_pgd", "StallSummary", "stall_summary",
           "BeyondTheoremSummary", "beyond_theorem_summary"]


@dataclasses.dataclass(frozen=True)
class PerturbationResult:
    """Euclidean distance in overlap coordinates (kappa, nu, theta, eta, rho) to the perturbed
    point, at the start and at the end of each run, and the logs."""

    point: tuple
    initial_distance: np.ndarray
    final_distance: np.ndarray
    log: PGDTrajectory


def perturbed_pgd(problem: Problem, point: Overlaps, *, alpha, n_steps, size, n_runs,
                  rng: np.random.Generator, log_every=100, embed_dim=8) -> PerturbationResult:
    """PGD from random perturbations of ``point`` (scalar overlaps): (k, v, k*, v*) realised in
    R^embed_dim (a random frame), k and v moved by size * (standard Gaussian vectors) and
    normalised. embed_dim = 8 leaves 4 directions orthogonal to k, v, k*, v*, standing for the
    generic directions of R^d; the overlap dynamics is then run in dimension d (exact)."""
    k, v, k_star, v_star = vectors_from_overlaps(point, embed_dim, rng)
    k = k + size * rng.standard_normal((n_runs, embed_dim))
    v = v + size * rng.standard_normal((n_runs, embed_dim))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    start = overlaps_from_vectors(k, v, k_star, v_star).as_tuple()
    log = overlap_pgd(problem, start, alpha=alpha, n_steps=n_steps, log_every=log_every)
    ref = np.array([float(x) for x in point.as_tuple()])[:, None]
    dist = lambda state: np.linalg.norm(np.array(state) - ref, axis=0)
    return PerturbationResult(tuple(ref[:, 0]), dist(start), dist(log.state_at(-1)), log)


@dataclasses.dataclass(frozen=True)
class StallSummary:
    """Runs not aligned at the end (min(|kappa|, |nu|) < 1 - delta): their indices, final overlaps
    (dict of arrays), final excess risk R - eps^2, and the oracle's excess risk at the final lambda."""

    name: str
    delta: float
    stalled: np.ndarray
    final: dict
    final_excess_risk: np.ndarray
    oracle_excess_risk: float


def stall_summary(result: ExperimentResult, delta: float = 0.05) -> StallSummary:
    log, c = result.log, result.config
    state = log.state_at(-1)
    stalled = np.flatnonzero(np.minimum(np.abs(state[0]), np.abs(state[1])) < 1.0 - delta)
    names = ("kappa", "nu", "theta", "eta", "rho")
    final = {n: x[stalled] for n, x in zip(names, state)}
    lam_final = float(log.lam[-1, 0])
    oracle = float(oracle_risk(Problem(d=c.d, L=c.L, gamma=c.gamma, eps=0.0, lam=lam_final)))
    return StallSummary(c.name, delta, stalled, final, log.excess_risk[-1, stalled], oracle)


@dataclasses.dataclass(frozen=True)
class BeyondTheoremSummary:
    """Measured facts beyond Theorem 5 (module docstring), with the runs they come from.

    ``alignment`` / ``stalls``: per experiment; ``oracle_hessians`` and ``oracle_perturbations``:
    keyed by lambda (d of the experiments); ``stall_perturbation``: perturbations of the first
    stall point of the small-lambda sphere experiment (None if no run stalled)."""

    alignment: list
    stalls: list
    oracle_hessians: dict
    oracle_perturbations: dict
    stall_perturbation: object

    def lines(self) -> list:
        out = []
        for a, s in zip(self.alignment, self.stalls):
            out.append(f"{a.name}: {a.n_aligned}/{a.n_runs} aligned (delta={a.delta}); final excess "
                       f"risk {a.final_excess_risk_mean:.5f} +- {a.final_excess_risk_stderr:.1e} "
                       f"(oracle {a.oracle_excess_risk:.5f})")
            if len(s.stalled):
                where = ", ".join(f"{k}={np.round(v, 3).tolist()}" for k, v in s.final.items())
                out.append(f"  stalled runs {s.stalled.tolist()}: {where}; excess risk "
                           f"{np.round(s.final_excess_risk, 5).tolist()}")
        for lam, h in self.oracle_hessians.items():
            p = self.oracle_perturbations[lam]
            out.append(f"oracle at lambda={lam}: Hessian eigenvalues {np.round(h.eigenvalues, 4).tolist()} "
                       f"({h.kind}); perturbed runs: final/initial distance "
                       f"{np.round(p.final_distance / p.initial_distance, 3).tolist()}")
        if self.stall_perturbation is not None:
            p = self.stall_perturbation
            out.append(f"stall point {np.round(p.point, 4).tolist()}: perturbed runs final/initial "
                       f"distance {np.round(p.final_distance / p.initial_distance, 3).tolist()}")
        return out


def beyond_theorem_summary(results, *, seed=0, delta=0.05, n_perturbed=10, size=1e-3,
                           perturbation_steps=50_000) -> BeyondTheoremSummary:
    """Summarise ``results`` (``ExperimentResult`` list, e.g. of PAPER_EXPERIMENTS) and probe the
    oracle at each constant lambda used (Hessian; PGD from perturbations with
    alpha = 1/(2 * largest Hessian eigenvalue), inside PGD's stability limit) and the first stall
    point found. Takes tens of seconds with the defaults."""
    rng = np.random.default_rng(seed)
    alignment = [summarize_alignment(r, delta) for r in results]
    stalls = [stall_summary(r, delta) for r in results]
    hessians, perturbations = {}, {}
    for r in results:
        lam, c = r.config.lam, r.config
        if callable(lam) or lam in hessians:
            continue
        problem = Problem(d=c.d, L=c.L, gamma=c.gamma, lam=lam)
        h = local_oracle_hessian_fd(problem)
        hessians[lam] = h
        perturbations[lam] = perturbed_pgd(
            problem, Overlaps.oracle(), alpha=0.5 / h.eigenvalues[-1], n_steps=perturbation_steps,
            size=size, n_runs=n_perturbed, rng=rng, log_every=perturbation_steps)
    stall_point = None
    for r, s in zip(results, stalls):
        if len(s.stalled) and not callable(r.config.lam):
            point = Overlaps(**{k: float(v[0]) for k, v in s.final.items()})
            c = r.config
            problem = Problem(d=c.d, L=c.L, gamma=c.gamma, lam=c.lam)
            stall_point = perturbed_pgd(problem, point, alpha=c.alpha, n_steps=perturbation_steps // 10,
                                        size=size, n_runs=n_perturbed, rng=rng,
                                        log_every=perturbation_steps // 10)
            break
    return BeyondTheoremSummary(alignment, stalls, hessians, perturbations, stall_point)
