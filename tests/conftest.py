import contextlib
import dataclasses
import io

import mpmath
import numpy as np
import pytest


# The session's shared quick runs of every figure and claim, and the fixtures that read them.
_QUICK_RUNS = frozenset({"quick_outputs", "quick_figures", "quick_verification", "quick_claim"})


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): tests that pytest-xdist's --dist loadgroup "
                                       "runs on one worker")


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist with ``--dist loadgroup``, every test that reads the session's quick runs
    goes to one worker, so those runs are computed once per test run, not once per worker."""
    for item in items:
        if _QUICK_RUNS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("quick-runs"))


@pytest.fixture(autouse=True)
def _reset_mpmath():
    """Tests must not leak mpmath precision changes into each other."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


@pytest.fixture
def rng(request):
    """A Generator seeded from the test's name, so each test has its own reproducible stream."""
    seed = np.frombuffer(request.node.nodeid.encode()[:64].ljust(64, b"\0"), dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence(seed.tolist()))


@pytest.fixture
def agg_backend(monkeypatch):
    """Figures are drawn off-screen (the package never selects a backend itself)."""
    import matplotlib

    monkeypatch.setenv("MPLBACKEND", "Agg")
    matplotlib.use("Agg")


@pytest.fixture(scope="session")
def quick_outputs(tmp_path_factory):
    """One output folder for the session's quick runs: the figures' cache entries made there are
    read by the claims that declare them (as in ``slr reproduce``)."""
    from figures.paths import OutputPaths

    return OutputPaths.resolve(tmp_path_factory.mktemp("quick-outputs"))


@dataclasses.dataclass(frozen=True)
class QuickFigures:
    paths: object
    outcomes: dict

    def data(self, name):
        """The cached quick-mode data of recipe ``name`` (as its plot receives them)."""
        from figures.cache import DataCache
        from figures.registry import discover_recipes
        from figures.runner import cache_entry

        recipe = next(r for r in discover_recipes() if r.name == name)
        return DataCache(self.paths.cache).load(*cache_entry(recipe, recipe.params(True), True)).data


@pytest.fixture(scope="session")
def quick_figures(quick_outputs):
    """Every recipe run once in quick mode (``run_recipes`` on up to 2 workers) into
    ``quick_outputs``; the tests that only read a recipe's outcome, files or data share it."""
    import matplotlib

    from figures.registry import discover_recipes
    from figures.runner import run_recipes
    from numerics.pool import available_cores

    matplotlib.use("Agg")
    recipes = discover_recipes()
    outcomes = run_recipes(recipes, paths=quick_outputs, quick=True, echo=lambda *a: None,
                           jobs=min(2, available_cores()))
    return QuickFigures(quick_outputs, {r.name: o for r, o in zip(recipes, outcomes)})


@dataclasses.dataclass(frozen=True)
class QuickVerification:
    exit_status: int
    stdout: str
    results: dict


@pytest.fixture(scope="session")
def quick_verification(request, quick_outputs):
    """``slr verify --quick`` of every claim, run once (after the quick figures, whose cached data
    the claims that declare them read): its exit status, its standard output and each claim's
    result."""
    from figures import cli

    request.getfixturevalue("quick_figures")
    captured = {}
    verify_done = cli._verify_done

    def keep(results, *args, **kwargs):
        captured.update((r.claim_id, r) for r in results)
        return verify_done(results, *args, **kwargs)

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setattr(cli, "_verify_done", keep)
        status = cli.main(["verify", "--quick", "--out", str(quick_outputs.out)])
    return QuickVerification(status, out.getvalue(), captured)


_FULL_VERIFY_TEST = "test_verify.py::test_slr_verify_quick_passes_and_writes_reports"


@pytest.fixture(scope="session")
def quick_claim(request):
    """``quick_claim(claim_id)``: the claim's quick-mode result at seed 0, computed once per session
    and shared by the tests that only read it. When the session runs ``slr verify --quick`` of
    every claim anyway (tests/test_verify.py), the results are that run's; otherwise (a few tests
    selected, as the mutation campaign does) each claim is run alone when first asked for."""
    from figures.verify import discover_claims

    if any(item.nodeid.endswith(_FULL_VERIFY_TEST) for item in request.session.items):
        return request.getfixturevalue("quick_verification").results.__getitem__
    claims = {c.claim_id: c for c in discover_claims()}
    cache = {}

    def get(claim_id):
        if claim_id not in cache:
            cache[claim_id] = claims[claim_id](quick=True, seed=0)
        return cache[claim_id]

    return get
