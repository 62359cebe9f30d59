"""What a new process of the project imports before it does any work: the ``slr`` command line,
each pool worker (numerics.pool) and each test subprocess import ``theory``, ``numerics`` and
``figures.cli``. Those imports load numpy and scipy.special only; the heavy libraries (scipy's
stats, optimize and integrate, matplotlib, sympy, numba) load where they are first used
(``import scipy`` then ``scipy.optimize.brentq``: scipy loads its submodules on first access).
benchmarks/bench_imports.py measures the CPU time of these imports."""

import subprocess
import sys

HEAVY = ("scipy.stats", "scipy.optimize", "scipy.integrate", "matplotlib", "sympy", "numba")


def test_the_packages_and_the_command_line_load_no_heavy_library():
    code = ("import sys, theory, numerics, numerics.pool, figures.cli; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == ""



def test_the_figure_recipes_load_no_plotting_library_until_they_plot():
    """A claim that reads a figure's data imports that recipe's module in its worker: the recipes and
    their shared plotting helpers import matplotlib inside their plot functions only."""
    code = ("import sys; from figures.registry import discover_recipes; discover_recipes(); "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"
