"""Shared computation of the four training figures (paper's population experiments, docs/math/dynamics.md#the-papers-experiments
rows 1-4); a private module (the registry skips names starting with '_').

Data: ``numerics.dynamics.experiments.run_population_experiment`` (exact population PGD in overlap
coordinates, paper Definition 1; exact at every d), n_runs runs, run r seeded by
``SeedSequence(seed).spawn(n_runs)[r]``, so the runs of a quick smoke run are the first runs of
the full one. Four panels against the step t:

1. excess risk R - eps^2: mean over runs and the 95% confidence band of that mean,
   mean +- 1.96 stderr (stderr = sample standard deviation / sqrt(n_runs), normal
   approximation); dashed: the oracle's excess risk R(k*, v*) - eps^2 at lambda_t;
2. |kappa| and |nu|: every run (thin) and the mean over runs (thick);
3. the (kappa, nu) plane: n_show runs, evenly spaced in the ranking of their final excess risk
   (so that stalled and aligned runs both appear), with the five fixed points of the gradient
   flow on M and their type within M (``numerics.dynamics.phase_portrait``, at the last lambda), and
   the separatrix for the initialisation on M (off M the runs are not confined to the plane);
4. the distance sqrt(theta^2 + eta^2 + rho^2) to M, log scale, values below the machine
   epsilon drawn at it (the exact recursion keeps a start on M on M: distance exactly 0).

Drawing: ``figures.training_plot`` (kept apart so that restyling does not invalidate the cache).
Annotation: ``numerics.dynamics.experiments.summarize_alignment`` (aligned up to sign when
min(|kappa|, |nu|) >= 1 - delta at the last step; first aligned step at the logging resolution).
"""

from __future__ import annotations

import numpy as np

__all__ = ["experiment_params", "compute_training_panels", "recipe_functions"]


_Z_BAND = 1.96          # two-sided 95% normal quantile
_LOGGED_POINTS = 400    # logged steps per run (plus the start)
_QUICK_DIVISOR = 50     # quick mode: steps / 50
_QUICK_RUNS = 4


def experiment_params(row: int, quick: bool) -> dict:
    """JSON parameters of docs/math/dynamics.md#the-papers-experiments row ``row`` (0-3) as ``numerics.dynamics.experiments.PAPER_EXPERIMENTS``
    defines it; quick: 4 runs and steps / 50."""
    from numerics.dynamics.experiments import PAPER_EXPERIMENTS
    from numerics.dynamics.schedules import PaperSchedule

    c = PAPER_EXPERIMENTS[row]
    if isinstance(c.lam, PaperSchedule):
        lam = {"schedule": "lam0 / (1 + rate t)", "lam0": float(c.lam.lam0), "rate": float(c.lam.rate)}
    elif callable(c.lam):
        raise ValueError(f"lam={c.lam!r} of experiment {c.name!r} is not allowed: a number or a "
                         "PaperSchedule is needed to key the cache")
    else:
        lam = float(c.lam)
    steps = c.n_steps // _QUICK_DIVISOR if quick else c.n_steps
    return {"row": row, "experiment": c.name, "init": c.init, "d": c.d, "L": c.L, "gamma": float(c.gamma),
            "eps": float(c.eps), "lam": lam, "alpha": float(c.alpha), "steps": steps,
            "n_runs": _QUICK_RUNS if quick else c.n_runs, "seed": c.seed,
            "log_every": max(steps // _LOGGED_POINTS, 1), "n_show": _QUICK_RUNS if quick else 5,
            "delta": 0.05}


def _config(p):
    from numerics.dynamics.experiments import PopulationExperiment
    from numerics.dynamics.schedules import PaperSchedule

    lam = PaperSchedule(lam0=p["lam"]["lam0"], rate=p["lam"]["rate"]) if isinstance(p["lam"], dict) else p["lam"]
    return PopulationExperiment(name=p["experiment"], d=p["d"], L=p["L"], gamma=p["gamma"], eps=p["eps"],
                                lam=lam, alpha=p["alpha"], n_steps=p["steps"], init=p["init"],
                                n_runs=p["n_runs"], seed=p["seed"])


def compute_training_panels(p: dict, rng: np.random.Generator, progress) -> dict:
    """Run the experiment of ``p`` and reduce it to the arrays the four panels draw. ``rng`` is
    unused: the runs are seeded by the experiment's own ``seed`` (docs/math/dynamics.md#the-papers-experiments rows share no stream)."""
    from numerics.dynamics.experiments import run_population_experiment, summarize_alignment
    from numerics.dynamics.phase_portrait import manifold_fixed_points, separatrix
    from theory import Problem, oracle_risk

    config = _config(p)
    with progress(total=1, desc=f"PGD: {config.name}") as bar:
        result = run_population_experiment(config, log_every=p["log_every"])
        bar.update()
    log = result.log
    n = config.n_runs
    risk = log.excess_risk
    stderr = risk.std(axis=1, ddof=1) / np.sqrt(n)
    lam_t = log.lam[:, 0]
    oracle = oracle_risk(Problem(d=config.d, L=config.L, gamma=config.gamma, eps=0.0, lam=lam_t))
    summary = summarize_alignment(result, delta=p["delta"])
    shown = np.argsort(summary.final_excess_risk, kind="stable")[
        np.unique(np.round(np.linspace(0, n - 1, min(p["n_show"], n))).astype(int))]
    problem = Problem(d=config.d, L=config.L, gamma=config.gamma, lam=float(lam_t[-1]))
    fixed = manifold_fixed_points(problem)
    out = {"steps": log.steps, "lam": lam_t,
           "excess_risk_mean": risk.mean(axis=1), "excess_risk_lo": risk.mean(axis=1) - _Z_BAND * stderr,
           "excess_risk_hi": risk.mean(axis=1) + _Z_BAND * stderr, "excess_risk": risk,
           "oracle_excess_risk": np.broadcast_to(np.asarray(oracle, dtype=float), lam_t.shape).copy(),
           "abs_kappa": log.abs_kappa, "abs_nu": log.abs_nu,
           "shown_runs": shown, "kappa_shown": log.kappa[:, shown], "nu_shown": log.nu[:, shown],
           "distance_to_M": log.distance_to_manifold,
           "fixed_points": np.array([(f.kappa, f.nu) for f in fixed]),
           "fixed_kind": np.array([f.kind for f in fixed]),
           "aligned": summary.aligned, "first_aligned_step": summary.first_aligned_step,
           "final_excess_risk": summary.final_excess_risk,
           "oracle_final_excess_risk": np.array(summary.oracle_excess_risk),
           # every run's start and last logged state (signed; the claim theorem5-convergence resumes from it)
           "initial_overlaps": np.array(result.initial.as_tuple()), "final_overlaps": np.array(log.state_at(-1))}
    if config.init == "manifold":
        sep = separatrix(problem)
        out["separatrix_kappa"], out["separatrix_nu"] = sep.kappa, sep.nu
    return out


def recipe_functions(row: int):
    """(params, compute) of the recipe for docs/math/dynamics.md#the-papers-experiments row ``row``
    (0-3): the four training recipe modules differ only in their row, name, title and seed. Each
    defines its own ``plot`` (drawn by ``figures.training_plot``), which the cache key leaves out:
    restyling does not recompute."""
    def params(quick: bool) -> dict:
        return experiment_params(row, quick)

    def compute(p: dict, rng, progress) -> dict:
        return compute_training_panels(p, rng, progress)

    return params, compute
