"""CPU cost of starting a Python process of the project: each import the command line, a pool
worker or a test subprocess pays before it does any work.

    python benchmarks/bench_imports.py [--repeat 7]

For each statement, ``--repeat`` fresh interpreters run ``python -c STATEMENT``; the script
prints the median and the range of their CPU time (user + system, from the wait status, so the
machine's load inflates it less than wall time) and which heavy libraries the statement loaded.
The machine's load average is printed with the results (quote it with them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

STATEMENTS = {
    "python (nothing)": "pass",
    "numpy": "import numpy",
    "scipy.special": "import scipy.special",
    "theory": "import theory",
    "numerics": "import numerics",
    "numerics.pool (each worker process)": "import numerics.pool",
    "numerics.dynamics.pgd (a route)": "import numerics.dynamics.pgd",
    "figures.cli (the slr command)": "import figures.cli",
    "slr --version": "from figures.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass",
    "recipes and claims discovered": ("from figures.registry import discover_recipes; "
                                      "from figures.verify import discover_claims; "
                                      "discover_recipes(); discover_claims()"),
}
HEAVY = ("scipy.special", "scipy.stats", "scipy.optimize", "scipy.integrate", "numba", "matplotlib",
         "sympy", "mpmath", "tqdm")
_REPORT = "import sys; print('loaded:', *(m for m in {heavy!r} if m in sys.modules))"


def cpu_seconds(statement: str) -> float:
    """User + system CPU time of one fresh interpreter running ``statement``."""
    proc = subprocess.Popen([sys.executable, "-c", statement], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, None):
        raise RuntimeError(f"python -c {statement!r} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def loaded(statement: str) -> str:
    """The heavy libraries in sys.modules after ``statement``."""
    code = f"{statement}\n{_REPORT.format(heavy=HEAVY)}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith("loaded:")]   # not the statement's output
    return lines[-1].removeprefix("loaded:").strip() if lines else ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="interpreters per statement (default 7)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        raise ValueError(f"--repeat={args.repeat} is not allowed: at least 1 run is needed")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    for name, statement in STATEMENTS.items():
        times = [cpu_seconds(statement) for _ in range(args.repeat)]
        print(f"- {name}: median {statistics.median(times):.2f} s CPU "
              f"(range {min(times):.2f}-{max(times):.2f}, {args.repeat} runs); loads: {loaded(statement) or '-'}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
