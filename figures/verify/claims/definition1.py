"""Paper Definition 1 (PGD on the sphere product) and the exactness of its overlap recursion;
invariance of M under one PGD step and under the gradient flow, in floating point (docs/math/dynamics.md#invariant-manifold)."""

from __future__ import annotations

import numpy as np

from ..framework import Check, claim
from ..checks import EPS

ORDER = 50

_DIMS = (20, 400)


def _equivalence_starts(d: int, rng):
    """Two runs in each regime of docs/math/dynamics.md#the-papers-experiments, rows 1-4 (row 4's schedule at lambda_0 = 0.5, alpha = 2e-3,
    where PGD is stable: at lambda_0 = 1 the map itself is unstable, see tests/test_pgd.py), as
    vectors in R^d; returns (k, v, k*, v*), lam per run, alpha per run."""
    from numerics.dynamics.initial import sample_initial_vectors
    from numerics.dynamics.schedules import PaperSchedule

    regimes = [(0.1, 4e-3, True), (0.1, 4e-3, False), (0.9, 1e-3, False), (PaperSchedule(lam0=0.5), 2e-3, False)]
    parts = [sample_initial_vectors(d, 2, rng, on_manifold=on_m) for _, _, on_m in regimes]
    vectors = [np.concatenate([part[i] for part in parts]) for i in range(4)]
    lam = [entry for entry, _, _ in regimes for _ in range(2)]
    alpha = np.repeat([a for _, a, _ in regimes], 2)
    return vectors, lam, alpha


def _lipschitz(log, d: int) -> float:
    """max over the logged points of |R_kappa| + ... + |R_rho| (theory.risk), at least 1."""
    from theory.risk import risk_grad_from_arrays

    state = [getattr(log, n) for n in ("kappa", "nu", "theta", "eta", "rho")]
    grads = risk_grad_from_arrays(float(d), 10.0, np.sqrt(0.5), 0.0, log.lam, *state)
    return max(1.0, float(np.max(sum(np.abs(g) for g in grads))))


def _risk_roundoff(log, d: int) -> float:
    """Round-off bound of the closed form (theory.risk_roundoff, as the claim theorem1-quadrature),
    max over the log."""
    from theory import Overlaps, Problem
    from theory.risk_roundoff import population_risk_roundoff

    lam = np.broadcast_to(log.lam, log.kappa.shape)
    names = ("kappa", "nu", "theta", "eta", "rho")
    return max(float(population_risk_roundoff(Problem(d=d, L=10, gamma=np.sqrt(0.5), eps=0.0, lam=float(lam[i])),
                                              Overlaps(**{n: float(getattr(log, n)[i]) for n in names})))
               for i in np.ndindex(log.kappa.shape))


@claim("definition1-overlap-vs-vector",
       "Definition 1 (docs/math/dynamics.md#pgd-step-in-overlaps): PGD on explicit vectors in R^d and the exact five-overlap recursion "
       "give the same iterates (for every d)", cost=0.4)
def overlap_pgd_equals_vector_pgd(quick: bool, rng) -> Check:
    from numerics.montecarlo.geometry import overlaps_from_vectors
    from numerics.dynamics.pgd import overlap_pgd, pgd_route_gap_bound
    from numerics.dynamics.pgd_vectors import vector_pgd
    from numerics.dynamics.schedules import ScheduledProblem

    steps = 1_000 if quick else 10_000
    gaps, risk_gaps = {}, {}
    for d in _DIMS:
        vectors, lam, alpha = _equivalence_starts(d, rng)
        problem = ScheduledProblem(d=d, lam=lam)
        ref = vector_pgd(problem, *vectors, alpha=alpha, n_steps=steps, log_every=steps // 10).log
        ours = overlap_pgd(problem, overlaps_from_vectors(*vectors), alpha=alpha, n_steps=steps,
                           log_every=steps // 10)
        if not np.array_equal(ours.steps, ref.steps):
            raise RuntimeError(f"logged steps differ: {ours.steps} vs {ref.steps}")
        overlap_gap = max(float(np.max(np.abs(getattr(ours, n) - getattr(ref, n))))
                          for n in ("kappa", "nu", "theta", "eta", "rho"))
        risk_gaps[d] = float(np.max(np.abs(ours.excess_risk - ref.excess_risk)))
        # The logged excess risk R - eps^2 (each route's own, at its own lambda) in overlap units: a
        # gap of the overlaps by x moves R by <= G x, G = max over the logged points of the sum of
        # |partials| (theory.risk), after granting each route's closed-form roundoff (45 eps S).
        gaps[d] = max(overlap_gap, max(risk_gaps[d] - 2 * _risk_roundoff(ref, d), 0.0) / _lipschitz(ref, d))
    worst = max(gaps.values())
    return Check(
        method=f"numerics.dynamics.pgd_vectors.vector_pgd (vectors in R^d, compiled) vs numerics.dynamics.pgd.overlap_pgd "
               "(overlaps, compiled; both share only the closed form's partials) "
               f"from the same 8 starts (2 per regime of docs/math/dynamics.md#the-papers-experiments, rows 1-4), {steps:,} steps, "
               f"d in {_DIMS}; max |difference| of the five overlaps and of the logged excess risk "
               "(divided by its Lipschitz constant in the overlaps) at 11 logged steps",
        measured=worst,
        measured_text=", ".join(f"d = {d}: {g:.2e} ({g / EPS:.0f} eps)" for d, g in gaps.items())
                      + "; excess risk: " + ", ".join(f"{g:.1e}" for g in risk_gaps.values()),
        tolerance=pgd_route_gap_bound(steps),
        derivation="roundoff accumulation (numerics.dynamics.pgd.pgd_route_gap_bound): each route rounds its unit-size "
                   "iterate about once per step (u = eps/2, in the normalisation), so the routes drift "
                   "apart by <= 2u = eps per step, added linearly over N steps (measured: linear growth, "
                   "well below eps per step, see details): N eps",
        details={"steps": steps, "max_gap": {str(d): g for d, g in gaps.items()},
                 "growth_in_eps_per_step": worst / EPS / steps,
                 "max_excess_risk_gap": {str(d): g for d, g in risk_gaps.items()}},
    )


def _manifold_points(rng, n: int):
    """n random problems and points on M: d log-uniform in [3, 1e4], lambda log-uniform in
    [0.02, 3], alpha log-uniform in [1e-4, 1e-1], (kappa, nu) uniform in [-1, 1]^2, theta = eta =
    rho = 0; returns a dict of arrays of shape (n,)."""
    zero = np.zeros(n)
    return {"d": np.round(np.exp(rng.uniform(np.log(3), np.log(1e4), n))),
            "lam": np.exp(rng.uniform(np.log(0.02), np.log(3.0), n)),
            "alpha": np.exp(rng.uniform(np.log(1e-4), np.log(1e-1), n)),
            "kappa": rng.uniform(-1.0, 1.0, n), "nu": rng.uniform(-1.0, 1.0, n),
            "theta": zero, "eta": zero.copy(), "rho": zero.copy()}


@claim("invariance-of-M",
       "Invariance of M (paper, docs/math/dynamics.md#invariant-manifold), in float64: one PGD step from a point of M = {theta = eta = "
       "rho = 0} lands exactly on M, and the flow's theta', eta', rho' vanish exactly on M", cost=0.2)
def manifold_is_invariant(quick: bool, rng) -> Check:
    from numerics.dynamics.flow import overlap_flows
    from numerics.dynamics.risk_partials import lambda_constants, partials
    from numerics.dynamics.overlap_steps import flow_velocity, pgd_step
    from theory.risk import risk_grad_from_arrays
    from theory.parameters import Problem

    n = 200 if quick else 5_000
    x = _manifold_points(rng, n)
    state = tuple(x[k] for k in ("kappa", "nu", "theta", "eta", "rho"))
    gamma, L = np.sqrt(0.5), 10.0
    grads = risk_grad_from_arrays(x["d"], L, gamma, 0.0, x["lam"], *state)
    lean = partials(lambda_constants(x["d"], L, gamma, x["lam"][None, :]).at(0), *state)
    off = {"partials (theory.risk)": grads[2:], "partials (numerics.dynamics.risk_partials)": lean[2:],
           "one PGD step (theory.risk partials)": pgd_step(x["alpha"], *state, *grads)[2:],
           "one PGD step (lean partials, as numerics.dynamics.pgd)": pgd_step(x["alpha"], *state, *lean)[2:],
           "flow velocity": flow_velocity(*state, *grads)[2:]}
    worst = {name: float(np.max(np.abs(np.asarray(v)))) for name, v in off.items()}
    n_flow = 2 if quick else 10
    # The n_flow runs as one system (numerics.dynamics.flow.overlap_flows): theta, eta, rho of every
    # run at every step of the shared solution.
    _, traj = overlap_flows(Problem(d=x["d"][:n_flow], lam=x["lam"][:n_flow]),
                            tuple(x[k][:n_flow] for k in ("kappa", "nu", "theta", "eta", "rho")), t_end=20.0)
    worst["integrated flow (theta, eta, rho along the solution)"] = float(np.max(np.abs(traj[2:])))
    measured = max(worst.values())
    return Check(
        method=f"{n} random points of M (d in [3, 1e4], lambda in [0.02, 3], alpha in [1e-4, 0.1]): "
               "R_theta, R_eta, R_rho by both partial routes, theta, eta, rho after one step of "
               "numerics.dynamics.overlap_steps.pgd_step, theta', eta', rho' of flow_velocity; and "
               f"numerics.dynamics.flow.overlap_flows (LSODA, one system) from {n_flow} of them to t = 20",
        measured=measured,
        measured_text="max |.|: " + "; ".join(f"{k} {v:.1e}" for k, v in worst.items()),
        tolerance=0.0,
        derivation="exact zeros: on M every term of R_theta, R_eta, R_rho has a factor theta, eta or rho "
                   "(R is quadratic in them without a linear term), and every term of the updated "
                   "theta, eta, rho (and of their velocities) has a factor theta, eta, rho or one of "
                   "these partials; a float64 product with an exact zero factor is exactly zero",
        details=worst,
    )
