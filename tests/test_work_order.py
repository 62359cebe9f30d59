"""figures.work.run_items on several workers: the queue starts with the longest items (recipes'
COST, claims' cost), and the results come back in input order."""

import figures.work as work
from figures.verify.framework import Check, claim


def _claim(name, cost):
    return claim(name, "s", cost=cost)(
        lambda quick, rng: Check(method="m", measured=0.0, measured_text="", tolerance=1.0, derivation="d"))


def test_longest_items_start_first_and_results_keep_input_order(monkeypatch):
    items = [_claim("a", 1.0), _claim("b", 30.0), _claim("c", 0.0), _claim("d", 5.0)]
    queued = []

    def fake_map(fn, tasks, *, jobs, on_result, progress_queue):
        queued.extend(name for _, name, *_ in tasks)
        return [f"result of {name}" for _, name, *_ in tasks]

    monkeypatch.setattr(work, "ordered_map", fake_map)
    results = work.run_items(items, work.RunOptions(), jobs=2)
    assert queued == ["b", "d", "a", "c"]
    assert results == ["result of a", "result of b", "result of c", "result of d"]


def test_recipes_and_claims_share_one_order():
    from figures.registry import discover_recipes

    recipes = discover_recipes()
    assert all(r.cost >= 0 for r in recipes)
    assert _claim("x", 12.5).cost == 12.5 and _claim("y", 0).cost == 0.0


def test_a_worker_finds_its_item_without_importing_every_recipe_and_claim(monkeypatch):
    """run_named's lookup: a claim in the module named by its task, a recipe in its own module;
    discovery of every claim only when the claim is not in that module."""
    import figures.verify as verify
    from figures.registry import discover_recipes

    claims = verify.discover_claims()
    recipe = discover_recipes()[0]
    discovered = []
    monkeypatch.setattr(verify, "discover_claims", lambda: discovered.append(1) or claims)
    for c in claims:
        assert work._find("claim", c.name, work._module(c)) is c
    assert work._find("figure", recipe.name, work._module(recipe)) == recipe
    assert not discovered
    assert work._find("claim", claims[0].name, "figures.verify.claims") is claims[0]  # not there: discovery
    assert discovered == [1]


def test_the_workers_get_the_recipes_code_keys_computed_once(monkeypatch):
    """Every task of a pooled run carries the code keys of the run's recipes, as this process
    computed them (figures.registry.code_keys), so that no worker computes them again."""
    from figures.registry import code_keys, discover_recipes

    recipes = discover_recipes()[:2]
    sent = []

    def fake_map(fn, tasks, *, jobs, on_result, progress_queue):
        sent.extend(options.code_keys for *_, options in tasks)
        return [None] * len(tasks)

    monkeypatch.setattr(work, "ordered_map", fake_map)
    work.run_items(recipes + [_claim("a", 1.0)], work.RunOptions(), jobs=2)
    assert sent == [code_keys(recipes)] * 3 and len(sent[0]) == 2


def test_the_costs_measured_by_the_last_report_order_the_work(monkeypatch, tmp_path):
    """With a verification.json in the output folder, its CPU seconds order the queue (claims, and
    figures whose data that run computed); items it does not list keep their declared cost; an
    unreadable report is ignored."""
    import json

    from figures.paths import OutputPaths

    paths = OutputPaths.resolve(tmp_path)
    items = [_claim("a", 1.0), _claim("b", 30.0), _claim("c", 0.0), _claim("d", 5.0)]
    queued = []

    def fake_map(fn, tasks, *, jobs, on_result, progress_queue):
        queued.append([name for _, name, *_ in tasks])
        return [None] * len(tasks)

    monkeypatch.setattr(work, "ordered_map", fake_map)
    report = {"claims": [{"claim_id": "a", "cpu_seconds": 40.0}, {"claim_id": "b", "cpu_seconds": 2.0},
                         {"claim_id": "x", "cpu_seconds": 9.0}],
              "figures": [{"name": "f", "status": "computed", "cpu_seconds": 7.0},
                          {"name": "g", "status": "cached", "cpu_seconds": 0.5}]}
    paths.verification_json.write_text(json.dumps(report))
    assert work.measured_costs(paths) == {("claim", "a"): 40.0, ("claim", "b"): 2.0, ("claim", "x"): 9.0,
                                          ("figure", "f"): 7.0}
    work.run_items(items, work.RunOptions(paths=paths), jobs=2)
    paths.verification_json.write_text("{")
    work.run_items(items, work.RunOptions(paths=paths), jobs=2)
    assert queued == [["a", "d", "b", "c"], ["b", "d", "a", "c"]]
    assert work.measured_costs(None) == {} and work.measured_costs(paths) == {}
