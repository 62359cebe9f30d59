"""The two online-SGD figure recipes (training_online_sgd, sgd_vs_flow) in quick mode into a
temporary folder, and the data they draw."""

import dataclasses

import matplotlib
import numpy as np
import pytest

from figures.registry import discover_recipes
from figures.cache import DataCache
from figures.runner import cache_entry

EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def quick_runs(quick_figures):
    """Each recipe's quick run (the session's one run of every recipe); returns
    {name: (recipe, params, data, paths)}."""
    runs = {}
    for recipe in discover_recipes():
        if recipe.name in ("training_online_sgd", "sgd_vs_flow"):
            outcome = quick_figures.outcomes[recipe.name]
            assert outcome.status in quick_figures.COMPUTED_THIS_RUN, outcome.reason
            runs[recipe.name] = (recipe, recipe.params(True), quick_figures.data(recipe.name), quick_figures.paths)
    return runs


@pytest.mark.parametrize("name", ["training_online_sgd", "sgd_vs_flow"])
def test_quick_run_writes_png_and_pdf(name, quick_runs):
    recipe, p, _, paths = quick_runs[name]
    for f in paths.figure_files(name):
        assert f.stat().st_size > 1000, f
    assert f.read_bytes()[:5] == b"%PDF-"
    assert p == recipe.params(True) and p != recipe.params(False)
    # The data are cached under the key this process computes for the recipe (the pool worker that
    # computed them computed the same key): a second run would plot without computing (the
    # runner's cache-hit path itself: tests/test_figures_runner.py).
    lookup = DataCache(paths.cache).load(*cache_entry(recipe, p, True))
    assert lookup.status == "hit", lookup.reason


def test_online_sgd_full_params_are_the_papers_experiment():
    # docs/math/dynamics.md#the-papers-experiments, last row, typed from the specification.
    (recipe,) = [r for r in discover_recipes() if r.name == "training_online_sgd"]
    p = recipe.params(False)
    assert (p["d"], p["L"], p["batch_size"], p["eps"], p["alpha"], p["steps"], p["n_runs"], p["test_size"]) == \
        (80, 10, 5, 0.1, 1e-3, 200_000, 30, 1000)
    assert p["gamma"] == pytest.approx(np.sqrt(0.5), rel=EPS) and p["init"] == "sphere"
    assert p["lam"]["lam0"] == 2.0 and p["lam"]["rate"] == 1e-4
    # one process, all runs vectorised (least CPU; slr reproduce parallelises over recipes)
    assert p["workers"] == 1 and p["runs_per_task"] == 30 and p["simulator"] == "reduced"
    q = recipe.params(True)
    assert (q["n_runs"], q["steps"], q["workers"]) == (4, 2000, 1)


def test_online_sgd_data(quick_runs):
    recipe, p, data, _ = quick_runs["training_online_sgd"]
    steps = data["steps"]
    assert steps[0] == 0 and steps[-1] == p["steps"] and np.all(np.diff(steps) == p["log_every"])
    assert data["abs_kappa"].shape == data["distance_to_M"].shape == (len(steps), p["n_runs"])
    for key in ("excess_risk", "test_excess_risk"):
        lo, mean, hi = data[f"{key}_lo"], data[f"{key}_mean"], data[f"{key}_hi"]
        assert np.all(lo <= mean) and np.all(mean <= hi) and np.all(np.isfinite(mean))
    assert np.all((data["abs_kappa"] <= 1) & (data["distance_to_M"] > 0))
    assert set(data["fixed_kind"]) <= {"saddle", "stable node", "unstable node"}


def test_online_sgd_quick_runs_are_the_first_runs_of_the_full_experiment(quick_runs):
    # Run r starts from child 0 of SeedSequence(seed).spawn(n_runs)[r] whatever n_runs and the
    # chunking: the quick runs' initial overlaps are those of the full experiment's first runs.
    from figures.recipes.training_online_sgd import experiment_config
    from numerics.sgd.experiment import run_sgd_experiment

    recipe, p, data, _ = quick_runs["training_online_sgd"]
    full = recipe.params(False)
    start = run_sgd_experiment(dataclasses.replace(experiment_config(full), n_steps=0, test_size=0)).trajectory
    n = p["n_runs"]
    assert np.array_equal(data["abs_kappa"][0], np.abs(start.kappa[0, :n]))
    assert np.array_equal(data["abs_nu"][0], np.abs(start.nu[0, :n]))


def test_sgd_vs_flow_data(quick_runs):
    recipe, p, data, _ = quick_runs["sgd_vs_flow"]
    start = p["start"]
    assert data["flow_kappa"][0] == start["kappa"] and data["flow_nu"][0] == start["nu"]
    for i in range(len(data["path_alphas"])):
        t = data[f"time_{i}"]
        # Every run starts at the same point: mean = start and a band of zero width at t = 0.
        assert data[f"kappa_mean_{i}"][0] == start["kappa"] and data[f"kappa_lo_{i}"][0] == start["kappa"]
        assert t[0] == 0 and abs(t[-1] - p["t_end"]) <= 4 * EPS * p["t_end"]  # t = (t_end / n) n
    assert np.all(np.diff(data["gap"]) < 0) and np.all(data["gap_stderr"] > 0)
    assert np.isfinite(data["rate"]) and data["rate_stderr"] > 0 and int(data["dof"]) == 1
    # The stored intercept is that of the weighted least-squares fit log gap ~ 1 + log alpha + alpha
    # (solved here independently); both agree to roundoff, cond(X) eps.
    sw = data["gap"] / data["gap_stderr"]
    X = np.stack([np.ones_like(data["alphas"]), np.log(data["alphas"]), data["alphas"]], axis=1)
    beta = np.linalg.lstsq(sw[:, None] * X, sw * np.log(data["gap"]), rcond=None)[0]
    tol = 10 * np.linalg.cond(sw[:, None] * X) * EPS
    assert abs(beta[0] - data["log_a"]) <= tol * (1 + abs(beta[0]))
    assert abs(beta[1] - data["rate"]) <= tol * (1 + abs(beta[1]))
