import dataclasses
import gc
import os
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
from quick_run import quick_cli_run


def _import_hypothesis_unrewritten(config):
    """Hypothesis's own modules load as installed, not assertion-rewritten: pytest marks every
    package of a distribution that declares a pytest plugin for assertion rewriting, hypothesis
    (~100 modules) with its plugin, and under ``PYTHONDONTWRITEBYTECODE`` it rewrites them again
    in each process that imports hypothesis (both xdist workers while collecting
    tests/test_property_sweep.py, and the process that prints the terminal summary, where the
    plugin imports it): ~0.7 s CPU each. The tests' own modules are still rewritten. Without the
    hook's table (another pytest) it is a no-op."""
    hook = getattr(config.pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and "hypothesis" not in sys.modules:
        marked.discard("hypothesis")


def pytest_configure(config):
    _import_hypothesis_unrewritten(config)
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:
        # A pytest-xdist worker (``python -m pytest -n 2``): no oversubscription, workers x BLAS
        # threads <= cores (numerics/kernels/blas.py), as for the project's own pool workers.
        from numerics.kernels import blas_threads_per_worker, limit_blas_threads

        limit_blas_threads(blas_threads_per_worker(int(workers)))


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """The cycle collector paused while the tests are collected. Collecting imports the test
    modules and through them numpy, scipy, sympy, numba and the project: objects that all stay
    alive, which every collection of the older generations walks again. Measured with
    ``gc.callbacks`` in each worker of ``python -m pytest -n 2`` (load 10-13): the collector took
    1.05 s of the 4.46 s CPU of a worker's collection, 0.03 s paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        if enabled:
            gc.enable()


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    """The tests run with the youngest generation of the cycle collector collected after
    ``figures.saving.GC_YOUNG_THRESHOLD`` net allocations instead of 700 (``fewer_collections``,
    for the same reason as when a figure is drawn: a test process holds ~10^6 objects that each
    collection reaching the older generations walks again). Measured with ``gc.callbacks`` in
    each worker of ``python -m pytest -n 2`` (load 10-13): the collector's CPU after collection
    2.1 s and 4.7 s, 0.85 s and 2.75 s with it."""
    from figures.saving import fewer_collections

    with fewer_collections():
        return (yield)


def _once_per_run(tmp_path_factory, name, compute):
    """``compute()``, once per test run. Under pytest-xdist the workers share it: the first worker
    that asks computes it holding an exclusive lock (``flock``) on a file of the run's common
    temporary folder and leaves the value there (pickled); the others wait for the lock, then load
    it (the session's quick reproduction is started in the background as the run begins and holds
    the lock until its value is there: ``_start_quick_reproduction``).
    (xdist's ``--dist loadgroup`` cannot do this: pytest >= 9.2 ignores its group marks,
    pytest-xdist issue 1386.) Serially, or without ``fcntl``, it is just ``compute()``."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute()
    try:
        import fcntl
    except ImportError:  # not POSIX: each worker computes its own
        return compute()
    import pickle

    folder = tmp_path_factory.getbasetemp().parent   # <basetemp>/popen-gwN -> <basetemp>
    with open(folder / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            stored = folder / f"{name}.pickle"
            if stored.exists():
                return pickle.loads(stored.read_bytes())
            value = compute()
            stored.write_bytes(pickle.dumps(value))   # under the lock: no reader sees it half written
            return value
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


# What a new process has loaded after each step of one script, the steps in this order: each step's
# snapshot holds what it and the steps before it loaded, so a check that a step loads no module X,
# made on its snapshot, is at least as strict as the same check in a process of its own.
_NEW_PROCESS_STEPS = (
    ("numerics.pool", "import numerics.pool"),
    ("figures.cli", "import figures.cli"),
    ("packages", "import theory, numerics"),
    ("recipes", "from figures.registry import discover_recipes; discover_recipes()"),
    ("claims", "from figures.verify import discover_claims; discover_claims()"),
    ("symbolic", "import theory.symbolic; from theory.symbolic import manifold"),
    ("probing", "import figures, numerics.probing, numerics.probing.features, numerics.probing.probes, "
                "numerics.probing.experiment, figures.recipes.bert_probing"),
)
_NEW_PROCESS_LIBRARIES = ("scipy", "numba", "sympy", "matplotlib", "mpmath", "numerics", "torch",
                          "transformers", "sklearn", "tokenizers", "safetensors", "huggingface_hub")


@pytest.fixture(scope="session")
def new_process_imports(request, tmp_path_factory):
    """``{step: [module, ...]}``: the modules of ``_NEW_PROCESS_LIBRARIES`` loaded in one new
    process of this interpreter after each of ``_NEW_PROCESS_STEPS``, run one after another
    (one process for the import checks of tests/test_import_cost.py, tests/test_symbolic_manifold.py
    and tests/test_probing.py instead of one each; once per test run)."""
    import json

    lines = ["import json, sys"]
    for step, statement in _NEW_PROCESS_STEPS:
        lines += [statement, f"print(json.dumps([{step!r}, sorted(m for m in sys.modules "
                             f"if m.split('.')[0] in {_NEW_PROCESS_LIBRARIES!r})]))"]

    def compute():
        out = subprocess.run([sys.executable, "-c", "\n".join(lines)], cwd=request.config.rootpath,
                             capture_output=True, text=True, check=True, timeout=300)
        return dict(json.loads(line) for line in out.stdout.splitlines())

    return _once_per_run(tmp_path_factory, "new-process-imports", compute)


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
def demo_reference(tmp_path_factory):
    """The demo figure saved by matplotlib alone (``demo_figure.matplotlib_reference``: its PNG, pixels,
    PDF and box), once per test run (also under pytest-xdist) for the saving tests that compare with it."""
    from demo_figure import matplotlib_reference

    reference = _once_per_run(tmp_path_factory, "demo-reference", matplotlib_reference)
    reference.pixels.flags.writeable = False   # read-only again once unpickled
    return reference


@pytest.fixture(scope="module")
def drawing_collections():
    """A module's figures drawn and saved with the cycle collector of ``figures.runner``'s drawing
    workers (``figures.saving.fewer_collections``: its youngest generation collected after 50,000 net
    allocations, not 700): the same figures, a tenth less CPU."""
    from figures.saving import fewer_collections

    with fewer_collections():
        yield


@pytest.fixture(scope="session")
def quick_outputs(tmp_path_factory):
    """One output folder for the session's quick runs: the figures' cache entries made there are
    read by the claims that declare them (as in ``slr reproduce``)."""
    from figures.paths import OutputPaths

    if os.environ.get("PYTEST_XDIST_WORKER"):   # one folder for every worker of the run
        folder = tmp_path_factory.getbasetemp().parent / "quick-outputs"
        folder.mkdir(exist_ok=True)
        return OutputPaths.resolve(folder)
    return OutputPaths.resolve(tmp_path_factory.mktemp("quick-outputs"))


@dataclasses.dataclass(frozen=True)
class QuickFigures:
    paths: object
    outcomes: dict
    # The statuses of a recipe that this run computed (its folder starts empty): "computed", or
    # "cached" when a claim of the same ``slr reproduce --quick`` that reads the figure's data took
    # the entry's lock first and computed it (figures.runner.figure_data).
    COMPUTED_THIS_RUN = ("computed", "cached")

    def data(self, name):
        """The cached quick-mode data of recipe ``name`` (as its plot receives them)."""
        from figures.cache import DataCache
        from figures.registry import discover_recipes
        from figures.runner import cache_entry

        recipe = next(r for r in discover_recipes() if r.name == name)
        return DataCache(self.paths.cache).load(*cache_entry(recipe, recipe.params(True), True)).data


_FULL_VERIFY_TEST = "test_verify.py::test_slr_verify_quick_passes_and_writes_reports"


def _runs_full_verify(session) -> bool:
    """Whether the session runs the test of ``slr verify --quick`` of every claim (a whole run,
    not a few tests selected as the mutation campaign does)."""
    return any(item.nodeid.endswith(_FULL_VERIFY_TEST) for item in session.items)


_QUICK_FIXTURES = ("quick_reproduction", "quick_figures", "quick_verification", "quick_claim")

# The tests among those that read the session's quick runs that also compute for a second or more
# (each figure drawn again for its print check; three claims run again in one process): the first
# of that group, so that the run ends on tests that only read and the workers end together.
_QUICK_READERS_THAT_COMPUTE = ("test_verify.py::test_claim_results_do_not_depend_on_the_number_of_workers",
                               "test_figures_recipes.py::test_recipe_quick_run[",
                               "test_recipes_training.py::test_quick_data_matches_the_numerics[",
                               "test_recipes_sgd.py::test_quick_run_writes_png_and_pdf[")


def pytest_collection_modifyitems(session, config, items):
    """In a whole run, the tests that read the session's quick runs come last (otherwise in their
    order): under pytest-xdist the quick reproduction, started in the background as the run begins
    (``_start_quick_reproduction``), is then done or nearly when the first of them asks for it, and
    no worker waits idle for it while other tests remain. Among them, those that also compute come
    first (``_QUICK_READERS_THAT_COMPUTE``)."""
    if any(item.nodeid.endswith(_FULL_VERIFY_TEST) for item in items):
        def order(item):
            reads = any(name in _QUICK_FIXTURES for name in item.fixturenames)
            computes = any(part in item.nodeid for part in _QUICK_READERS_THAT_COMPUTE)
            return reads, reads and not computes

        items.sort(key=order)


def _reproduce_argv(quick_outputs):
    from numerics.pool import available_cores

    return ["reproduce", "--quick", "--jobs", str(min(2, available_cores())), "--no-progress",
            "--out", str(quick_outputs.out)]


@pytest.fixture(scope="session", autouse=True)
def _start_quick_reproduction(request, tmp_path_factory):
    """Under pytest-xdist, in a whole run: the session's ``slr reproduce --quick`` starts in the
    background as the run begins (``python tests/quick_run.py``), started by the first worker that
    takes the lock of ``_once_per_run``; that process holds the lock (the same open file) until it
    has left its pickled result, which ``quick_reproduction`` then loads as usual. So its pool's
    2 processes and both workers' other tests share the cores, instead of one worker computing it
    and the other waiting idle for the tests that read it (while the pool's queue drains to its
    longest item, one of its 2 processes has nothing to do either). If the background run leaves
    no result, the first worker that asks computes it itself, as serially."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not _runs_full_verify(request.session):
        yield
        return
    try:
        import fcntl
    except ImportError:  # not POSIX: each worker computes its own (``_once_per_run``)
        yield
        return

    folder = tmp_path_factory.getbasetemp().parent   # <basetemp>/popen-gwN -> <basetemp>
    argv = _reproduce_argv(request.getfixturevalue("quick_outputs"))
    with open(folder / "quick-reproduction.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:   # another worker started it
            child = None
        else:
            rootdir = str(request.config.rootpath)
            env = dict(os.environ, MPLBACKEND="Agg",
                       PYTHONPATH=os.pathsep.join(filter(None, [rootdir, os.environ.get("PYTHONPATH")])))
            with open(folder / "quick-reproduction.log", "w") as log:
                child = subprocess.Popen([sys.executable, str(Path(__file__).with_name("quick_run.py")),
                                          str(folder / "quick-reproduction.pickle"), *argv],
                                         cwd=rootdir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, pass_fds=(lock.fileno(),))
    yield   # this worker's copy of the lock's file is closed: the child's copy keeps the lock
    if child is not None:
        if child.poll() is None:   # the run ended before it (-x, an interrupted run)
            child.terminate()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@pytest.fixture(scope="session")
def quick_reproduction(request, quick_outputs, tmp_path_factory):
    """``slr reproduce --quick --jobs 2`` into ``quick_outputs``, once per test run (also under
    pytest-xdist, where it starts in the background as the run begins: ``_start_quick_reproduction``):
    every recipe and every claim in one queue of (up to) 2 worker processes, the claims reading the
    figures' cached data, as a user's ``slr reproduce --quick`` does. Its (exit status, standard
    output, {recipe: outcome}, {claim id: result})."""
    import matplotlib

    matplotlib.use("Agg")
    argv = _reproduce_argv(quick_outputs)
    return _once_per_run(tmp_path_factory, "quick-reproduction",
                         lambda: quick_cli_run(argv, figures=True, claims=True))


@pytest.fixture(scope="session")
def quick_figures(request, quick_outputs, tmp_path_factory):
    """Every recipe run once in quick mode into ``quick_outputs``, once per test run (also under
    pytest-xdist); the tests that only read a recipe's outcome, files or data share it. In a whole
    run they are the figures of the session's ``slr reproduce --quick`` (``quick_reproduction``);
    when only a few tests are selected (the mutation campaign), ``run_recipes`` alone on up to 2
    workers, without the claims."""
    import matplotlib

    from figures.registry import discover_recipes
    from figures.runner import run_recipes
    from numerics.pool import available_cores

    if _runs_full_verify(request.session):   # its figures are under <out>/quick, as for any --quick run
        from figures.paths import OutputPaths

        return QuickFigures(OutputPaths.resolve(quick_outputs.out, quick=True),
                            request.getfixturevalue("quick_reproduction")[2])
    matplotlib.use("Agg")

    def compute():
        recipes = discover_recipes()
        outcomes = run_recipes(recipes, paths=quick_outputs, quick=True, echo=lambda *a: None,
                               jobs=min(2, available_cores()))
        return {r.name: o for r, o in zip(recipes, outcomes)}

    return QuickFigures(quick_outputs, _once_per_run(tmp_path_factory, "quick-figures", compute))


@dataclasses.dataclass(frozen=True)
class QuickVerification:
    exit_status: int
    stdout: str
    results: dict


@pytest.fixture(scope="session")
def quick_verification(request, quick_outputs, tmp_path_factory):
    """The quick verification of every claim, once per test run, after the quick figures, whose
    cached data the claims that declare them read: its exit status, its standard output and each
    claim's result. In a whole run it is the session's ``slr reproduce --quick``
    (``quick_reproduction``); otherwise ``slr verify --quick`` after ``quick_figures``."""
    if _runs_full_verify(request.session):
        status, stdout, _, results = request.getfixturevalue("quick_reproduction")
        return QuickVerification(status, stdout, results)
    request.getfixturevalue("quick_figures")
    argv = ["verify", "--quick", "--out", str(quick_outputs.out)]
    status, stdout, _, results = _once_per_run(tmp_path_factory, "quick-verification",
                                               lambda: quick_cli_run(argv, claims=True))
    return QuickVerification(status, stdout, results)


@pytest.fixture(scope="session")
def quick_claim(request):
    """``quick_claim(claim_id)``: the claim's quick-mode result at seed 0, computed once per session
    and shared by the tests that only read it. When the session runs ``slr verify --quick`` of
    every claim anyway (tests/test_verify.py), the results are that run's; otherwise (a few tests
    selected, as the mutation campaign does) each claim is run alone when first asked for."""
    from figures.verify import discover_claims

    if _runs_full_verify(request.session):
        return request.getfixturevalue("quick_verification").results.__getitem__
    claims = {c.claim_id: c for c in discover_claims()}
    cache = {}

    def get(claim_id):
        if claim_id not in cache:
            cache[claim_id] = claims[claim_id](quick=True, seed=0)
        return cache[claim_id]

    return get
