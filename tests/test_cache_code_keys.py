"""Cache keys computed from the code (figures/codehash.py): every project module a recipe runs,
read from the imports, keys its cache entry; a misspelled module is an error."""

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from figures.cache import DataCache, cache_key
from figures.codehash import code_closure, project_root
from figures.registry import Recipe, discover_recipes

RECIPES = ("risk_routes", "phase_portrait", "training_init_on_M")


@pytest.fixture(scope="module")
def scratch_root(tmp_path_factory):
    """A scratch copy of the three project packages, to be edited."""
    root = tmp_path_factory.mktemp("scratch")
    for package in ("theory", "numerics", "figures"):
        shutil.copytree(project_root() / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _key(name, root):
    closure = code_closure(f"figures.recipes.{name}", root=root, skip=("plot",))
    return cache_key(name, closure.digest(), {"n": 1}, 0), closure


@pytest.mark.parametrize("name", RECIPES)
def test_editing_any_imported_module_makes_the_entry_stale(scratch_root, tmp_path, name):
    key, closure = _key(name, scratch_root)
    cache = DataCache(tmp_path)
    cache.save(name, key, {"x": np.zeros(2)}, recipe=name, source_hash=closure.digest(), params={"n": 1}, seed=0)
    assert cache.load(name, key).status == "hit"
    assert len(closure.modules()) >= 6
    for module, path in zip(closure.modules(), closure.files()):
        original = path.read_text()
        path.write_text(original + "\n_EDITED_BY_TEST = 1\n")
        try:
            edited, _ = _key(name, scratch_root)
        finally:
            path.write_text(original)
        assert cache.load(name, edited).status == "stale", module
    assert _key(name, scratch_root)[0] == key  # restored: the entry is valid again


def test_the_issue_examples_are_covered():
    """Editing numerics.task or numerics.geometry makes risk_routes stale, and the modules of the
    PGD step phase_portrait (found from the functions, so that renames do not matter)."""
    from numerics import overlap_pgd, sample_task, vectors_from_overlaps

    recipes = {r.name: r for r in discover_recipes()}
    assert {sample_task.__module__, vectors_from_overlaps.__module__} <= set(recipes["risk_routes"].code_modules)
    assert overlap_pgd.__module__ in recipes["phase_portrait"].code_modules


@pytest.mark.parametrize("name", ["risk_routes", "phase_portrait"])
def test_every_project_module_whose_code_runs_is_in_the_closure(name):
    """An independent route: record the project files whose functions are called while the
    recipe computes (quick size); each must be in the closure read from the imports (risk_routes:
    figures.sample_size too)."""
    recipe = {r.name: r for r in discover_recipes()}[name]
    root = project_root()
    ran = set()

    def record(frame, event, arg):
        if event == "call":
            ran.add(frame.f_code.co_filename)

    from numerics.progress import bar

    sys.setprofile(record)
    try:
        recipe.compute(recipe.params(True), np.random.default_rng(0), bar)
    finally:
        sys.setprofile(None)
    modules = set()
    for filename in ran:
        path = Path(filename).resolve()
        if root in path.parents and path.parts[len(root.parts)] in ("theory", "numerics", "figures"):
            parts = path.relative_to(root).with_suffix("").parts
            modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    modules.discard("numerics.progress")  # the progress bar the runner passes in, not the recipe's code
    assert modules and modules <= set(recipe.code_modules), modules - set(recipe.code_modules)


@pytest.mark.parametrize("module", ["figures.saving", "figures.verify.checks", "figures.verify.report",
                                    "figures.runner", "figures.style"])
def test_editing_the_saving_or_verification_code_keeps_risk_routes_cached(scratch_root, module):
    """risk_routes' compute sizes its Monte-Carlo points with figures.sample_size, which imports
    statistics only: an edit to how figures are saved, run or verified leaves its key as it was."""
    key, closure = _key("risk_routes", scratch_root)
    assert "figures.sample_size" in closure.modules() and module not in closure.modules()
    path = scratch_root.joinpath(*module.split(".")).with_suffix(".py")
    original = path.read_text()
    path.write_text(original + "\n_EDITED_BY_TEST = 1\n")
    try:
        assert _key("risk_routes", scratch_root)[0] == key
    finally:
        path.write_text(original)


_MODULE = '''
NAME, TITLE, SEED = "x", "x", 0
{imports}


def params(quick):
    return {{}}


def compute(p, rng, progress):
    return {{"y": 1}}


def plot(data, p):
    return None
'''


def _recipe_from(tmp_path, imports):
    import importlib.util

    path = tmp_path / "scratch_recipe.py"
    path.write_text(_MODULE.format(imports=imports))
    spec = importlib.util.spec_from_file_location("scratch_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_name_from_a_lazy_namespace_keys_the_module_that_defines_it():
    """``from theory import X`` with theory a lazy namespace (``theory.namespace``): the closure holds
    the module defining X (found here from the object itself), the package's table and the
    namespace module whose ``__getattr__`` resolves the name."""
    from numerics.dynamics import overlap_pgd
    from theory import Problem, zeta

    source = _MODULE.format(imports="from theory import Problem, zeta\nfrom numerics.dynamics import overlap_pgd")
    modules = set(code_closure("scratch_recipe", text=source).modules())
    defining = {Problem.__module__, zeta.__module__, overlap_pgd.__module__}
    assert defining | {"theory", "numerics.dynamics", "theory.namespace"} <= modules, modules


@pytest.mark.parametrize("line, message", [
    ("import numerics.no_such_module  # noqa", "module 'numerics.no_such_module'"),
    ("from theory import no_such_name  # noqa", "name 'no_such_name' imported from theory"),
])
def test_an_unknown_project_module_is_an_error(tmp_path, line, message):
    source = _MODULE.format(imports=line)
    with pytest.raises(ValueError, match=message):
        code_closure("scratch_recipe", text=source)
    module = _recipe_from(tmp_path, "")
    module.DEPENDS = ("numerics.task",)
    with pytest.raises(ValueError, match="defines DEPENDS, which is not allowed"):
        Recipe.from_module(module)


def test_imports_and_plot_functions_are_found_at_any_depth_and_the_parse_stays_shared(tmp_path):
    """Imports in functions, classes, if/else, try/except/finally and with blocks join the closure;
    a ``plot`` nested in a class or an if block is left out with the imports only it used; the
    parsed tree that every closure shares is not changed by leaving functions out."""
    import ast

    from figures import codetree

    package = tmp_path / "figures" / "recipes"
    package.mkdir(parents=True)
    (tmp_path / "figures" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    for name in ("a", "b", "c", "d", "e"):
        (package / f"_{name}.py").write_text(f"X_{name} = 1\n")
    text = ("import figures.recipes._a\n"
            "class K:\n    def plot(self):\n        return figures.recipes._a\n"
            "    def f(self):\n        from figures.recipes import _b\n"
            "if True:\n    def plot():\n        pass\nelse:\n    import figures.recipes._c\n"
            "try:\n    pass\nexcept ImportError:\n    from . import _d\nfinally:\n    pass\n"
            "with open('x') as fh:\n    import figures.recipes._e\n")
    (package / "demo.py").write_text(text)
    closure = code_closure("figures.recipes.demo", root=tmp_path, skip=("plot",))
    assert closure.modules() == ["figures.recipes._b", "figures.recipes._c", "figures.recipes._d",
                                 "figures.recipes._e", "figures.recipes.demo"]
    kept = closure.followed["figures.recipes.demo"]
    assert "def plot" not in kept and "def f" in kept and "import figures.recipes._a" not in kept
    tree = codetree.parse(text, str(package / "demo.py"))
    assert ast.dump(tree) == ast.dump(ast.parse(text))


def test_a_process_given_the_code_keys_of_a_run_does_not_compute_them(monkeypatch):
    """``slr reproduce`` computes the recipes' code keys once (figures.registry.code_keys) and a
    worker builds its recipes with them (use_code_keys), reading and parsing no project code."""
    from figures import registry

    recipes = discover_recipes()
    keys = registry.code_keys(recipes)
    monkeypatch.setattr(registry, "_KEYED", {})

    def refuse(module):
        raise AssertionError(f"the code key of {module.__name__} was computed again")

    monkeypatch.setattr(registry, "_code_key", refuse)
    with pytest.raises(AssertionError, match="computed again"):
        registry.find_recipe(recipes[0].name)
    registry.use_code_keys(keys)
    for recipe in recipes:
        assert registry.find_recipe(recipe.name) == recipe


def test_outlines_from_the_store_give_the_closures_of_parsed_trees(tmp_path, monkeypatch):
    """Every recipe's closure is the same computed from parsed trees (no store), with a new store
    (which it fills and writes), from that store in a new state without parsing any text, and with
    a store that is not one (recomputed, then rewritten)."""
    from figures import codehash, codetree
    from figures.registry import RECIPE_PACKAGE, public_modules

    names = [m.__name__ for m in public_modules(RECIPE_PACKAGE)]

    def closures():
        return {n: (c.followed, c.texts, c.digest())
                for n in names for c in [code_closure(n, skip=("plot",))]}

    def parsed_pruned(text, filename, skip):
        tree = codetree.without(codetree.parse(text, filename), skip)
        return codetree.unparse(tree), tree

    with monkeypatch.context() as m:   # the trees themselves, as before there was a store
        m.setattr(codehash, "outline", lambda text, filename="<unknown>": codetree.parse(text, filename))
        m.setattr(codehash, "pruned", parsed_pruned)
        reference = closures()
    store = tmp_path / "store.pickle"
    monkeypatch.setattr(codetree, "_store_path", lambda: store)

    def fresh_state():
        monkeypatch.setattr(codetree, "_STORE", {"answers": None, "dirty": False, "used": set()})

    fresh_state()
    assert closures() == reference and store.is_file()
    fresh_state()
    with monkeypatch.context() as m:
        m.setattr(codetree, "parse", lambda *a, **k: pytest.fail("a stored text was parsed again"))
        assert closures() == reference
    store.write_bytes(b"not a store")
    fresh_state()
    assert closures() == reference
    fresh_state()
    assert len(codetree._answers()) >= len(names)   # rewritten
