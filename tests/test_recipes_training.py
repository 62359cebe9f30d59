"""The four training figures (docs/math/dynamics.md#the-papers-experiments, rows 1-4): parameters as in the paper's table, cache keys that
cover the shared helper, and the quick data and figures consistent with the numerics they draw.
(Every recipe's quick run through the runner is in tests/test_figures_recipes.py.)"""

import importlib
import math
import re

import matplotlib
import numpy as np
import pytest

from figures.runner import progress_factory

from figures import training_panels as panels
from figures import training_plot
from figures.registry import Recipe, discover_recipes
from figures.style import figure_style
from numerics.dynamics.experiments import PAPER_EXPERIMENTS, initial_overlaps
from theory import Problem, oracle_risk

MODULES = {"training_init_on_M": 0, "training_sphere_small_lambda": 1, "training_sphere_large_lambda": 2,
           "training_sphere_schedule": 3}

# docs/math/dynamics.md#the-papers-experiments, rows 1-4, typed in from the paper's table (independent of numerics.dynamics.experiments).
PAPER_ROWS = [
    dict(init="manifold", d=400, lam=0.1, alpha=4e-3, steps=20_000),
    dict(init="sphere", d=400, lam=0.1, alpha=4e-3, steps=20_000),
    dict(init="sphere", d=400, lam=0.9, alpha=1e-3, steps=120_000),
    dict(init="sphere", d=400, lam={"schedule": "lam0 / (1 + rate t)", "lam0": 1.0, "rate": 1e-4}, alpha=4e-3,
         steps=120_000),
]


def _module(name):
    return importlib.import_module(f"figures.recipes.{name}")


@pytest.fixture(scope="module")
def quick_data(quick_figures):
    """(data, params) of each training recipe's quick run: the session's one run of every recipe
    (seeded by the recipe's SEED, as ``compute`` is here)."""
    return {name: (quick_figures.data(name), _module(name).params(True)) for name in MODULES}


def test_recipes_are_registered_and_the_helper_is_not():
    names = {r.name for r in discover_recipes()}
    assert set(MODULES) <= names
    assert not any(n.startswith("_") for n in names)


@pytest.mark.parametrize("name, row", MODULES.items())
def test_full_parameters_are_the_papers(name, row):
    p = _module(name).params(False)
    spec = PAPER_ROWS[row]
    assert {k: p[k] for k in spec} == spec
    assert (p["L"], p["n_runs"], p["eps"]) == (10, 30, 0.0)
    assert p["gamma"] == pytest.approx(math.sqrt(0.5), rel=1e-15)
    assert p["seed"] == PAPER_EXPERIMENTS[row].seed and p["experiment"] == PAPER_EXPERIMENTS[row].name
    assert 400 <= p["steps"] // p["log_every"] <= 401   # ~400 logged points per run
    q = _module(name).params(True)
    assert q["n_runs"] == 4 and q["steps"] == p["steps"] // 50


@pytest.mark.parametrize("name", MODULES)
def test_cache_key_covers_the_helper_and_its_imports(name):
    recipe = Recipe.from_module(_module(name))
    assert "figures.training_panels" in recipe.code_modules
    source = open(panels.__file__).read()
    imported = set(re.findall(r"from (numerics\.\w+|theory\.\w+) import", source))
    assert imported <= set(recipe.code_modules), imported - set(recipe.code_modules)
    # the drawing helper is not part of the key: restyling does not recompute
    assert "figures.training_plot" not in recipe.code_modules and recipe.name == name


@pytest.mark.parametrize("name, row", MODULES.items())
def test_quick_data_matches_the_numerics(quick_data, name, row):
    data, p = quick_data[name]
    n_log, n = data["abs_kappa"].shape
    assert n == 4 and data["steps"][0] == 0 and data["steps"][-1] == p["steps"] and len(data["steps"]) == n_log
    # the quick runs are the first runs of the full experiment (same seeds)
    start = initial_overlaps(PAPER_EXPERIMENTS[row])
    np.testing.assert_array_equal(data["abs_kappa"][0], np.abs(start.kappa[:4]))
    np.testing.assert_array_equal(data["abs_nu"][0], np.abs(start.nu[:4]))
    # band around the mean; the oracle line is theory.oracle_risk at the logged lambda_t
    assert np.all(data["excess_risk_lo"] <= data["excess_risk_mean"])
    assert np.all(data["excess_risk_mean"] <= data["excess_risk_hi"])
    lam = PAPER_EXPERIMENTS[row].lam
    expected_lam = lam(data["steps"]) if callable(lam) else np.full(n_log, lam)
    np.testing.assert_allclose(data["lam"], expected_lam, rtol=4 * np.finfo(float).eps)
    for i in (0, n_log - 1):
        oracle = oracle_risk(Problem(d=400, L=10, gamma=math.sqrt(0.5), eps=0.0, lam=float(data["lam"][i])))
        assert data["oracle_excess_risk"][i] == pytest.approx(float(oracle), rel=1e-14)
    # alignment summary from the same logs
    aligned = np.minimum(data["abs_kappa"][-1], data["abs_nu"][-1]) >= 1 - p["delta"]
    np.testing.assert_array_equal(data["aligned"], aligned)
    # shown runs: the best and the worst final excess risk are among them
    shown = set(data["shown_runs"].tolist())
    assert {int(np.argmin(data["final_excess_risk"])), int(np.argmax(data["final_excess_risk"]))} <= shown
    np.testing.assert_array_equal(np.abs(data["kappa_shown"]), data["abs_kappa"][:, data["shown_runs"]])
    kinds = dict(zip(map(tuple, data["fixed_points"]), data["fixed_kind"]))
    assert kinds[(0.0, 0.0)] == "saddle" and kinds[(1.0, 1.0)] == "stable node"
    assert ("separatrix_kappa" in data) == (p["init"] == "manifold")


def test_start_on_m_stays_exactly_on_m(quick_data):
    data, _ = quick_data["training_init_on_M"]
    assert np.all(data["distance_to_M"] == 0)
    data, _ = quick_data["training_sphere_small_lambda"]
    assert np.all(data["distance_to_M"][0] > 0)


@pytest.mark.parametrize("name", MODULES)
def test_plot_has_four_panels_and_says_what_the_band_is(quick_data, name):
    matplotlib.use("Agg")
    data, p = quick_data[name]
    with figure_style():
        fig = _module(name).plot(data, p)
    axes = fig.get_axes()
    assert len(axes) == 4
    (legend,) = fig.legends                     # one legend, below the panels
    legend_texts = [t.get_text() for t in legend.get_texts()]
    assert training_plot.BAND in legend_texts and any("oracle" in t for t in legend_texts)
    # each group of runs is named with its size; the title names the paper's experiment
    counts = {name: len(runs) for name, runs in training_plot.groups(data).items()}
    for group, n in counts.items():
        assert f"{group} ({n}/{p['n_runs']} runs)" in legend_texts
    assert sum(counts.values()) == p["n_runs"]
    assert f"Paper experiment “{p['experiment']}”" in fig._suptitle.get_text()
    assert axes[3].get_yscale() == "log"


def test_groups_split_the_runs_by_alignment():
    data = {"aligned": np.array([1, 0, 1, 1, 0])}
    found = training_plot.groups(data)
    assert found["aligned"].tolist() == [0, 2, 3] and found["not aligned"].tolist() == [1, 4]
    assert list(training_plot.groups({"aligned": np.ones(3)})) == ["aligned"]


def test_full_init_on_m_aligns_every_run():
    """Row 1 at full size (~2 s): every run aligns, M is kept exactly, the final risk approaches the oracle's."""
    m = _module("training_init_on_M")
    p = m.params(False)
    data = m.compute(p, np.random.default_rng(m.SEED), progress_factory(False))
    assert data["abs_kappa"].shape == (401, 30)
    assert np.all(data["aligned"]) and np.all(data["distance_to_M"] == 0)
    assert np.all(data["final_excess_risk"] >= data["oracle_final_excess_risk"])
    assert sum(v.nbytes for v in data.values()) < 1_000_000
