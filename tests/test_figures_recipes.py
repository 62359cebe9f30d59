"""Every figure recipe runs in quick mode into a temporary folder and writes its PNG and PDF."""

import numpy as np
import pytest

from figures.cache import DataCache
from figures.printcheck import print_problems
from figures.registry import discover_recipes
from figures.runner import cache_entry
from figures.saving import ticks_placed_once
from figures.shared_mathtext import shared_mathtext, shared_text_metrics
from figures.style import figure_style

RECIPES = discover_recipes()


pytestmark = pytest.mark.usefixtures("agg_backend", "drawing_collections")


def test_the_first_recipes_are_registered():
    assert {"risk_routes", "phase_portrait"} <= {r.name for r in RECIPES}


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_recipe_quick_run(recipe, quick_figures):
    # The session's one quick run of every recipe into an empty folder (tests/conftest.py).
    paths = quick_figures.paths
    params = recipe.params(True)
    skip = recipe.skip_reason(params) if recipe.skip_reason else None
    outcome = quick_figures.outcomes[recipe.name]
    if skip:
        assert outcome.status == "skipped" and outcome.reason == skip
        pytest.skip(f"the recipe cannot compute on this machine: {skip}")
    assert outcome.status in quick_figures.COMPUTED_THIS_RUN, outcome.reason
    for f in paths.figure_files(recipe.name):
        assert f.stat().st_size > 1000, f
    assert f.read_bytes()[:5] == b"%PDF-"
    assert params == recipe.params(True) and params != recipe.params(False)
    # Fit for a paper at its declared print size: width, no layout warning, text >= 7 pt, no
    # overlapping text, no legend over an axes, only the palette (figures.printcheck). Drawn as the
    # runner draws and saves a figure: each mathtext string parsed, each text measured and laid out,
    # each axis's ticks placed once per process (the same pixels and extents, tests/test_figures_save.py;
    # the 14 checks in one process: 8.4 s CPU without, 4.8 s with).
    stem, key = cache_entry(recipe, params, True)
    with figure_style(), shared_mathtext(), shared_text_metrics(), ticks_placed_once():
        fig = recipe.plot(DataCache(paths.cache).load(stem, key).data, params)
        assert print_problems(fig) == []


def test_phase_portrait_data_shows_the_fixed_points_on_m(quick_figures):
    data = quick_figures.data("phase_portrait")
    kinds = dict(zip(map(tuple, data["fixed_points"]), data["fixed_kind"]))
    assert kinds[(0.0, 0.0)] == "saddle"
    assert kinds[(1.0, 1.0)] == kinds[(-1.0, -1.0)] == "stable node"
    assert kinds[(1.0, -1.0)] == kinds[(-1.0, 1.0)] == "unstable node"
    # the field vanishes at the fixed points that lie on the grid (0 and +-1 are grid nodes)
    axis = data["axis"]
    for k, n in data["fixed_points"]:
        i, j = np.argmin(abs(axis - n)), np.argmin(abs(axis - k))
        assert data["speed"][i, j] < 1e-12
    # PGD started on M stays on M up to roundoff (paper Theorem 5 setting)
    assert np.max(data["pgd_distance_to_M"]) < 1e-12


def test_risk_routes_residuals_are_consistent_with_the_data(quick_figures):
    data = quick_figures.data("risk_routes")
    for i in (0, 1):
        np.testing.assert_allclose(data[f"mc_residual_{i}"] * data[f"mc_stderr_{i}"],
                                   data[f"mc_{i}"] - data[f"closed_points_{i}"], rtol=1e-12, atol=1e-15)
        assert np.all(data[f"quad_abserr_{i}"] > 0) and np.all(data[f"mc_stderr_{i}"] > 0)
    assert float(data["z_band"]) > 2
