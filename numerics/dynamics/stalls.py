"""Measurements beyond Theorem 5 (docs/math/dynamics.md#the-papers-experiments): stalls off M, the nature of the oracle off M, and
what the lambda schedule does. Everything here is measured, not proved.

- ``oracle_hessian``: the Hessian of R on the sphere product at the oracle (k, v) = (k*, v*), in
  local coordinates k = (k* + x1 v* + x2 w)/|.|, v = (v* + y1 k* + y2 w)/|.| (w a unit vector
  orthogonal to k*, v*), so kappa = 1/|k~|, eta = x1/|k~|, nu = 1/|v~|, theta = y1/|v~|,
  rho = (x1 + y1 + x2 y2)/(|k~| |v~|). Every other tangent direction (k and v moving along
  distinct unit vectors orthogonal to k*, v*) only lowers kappa or nu at second order, like x2
  and y2 alone, so these four coordinates carry the whole second-order structure. Central
  differences of the closed-form risk with step h (error O(h^2) + O(eps R / h^2)).
- ``perturbed_pgd``: PGD started at small random perturbations of a point (the oracle, a stall
  point); reports whether the runs return to it or leave it.
- ``stall_summary``: runs of an experiment that did not align, where they ended and at what risk.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory.parameters import Overlaps, Problem
from theory.risk import oracle_risk, risk_from_arrays

from .experiments import ExperimentResult, summarize_alignment
from ..montecarlo.geometry import overlaps_from_vectors, vectors_from_overlaps
from .pgd import PGDResult, overlap_pgd

__all__ = ["OracleHessian", "oracle_hessian", "overlaps_near_oracle", "PerturbationResult",
           "perturbed_pgd", "StallSummary", "stall_summary", "BeyondTheoremSummary",
           "beyond_theorem_summary"]


def overlaps_near_oracle(x1, x2, y1, y2):
    """(kappa, nu, theta, eta, rho) at the local coordinates of the module docstring (broadcasts)."""
    x1, x2, y1, y2 = (np.asarray(z, dtype=float) for z in (x1, x2, y1, y2))
    nk = np.sqrt(1.0 + x1 * x1 + x2 * x2)
    nv = np.sqrt(1.0 + y1 * y1 + y2 * y2)
    return 1.0 / nk, 1.0 / nv, y1 / nv, x1 / nk, (x1 + y1 + x2 * y2) / (nk * nv)


@dataclasses.dataclass(frozen=True)
class OracleHessian:
    """Hessian in the coordinates (x1, x2, y1, y2), its eigenvalues (ascending) and eigenvectors
    (columns). ``resolution`` bounds the roundoff of the second differences, 16 eps R / h^2 (four
    risk values of size R, each with relative error <= 4 eps, over 4 h^2); an eigenvalue within it
    of 0 is undetermined. ``kind``: "local minimum" (all eigenvalues > resolution), "saddle" (one
    < -resolution), else "degenerate" (a direction flat to working precision)."""

    hessian: np.ndarray
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    h: float
    resolution: float

    @property
    def kind(self) -> str:
        if self.eigenvalues[0] > self.resolution:
            return "local minimum"
        if self.eigenvalues[0] < -self.resolution:
            return "saddle"
        return "degenerate"


def oracle_hessian(*, d, L=10, gamma=np.sqrt(0.5), lam, h=1e-4) -> OracleHessian:
    """Central-difference Hessian of R at the oracle in the coordinates of the module docstring."""
    Problem(d=d, L=L, gamma=gamma, lam=lam)
    risk = lambda z: risk_from_arrays(float(d), L, gamma, 0.0, lam, *overlaps_near_oracle(*z))
    hess = np.empty((4, 4))
    eye = np.eye(4) * h
    for i in range(4):
        for j in range(4):
            hess[i, j] = (risk(eye[i] + eye[j]) - risk(eye[i] - eye[j])
                          - risk(-eye[i] + eye[j]) + risk(-eye[i] - eye[j])) / (4 * h * h)
    hess = 0.5 * (hess + hess.T)
    eig, vec = np.linalg.eigh(hess)
    resolution = 16 * np.finfo(float).eps * abs(float(risk(np.zeros(4)))) / h**2
    return OracleHessian(hess, eig, vec, h, resolution)


@dataclasses.dataclass(frozen=True)
class PerturbationResult:
    """Euclidean distance in overlap coordinates (kappa, nu, theta, eta, rho) to the perturbed
    point, at the start and at the end of each run, and the logs."""

    point: tuple
    initial_distance: np.ndarray
    final_distance: np.ndarray
    log: PGDResult


def perturbed_pgd(point: Overlaps, *, d, L=10, gamma=np.sqrt(0.5), lam, alpha, steps, size, n_runs,
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
    log = overlap_pgd(start, d=d, L=L, gamma=gamma, lam=lam, alpha=alpha, steps=steps,
                      log_every=log_every)
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
        h = oracle_hessian(d=c.d, L=c.L, gamma=c.gamma, lam=lam)
        hessians[lam] = h
        perturbations[lam] = perturbed_pgd(
            Overlaps.oracle(), d=c.d, L=c.L, gamma=c.gamma, lam=lam, alpha=0.5 / h.eigenvalues[-1],
            steps=perturbation_steps, size=size, n_runs=n_perturbed, rng=rng,
            log_every=perturbation_steps)
    stall_point = None
    for r, s in zip(results, stalls):
        if len(s.stalled) and not callable(r.config.lam):
            point = Overlaps(**{k: float(v[0]) for k, v in s.final.items()})
            c = r.config
            stall_point = perturbed_pgd(point, d=c.d, L=c.L, gamma=c.gamma, lam=c.lam, alpha=c.alpha,
                                        steps=perturbation_steps // 10, size=size, n_runs=n_perturbed,
                                        rng=rng, log_every=perturbation_steps // 10)
            break
    return BeyondTheoremSummary(alignment, stalls, hessians, perturbations, stall_point)
