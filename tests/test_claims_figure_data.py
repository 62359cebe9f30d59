"""Claims that read a figure's data (``@claim(..., figure=NAME)`` or ``figure=(NAME, ...)``,
figures/verify/framework.py): the dependencies name real recipes, the data comes from that recipe's cache entry when it is valid and
is computed (and stored under the entry's key) otherwise, and concurrent users of one entry wait
for each other."""

import threading
import time

import pytest

from figures.cache import DataCache
from figures.registry import discover_recipes, find_recipe
from figures.runner import entry_lock, cache_entry, figure_data
from figures.verify import Check, claim, discover_claims

CLAIMS = {c.claim_id: c for c in discover_claims()}
READERS = {"theorem5-convergence": ("training_init_on_M",), "sgd-to-flow-order-1": ("sgd_vs_flow",),
           "nonlinearities-softmax-oracle": ("nonlinearity_comparison",),
           "nonlinearities-sgd-training": ("training_online_sgd", "nonlinearity_training"), "highdim-largest-step": ("highdim_sgd",),
           "highdim-paper-sgd": ("highdim_paper_sgd",)}


def test_declared_figures_are_recipes():
    declared = {c.claim_id: c.figures for c in CLAIMS.values() if c.figures}
    assert declared == READERS
    names = {r.name for r in discover_recipes()}
    assert {name for names_read in declared.values() for name in names_read} <= names
    assert find_recipe("sgd_vs_flow").name == "sgd_vs_flow"
    with pytest.raises(ValueError, match="no such recipe"):
        find_recipe("no_such_figure")


def test_claim_reads_the_figure_cache_entry(tmp_path):
    claim = CLAIMS["theorem5-convergence"]
    recipe = find_recipe(*claim.figures)
    stem, key = cache_entry(recipe, recipe.params(True), True)
    first = claim(quick=True, cache=tmp_path)
    assert first.status == "pass", first.measured_text
    assert first.details["figure_data"] == {"recipe": recipe.name, "status": "computed", "key": key}
    # The entry it stored is the one `slr figures --quick` looks up.
    assert DataCache(tmp_path).load(stem, key).status == "hit"
    second = claim(quick=True, cache=tmp_path)
    assert second.details["figure_data"]["status"] == "cached"
    assert second.measured == first.measured and second.measured_text == first.measured_text


def test_a_corrupt_entry_is_recomputed_not_read(tmp_path):
    claim = CLAIMS["theorem5-convergence"]
    recipe = find_recipe(*claim.figures)
    stem, _ = cache_entry(recipe, recipe.params(True), True)
    claim(quick=True, cache=tmp_path)
    npz, _ = DataCache(tmp_path).paths(stem)
    npz.write_bytes(b"not an archive")
    again = claim(quick=True, cache=tmp_path)
    assert again.status == "pass" and again.details["figure_data"]["status"] == "computed"


def test_a_claim_reads_several_figures_in_declared_order(tmp_path):
    seen = []

    def check(quick, rng, first, second):
        seen.append((first.name, second.name, first.params["n_runs"]))
        return Check(method="m", measured=0.0, measured_text="t", tolerance=0.0, derivation="-")

    two = claim("two-figures", "reads two figures", figure=("training_init_on_M", "phase_portrait"))(check)
    assert two.figures == ("training_init_on_M", "phase_portrait")
    result = two(quick=True, cache=tmp_path)
    assert result.status == "pass", result.measured_text
    assert seen == [("training_init_on_M", "phase_portrait", find_recipe("training_init_on_M").params(True)["n_runs"])]
    keys = [cache_entry(find_recipe(n), find_recipe(n).params(True), True)[1] for n in two.figures]
    assert result.details["figure_data"] == [{"recipe": n, "status": "computed", "key": k}
                                             for n, k in zip(two.figures, keys)]
    assert [e["status"] for e in two(quick=True, cache=tmp_path).details["figure_data"]] == ["cached", "cached"]


@pytest.mark.parametrize("bad", [("a", "a"), ("",), (None,)])
def test_declared_figures_must_be_distinct_names(bad):
    with pytest.raises(ValueError, match="figure="):
        claim("bad", "bad", figure=bad)


def test_without_a_cache_folder_the_data_is_computed_in_memory():
    data = figure_data("training_init_on_M", quick=True)
    assert data.status == "computed in memory"
    assert data.data["initial_overlaps"].shape == (5, data.params["n_runs"])


def testentry_lock_serialises_users_of_one_entry(tmp_path):
    cache, events = DataCache(tmp_path), []

    def hold():
        with entry_lock(cache, "entry"):
            events.append("first in")
            time.sleep(0.3)
            events.append("first out")

    thread = threading.Thread(target=hold)
    thread.start()
    while not events:
        time.sleep(0.01)
    with entry_lock(cache, "entry"):
        events.append("second in")
    thread.join()
    assert events == ["first in", "first out", "second in"]
