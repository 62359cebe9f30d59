"""Monte-Carlo estimates sized for a power target: ``sized_estimates`` tops an internal pilot up until
a Bonferroni z-test over m points detects a relative error ``detect`` with probability ``power``.

Used by the claims (``figures.verify.checks`` re-exports it) and by figure compute functions
(``figures.recipes.risk_routes``): a module of its own, importing only the statistics it needs, so that
a figure's cache key (``figures.codehash``) covers this code and nothing of the verification report.
"""

from __future__ import annotations

import math

from numerics.montecarlo.statistics import bonferroni_z, power_z

__all__ = ["PILOT_N", "merged_estimate", "sized_estimate", "sized_estimates"]

PILOT_N = 2_000  # samples of the internal pilot that starts a sized Monte-Carlo estimate
_MAX_ROUNDS = 6


def merged_estimate(a, b):
    """One estimate from two independent ones (pooled mean and sample variance, exact)."""
    n = a.n + b.n
    mean = (a.n * a.mean + b.n * b.mean) / n
    ss = sum((e.n - 1) * e.n * e.stderr ** 2 + e.n * (e.mean - mean) ** 2 for e in (a, b))
    return type(a)(mean=mean, stderr=math.sqrt(ss / (n - 1) / n), n=n)


def sized_estimates(run, exacts, rng, *, alpha: float, m: int, power: float, detect: float) -> list:
    """Monte-Carlo estimates whose size meets ``z_test_check``'s power requirement, and not more:
    (z_crit + z_power) sd_i / sqrt(n) <= detect |exact_i| for every i, z_crit = z_{alpha/(2m)}
    (Bonferroni over the claim's m points).

    ``run(n, rng)`` returns a list of Estimates (mean, stderr, n), one per ``exacts`` entry, from
    the same n fresh samples. An internal pilot of PILOT_N samples estimates each sd; the estimates
    are topped up with fresh samples until the size computed from the pooled sds (each raised by 3
    of its standard errors under normality, sd / sqrt(2 (n - 1)), against underestimation) is
    reached by all, at most 6 rounds. The pilot is part of the final estimates: the stopping rule
    looks only at the spread, not at the means (an internal pilot, Wittes and Brittain 1990), so the
    z-test keeps its level. If they still fall short, ``z_test_check`` reports UNDERPOWERED."""
    z = bonferroni_z(alpha, m) + power_z(power)
    ests = list(run(PILOT_N, rng.spawn(1)[0]))
    for _ in range(_MAX_ROUNDS):
        n = ests[0].n
        sds = [e.stderr * math.sqrt(n) * (1.0 + 3.0 / math.sqrt(2.0 * (n - 1))) for e in ests]
        need = max(math.ceil((z * sd / (detect * abs(x))) ** 2) for sd, x in zip(sds, exacts))
        if need <= n:
            break
        # at least 2 fresh samples: an estimate of one has no standard error
        ests = [merged_estimate(a, b) for a, b in zip(ests, run(max(need - n, 2), rng.spawn(1)[0]))]
    return ests


def sized_estimate(run, exact: float, rng, *, alpha: float, m: int, power: float, detect: float):
    """``sized_estimates`` for one estimate: ``run(n, rng)`` returns an Estimate of n fresh samples."""
    return sized_estimates(lambda n, r: [run(n, r)], [exact], rng, alpha=alpha, m=m, power=power,
                           detect=detect)[0]
