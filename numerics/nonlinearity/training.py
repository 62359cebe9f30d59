"""Online SGD from the paper's initialisation for any member: fraction aligned, final excess, stalls
(docs/math/nonlinearities.md#online-sgd).

The paper's SGD experiment (``numerics.PAPER_SGD``: d = 80, L = 10, gamma = sqrt(1/2), eps = 0.1,
batch 5, alpha = 1e-3, lambda_t = 2 / (1 + 1e-4 t), init uniform on the sphere with fresh k*, v*)
run with the exact reduced simulator and the member's gradient. Run i draws its initial overlaps
from child 0 of its SeedSequence (``numerics.sample_initial_overlaps``, the exact law in dimension
d) and trains with child 1, as ``numerics.sgd_runs``. The final excess risk is the population
risk R - eps^2 at the final overlaps and lambda, by quadrature. The overlaps are logged every
``log_every`` steps (the logging does not change the runs: the simulator's random numbers do not
depend on its block length).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from numerics.dynamics.initial import sample_initial_overlaps
from numerics.sgd.experiment import PAPER_SGD
from theory import OVERLAP_NAMES, Overlaps, Problem
from theory.nonlinearity import nonlinearity, population_risk_sigma
from theory.nonlinearity.oracle import oracle_excess_sigma

from .sgd import online_sgd_reduced_sigma

__all__ = ["TrainingSummary", "sgd_training_sigma"]


@dataclasses.dataclass(frozen=True)
class TrainingSummary:
    """Per run (n_runs,): final |kappa|, |nu|, distance to M, excess risk; ``aligned``:
    min(|kappa|, |nu|) >= 1 - delta at the end; ``oracle_excess``: the oracle's at the final lambda;
    ``steps`` (n_log,) the logged steps and ``overlaps`` the five overlaps there, (n_log, n_runs) each."""

    sigma: str
    delta: float
    n_steps: int
    abs_kappa: np.ndarray
    abs_nu: np.ndarray
    distance_to_manifold: np.ndarray
    excess: np.ndarray
    aligned: np.ndarray
    oracle_excess: float
    lam_final: float
    steps: np.ndarray
    overlaps: dict

    @property
    def fraction_aligned(self) -> float:
        return float(np.mean(self.aligned))


def sgd_training_sigma(sigma, *, config=PAPER_SGD, n_steps=None, n_runs=None, seed=0,
                       delta: float = 0.05, log_every=None) -> TrainingSummary:
    """Run ``config`` (an ``numerics.SGDExperiment``; its init must be "sphere" or "manifold")
    for member ``sigma`` with the reduced simulator; n_steps / n_runs override the config's;
    ``log_every``: the logging period of the overlaps (None: the start and the end only)."""
    member = nonlinearity(sigma)
    n_steps = config.n_steps if n_steps is None else n_steps
    n_runs = config.n_runs if n_runs is None else n_runs
    if config.init not in ("sphere", "manifold"):
        raise ValueError(f"config.init={config.init!r} is not allowed: use 'sphere' or 'manifold'")
    seeds = np.random.SeedSequence(seed).spawn(n_runs)
    child = lambda s, i: np.random.default_rng(np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key + (i,)))
    parts = [sample_initial_overlaps(config.d, 1, child(s, 0), on_manifold=config.init == "manifold")
             for s in seeds]
    start = Overlaps(**{k: np.concatenate([getattr(p, k) for p in parts]) for k in OVERLAP_NAMES})
    traj = online_sgd_reduced_sigma(config.problem, start, member, alpha=config.alpha, n_steps=n_steps,
                                    batch_size=config.batch_size, rng=[child(s, 1) for s in seeds],
                                    log_every=n_steps if log_every is None else log_every)
    logged = {k: np.asarray(getattr(traj, k)) for k in OVERLAP_NAMES}
    final = {k: x[-1] for k, x in logged.items()}
    lam = float(config.schedule(n_steps))
    prob = Problem(d=config.d, L=config.L, gamma=config.gamma, eps=0.0, lam=lam)
    excess = np.array([float(population_risk_sigma(prob, Overlaps(**{k: float(final[k][i]) for k in final}),
                                                   member)) for i in range(n_runs)])
    ak, an = np.abs(final["kappa"]), np.abs(final["nu"])
    dist = np.sqrt(final["theta"] ** 2 + final["eta"] ** 2 + final["rho"] ** 2)
    return TrainingSummary(member.name, delta, n_steps, ak, an, dist, excess,
                           np.minimum(ak, an) >= 1.0 - delta, oracle_excess_sigma(prob, member).value, lam,
                           np.asarray(traj.steps), logged)
