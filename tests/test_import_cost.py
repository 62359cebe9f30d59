"""What a new process of the project imports before it does any work: the ``slr`` command line,
each pool worker (numerics.pool) and each test subprocess import ``theory``, ``numerics`` and
``figures.cli``. The packages' namespaces are lazy (``theory.namespace``): ``theory``, ``numerics``
and their subpackages import a module when one of its names is first used, so that these imports load
no scipy at all; the heavy libraries (scipy's stats, optimize and integrate, matplotlib, sympy, numba)
load where they are first used (``import scipy`` then ``scipy.optimize.brentq``: scipy loads its
submodules on first access). benchmarks/bench_imports.py measures the CPU time of these imports."""

import subprocess
import sys

import pytest

HEAVY = ("scipy.stats", "scipy.optimize", "scipy.integrate", "matplotlib", "sympy", "numba")


def test_the_packages_and_the_command_line_load_no_heavy_library():
    code = ("import sys, theory, numerics, numerics.pool, figures.cli; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == ""


def _loaded_after(statement: str, prefixes) -> list[str]:
    code = (f"import sys; {statement}; "
            f"print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {tuple(prefixes)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return out.stdout.split()


@pytest.mark.parametrize("statement", ["import numerics.pool", "import figures.cli"])
def test_a_worker_and_the_command_line_load_no_scipy_and_no_numerics_route(statement):
    """A pool worker (``import numerics.pool``) and the ``slr`` command line load neither scipy nor
    numba nor sympy, nor any module of the numerics routes (dynamics, montecarlo, sgd): only the
    packages' lazy namespaces."""
    loaded = _loaded_after(statement, ("scipy", "numba", "sympy", "numerics"))
    assert not [m for m in loaded if m.split(".")[0] in ("scipy", "numba", "sympy")], loaded
    namespaces = {"numerics.dynamics", "numerics.montecarlo", "numerics.sgd"}
    routes = [m for m in loaded if m.split(".")[1:2] in (["dynamics"], ["montecarlo"], ["sgd"])]
    assert set(routes) <= namespaces, sorted(set(routes) - namespaces)


def test_the_lazy_namespaces_re_export_as_eager_imports_would():
    """``from numerics import X``, ``numerics.X``, ``dir``, ``__all__`` and ``import *`` give the
    objects the modules define; a name that is also its module's name (``theory.zeta``) stays the
    re-exported object after the module is imported, as with ``from .zeta import zeta``."""
    code = """
import importlib, numerics, theory
from numerics import overlap_pgd, risk_vs_d, RunJob
import numerics.dynamics.pgd, numerics.montecarlo.risk_vs_d, numerics.executors
assert overlap_pgd is numerics.overlap_pgd is numerics.dynamics.pgd.overlap_pgd
assert risk_vs_d is numerics.montecarlo.risk_vs_d is importlib.import_module('numerics.montecarlo.risk_vs_d').risk_vs_d
assert RunJob is numerics.executors.RunJob
import theory.zeta
assert callable(theory.zeta) and theory.zeta is importlib.import_module('theory.zeta').zeta
for package in (numerics, theory, numerics.dynamics, numerics.montecarlo, numerics.sgd):
    assert set(package.__all__) <= set(dir(package)), package
    namespace = {}
    exec(f'from {package.__name__} import *', namespace)
    assert all(namespace[n] is getattr(package, n) for n in package.__all__), package
    assert set(namespace) - {'__builtins__'} == set(package.__all__), package
try:
    numerics.no_such_name
except AttributeError as exc:
    assert "'numerics' has no attribute 'no_such_name'" in str(exc), exc
else:
    raise AssertionError('numerics.no_such_name did not raise AttributeError')
print('ok')
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr



@pytest.fixture(scope="module")
def loaded_by_discovery():
    """The heavy modules (and mpmath) loaded in a new process after ``discover_recipes()``, then
    after ``discover_claims()`` too: one process for the two tests below."""
    prefixes = ("scipy", "mpmath", "sympy", "numba", "matplotlib")
    snapshot = f"print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {prefixes!r})))"
    code = ("import sys; from figures.registry import discover_recipes; from figures.verify import discover_claims; "
            f"discover_recipes(); {snapshot}; discover_claims(); {snapshot}")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    recipes, claims = out.stdout.split("\n")[:2]
    return recipes.split(), claims.split()


def test_the_figure_recipes_load_no_plotting_library_until_they_plot(loaded_by_discovery):
    """A claim that reads a figure's data imports that recipe's module in its worker: the recipes and
    their shared plotting helpers import matplotlib inside their plot functions only."""
    after_recipes, _ = loaded_by_discovery
    assert "matplotlib" not in after_recipes, after_recipes


def test_discovering_the_recipes_and_claims_loads_no_heavy_library(loaded_by_discovery):
    """``slr list``, ``slr verify`` and ``slr reproduce`` import every recipe and claim module to
    discover them: the claims import scipy's stats and optimize and mpmath inside their functions."""
    _, after_both = loaded_by_discovery
    heavy = [m for m in after_both if m in (*HEAVY, "mpmath")]
    assert heavy == [], heavy
