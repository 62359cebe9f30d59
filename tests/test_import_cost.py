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


def test_the_packages_and_the_command_line_load_no_heavy_library(new_process_imports):
    """``import theory, numerics, numerics.pool, figures.cli`` in a new process (tests/conftest.py)."""
    loaded = new_process_imports["packages"]
    assert [m for m in HEAVY if m in loaded] == [], loaded


@pytest.mark.parametrize("step", ["numerics.pool", "figures.cli"])
def test_a_worker_and_the_command_line_load_no_scipy_and_no_numerics_route(step, new_process_imports):
    """A pool worker (``import numerics.pool``) and the ``slr`` command line (``import figures.cli``,
    after ``numerics.pool`` in the same new process: tests/conftest.py) load neither scipy nor
    numba nor sympy, nor any module of the numerics routes (dynamics, montecarlo, sgd): only the
    packages' lazy namespaces."""
    loaded = new_process_imports[step]
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



def test_the_figure_recipes_load_no_plotting_library_until_they_plot(new_process_imports):
    """A claim that reads a figure's data imports that recipe's module in its worker: the recipes and
    their shared plotting helpers import matplotlib inside their plot functions only (a new process
    after ``discover_recipes()``: tests/conftest.py)."""
    after_recipes = new_process_imports["recipes"]
    assert "matplotlib" not in after_recipes, after_recipes


def test_discovering_the_recipes_and_claims_loads_no_heavy_library(new_process_imports):
    """``slr list``, ``slr verify`` and ``slr reproduce`` import every recipe and claim module to
    discover them: the claims import scipy (special included: ~0.2 s CPU with the numpy modules it
    pulls) and mpmath inside their functions, so the command's own process, which only plans the
    run and writes its reports, loads neither (a new process after ``discover_recipes()`` and
    ``discover_claims()``: tests/conftest.py)."""
    after_both = new_process_imports["claims"]
    heavy = [m for m in after_both if m.split(".")[0] in ("scipy", "mpmath") or m in HEAVY]
    assert heavy == [], heavy
