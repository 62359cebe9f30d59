"""The recipe runner: cache hits skip compute; stale, corrupt or forced entries recompute."""

import json

import numpy as np
import pytest

from figures.paths import OutputPaths
from figures.registry import Recipe, select
from figures.runner import outcome_table, run_recipes


pytestmark = pytest.mark.usefixtures("agg_backend")


def make_recipe(calls, *, name="demo", n=4, skip=None, fail=False):
    """A tiny recipe counting its compute calls in ``calls`` (a list)."""
    def params(quick):
        return {"n": 2 if quick else n}

    def compute(p, rng, progress):
        calls.append(p)
        if fail:
            raise ArithmeticError("diverged")
        with progress(total=p["n"], desc=name) as bar:
            values = rng.standard_normal(p["n"])
            bar.update(p["n"])
        return {"x": np.arange(p["n"], dtype=float), "y": values}

    def plot(data, p):
        from matplotlib.figure import Figure

        fig = Figure(figsize=(2, 2))
        ax = fig.subplots()
        ax.plot(data["x"], data["y"])
        ax.set_axis_off()   # no text, so no font to subset in the PDF (~0.2-0.5 s CPU a save)
        return fig

    return Recipe(name=name, title="demo", seed=3, params=params, compute=compute, plot=plot,
                  source_hash="src-v1", skip_reason=skip)


def _run(recipe, tmp_path, **kw):
    paths = OutputPaths.resolve(tmp_path / "out")
    outcomes = run_recipes([recipe], paths=paths, echo=lambda *a: None, **kw)
    return outcomes[0], paths


def test_second_run_is_a_cache_hit_and_plots_the_same_data(tmp_path):
    calls = []
    recipe = make_recipe(calls)
    first, paths = _run(recipe, tmp_path)
    assert first.status == "computed" and len(calls) == 1
    for f in paths.figure_files("demo"):
        assert f.stat().st_size > 0
    seen = []
    spy = Recipe(**{**recipe.__dict__, "plot": lambda data, p: seen.append(data) or recipe.plot(data, p)})
    second, _ = _run(spy, tmp_path)
    assert second.status == "cached" and len(calls) == 1
    np.testing.assert_array_equal(seen[0]["y"], np.random.default_rng(np.random.SeedSequence(3)).standard_normal(4))


def test_force_recomputes(tmp_path):
    calls = []
    _run(make_recipe(calls), tmp_path)
    outcome, _ = _run(make_recipe(calls), tmp_path, force=True)
    assert outcome.status == "computed" and outcome.reason == "forced" and len(calls) == 2


def test_changed_parameters_or_source_make_the_entry_stale(tmp_path):
    calls = []
    _run(make_recipe(calls, n=4), tmp_path)
    outcome, _ = _run(make_recipe(calls, n=5), tmp_path)
    assert outcome.status == "computed" and outcome.reason.startswith("stale") and len(calls) == 2
    edited = Recipe(**{**make_recipe(calls, n=5).__dict__, "source_hash": "src-v2"})
    outcome, _ = _run(edited, tmp_path)
    assert outcome.reason.startswith("stale") and len(calls) == 3


@pytest.mark.parametrize("damage", ["truncate", "edit sidecar"])
def test_corrupt_entry_is_recomputed(tmp_path, damage):
    calls = []
    _, paths = _run(make_recipe(calls), tmp_path)
    npz, sidecar = paths.cache / "demo.npz", paths.cache / "demo.json"
    if damage == "truncate":
        npz.write_bytes(npz.read_bytes()[: npz.stat().st_size // 2])
    else:
        meta = json.loads(sidecar.read_text())
        meta["seed"] = 4
        sidecar.write_text(json.dumps(meta))
    outcome, _ = _run(make_recipe(calls), tmp_path)
    assert outcome.status == "computed" and outcome.reason.startswith("corrupt") and len(calls) == 2
    again, _ = _run(make_recipe(calls), tmp_path)
    assert again.status == "cached" and len(calls) == 2


def test_quick_and_full_entries_coexist(tmp_path):
    calls = []
    _run(make_recipe(calls), tmp_path, quick=True)
    _run(make_recipe(calls), tmp_path)
    assert _run(make_recipe(calls), tmp_path, quick=True)[0].status == "cached"
    assert _run(make_recipe(calls), tmp_path)[0].status == "cached"
    assert [c["n"] for c in calls] == [2, 4]


def test_failure_is_reported_and_other_recipes_run(tmp_path):
    calls = []
    paths = OutputPaths.resolve(tmp_path)
    outcomes = run_recipes([make_recipe(calls, name="bad", fail=True), make_recipe(calls, name="good")],
                           paths=paths, echo=lambda *a: None)
    assert [o.status for o in outcomes] == ["failed", "computed"]
    assert "ArithmeticError: diverged" in outcomes[0].reason
    assert not (paths.cache / "bad.npz").exists()
    table = outcome_table(outcomes, paths)
    assert "failed" in table and "good" in table and str(paths.figures) in table


def test_skip_reason_only_matters_without_cached_data(tmp_path):
    calls = []
    outcome, _ = _run(make_recipe(calls, skip=lambda p: "needs torch"), tmp_path)
    assert outcome.status == "skipped" and outcome.reason == "needs torch" and calls == []
    _run(make_recipe(calls), tmp_path)
    outcome, _ = _run(make_recipe(calls, skip=lambda p: "needs torch"), tmp_path)
    assert outcome.status == "cached"


def test_select_by_repeated_or_comma_separated_names():
    recipes = [make_recipe([], name=n) for n in ("a", "b", "c")]
    assert [r.name for r in select(recipes, ["a,c"])] == ["a", "c"]
    assert [r.name for r in select(recipes, ["c", "b"])] == ["b", "c"]
    assert len(select(recipes, None)) == 3
    with pytest.raises(ValueError, match="--only zz is not allowed"):
        select(recipes, ["a", "zz"])


def test_default_paths_are_absolute_and_out_of_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = OutputPaths.resolve()
    assert paths.out.is_absolute() and paths.cache == paths.out / "cache"
    assert (paths.out.parent / "pyproject.toml").is_file()   # the checkout, not the cwd
    custom = OutputPaths.resolve("rel", "c")
    assert custom.out == tmp_path / "rel" and custom.cache == tmp_path / "c"


_MODULE = '''
NAME = "tmp_recipe"
TITLE = "t"
SEED = 1


def params(quick):
    return {{"n": 3}}


def compute(p, rng, progress):
    return {{"x": rng.standard_normal(p["n"]) * {scale}}}


def plot(data, p):
    return {plot_body}
'''


def _load(tmp_path, name, scale, plot_body):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(_MODULE.format(scale=scale, plot_body=plot_body))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Recipe.from_module(module)


def test_source_hash_ignores_plot_but_not_compute(tmp_path):
    base = _load(tmp_path, "m1", 1.0, "None")
    restyled = _load(tmp_path, "m2", 1.0, "'another style'")
    changed = _load(tmp_path, "m3", 2.0, "None")
    assert base.source_hash == restyled.source_hash
    assert base.source_hash != changed.source_hash


def test_the_checkout_state_is_asked_of_git_once_per_process(monkeypatch):
    """Every figure's metadata records the commit and whether the checkout is dirty: git runs once per
    process and checkout (a rev-parse and a status), and each call returns a dict of its own."""
    import subprocess

    from figures import provenance
    from figures.paths import default_root

    if not (default_root() / ".git").exists():
        pytest.skip("not a git checkout")
    calls = []
    run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: calls.append(argv[3]) or run(argv, **kw))
    provenance._git_revision.cache_clear()
    try:
        first, second = provenance.git_revision(), provenance.git_revision(default_root())
        assert first == second and first is not second and len(first["commit"]) == 40
        assert calls == ["rev-parse", "status"]
        first["commit"] = "edited"
        assert provenance.git_revision()["commit"] == second["commit"]
    finally:
        provenance._git_revision.cache_clear()
