"""Random test points and test statistics shared by the claims (not a claim module itself)."""

from __future__ import annotations

import math

import numpy as np

from numerics.montecarlo.statistics import bonferroni_z, power_z
from theory import Overlaps, Problem

from ..sample_size import PILOT_N, merged_estimate, sized_estimate, sized_estimates  # noqa: F401 (the claims' import)
from .framework import Check

EPS = np.finfo(float).eps


def random_problem(rng: np.random.Generator, *, d_max: int = 2000, L_max: int = 50) -> Problem:
    """A problem with d log-uniform in [4, d_max] (d >= 4: room for k, v, k*, v* in general
    position), L uniform in 1..L_max, gamma in [0.3, 1.5], eps in [0, 0.5], lambda log-uniform
    in [0.02, 3]: a spread that exercises every term."""
    d = int(round(np.exp(rng.uniform(np.log(4), np.log(d_max)))))
    return Problem(d=d, L=int(rng.integers(1, L_max + 1)), gamma=float(rng.uniform(0.3, 1.5)),
                   eps=float(rng.uniform(0.0, 0.5)), lam=float(np.exp(rng.uniform(np.log(0.02), np.log(3.0)))))


def random_overlaps(rng: np.random.Generator, *, on_manifold: bool = False) -> Overlaps:
    """Overlaps of independent uniform unit vectors k, v in R^5 with k* = e1, v* = e2 (off M),
    or (kappa, nu) uniform in [-1, 1]^2 with theta = eta = rho = 0 (on M)."""
    if on_manifold:
        kappa, nu = rng.uniform(-1.0, 1.0, size=2)
        return Overlaps(kappa=float(kappa), nu=float(nu))
    k, v = (x / np.linalg.norm(x) for x in rng.standard_normal((2, 5)))
    return Overlaps(kappa=float(k[0]), nu=float(v[1]), theta=float(v[0]), eta=float(k[1]),
                    rho=float(k @ v))


def z_family_check(*, method: str, z_scores, z_crit: float, measured_text: str, derivation: str,
                   details: dict, failure: str | None = None) -> Check:
    """A family of two-sided z-tests as a Check: measured = max |z| against ``z_crit`` (the caller's
    Bonferroni critical value, ``bonferroni_z(alpha, m)``, m the family's size); ``failure``: a label
    (e.g. "UNDERPOWERED" when a required power is not reached) that makes the check fail
    (measured = inf) and is appended to the text. ``details`` gets the z-scores under "z_scores"."""
    worst = float(np.max(np.abs(z_scores)))
    return Check(
        method=method,
        measured=math.inf if failure else worst,
        measured_text=f"max |z| = {worst:.2f}; " + measured_text + (f" ({failure})" if failure else ""),
        tolerance=z_crit,
        derivation=derivation,
        details={"z_scores": list(z_scores), **details},
    )


def z_test_check(*, method: str, estimates, exacts, alpha: float, power: float, detect: float) -> Check:
    """Monte-Carlo estimates (objects with mean, stderr, n) against exact values: a Bonferroni
    z-test with family-wise false-failure rate ``alpha``, and a power requirement: a relative
    error ``detect`` at any point must be detected with probability >= ``power``, i.e.
    (z_crit + z_power) stderr / exact <= detect everywhere; otherwise the check fails as
    underpowered (measured = inf)."""
    m = len(estimates)
    z_crit = bonferroni_z(alpha, m)
    z_scores = [(e.mean - x) / e.stderr for e, x in zip(estimates, exacts)]
    detectable = [(z_crit + power_z(power)) * e.stderr / abs(x) for e, x in zip(estimates, exacts)]
    underpowered = max(detectable) > detect
    return z_family_check(
        method=method, z_scores=z_scores, z_crit=z_crit,
        measured_text=f"a relative error >= {max(detectable):.3g} is detected with probability >= {power}",
        derivation=f"Bonferroni: family-wise false-failure rate {alpha} over {m} points; "
                   f"power {power} against a {detect:.0%} relative error required",
        details={"detectable_relative_error": detectable, "n": [int(e.n) for e in estimates]},
        failure="UNDERPOWERED" if underpowered else None,
    )
