"""Run the mutation campaign of ``mutants.py``: each mutant in a scratch copy, only its named tests
and claims, and the kill rate per category against the goals.

    python -m tests.mutation [--jobs 2] [--only ID,...] [--full-claims] [--check]

For each mutant: copy the repository (sources, tests, docs; not .git, virtual environments or
outputs) to a temporary folder, replace its one-line snippet, then run in that copy, with
PYTHONPATH pointing to it (so the mutated modules are imported, not the installed checkout) and
without bytecode caches (a mutant and its original can have equal size and mtime second):

- its tests: ``python -m pytest -x -q <node ids>``; killed iff pytest reports failures
  (exit status 1), an interrupted collection (2) or a timeout;
- its claims: ``python -m figures.cli verify --quick --only <ids>`` (quick mode: its sizes are
  what a campaign of ~50 mutants affords; ``--full-claims`` for full mode); killed iff the run exits
  with status 1 (a claim failed or raised) or times out. Every claim also has a test that makes it
  fail in full mode (tests/test_claims_fail_full.py).

The unmutated copy is run first (the baseline): every named test must pass and every named claim
must pass, else the campaign stops with an error, so a kill is always the mutant's doing. A
mutant whose snippet is not found exactly once is an error (the list is kept true as code moves).

Goals (the campaign exits with status 1 below any of them): the named tests kill >= 95% of the
code mutants (theory, numerics) and the named claims alone >= 90% of them; verification-logic
mutants (figures/verify) are all killed, by their tests or claims. The working tree is never
touched. Exit status: 0 goals met, 1 a goal missed, 2 an error of the list or the baseline.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CODE_CATEGORIES = ("theory", "numerics")
GOALS = {"tests kill code mutants": 0.95, "claims kill code mutants": 0.90,
         "verification mutants killed": 1.0}
_IGNORE = shutil.ignore_patterns(".git", ".venv", ".ci-venv", "out", "__pycache__", "*.egg-info",
                                 ".pytest_cache", ".hypothesis", "*.pyc")
_TIMEOUT = 900.0  # seconds per pytest or verify run of one mutant; a hang counts as a kill


def load_mutants(repo: Path = REPO):
    """The module ``tests/mutation/mutants.py`` under ``repo`` (its ``MUTANTS``, ``CATEGORIES``), loaded by path as
    part of a package of its own, ``_slr_mutation`` (the category modules it imports come from the same tree)."""
    folder = repo / "tests" / "mutation"
    for name in [n for n in sys.modules if n == "_slr_mutation" or n.startswith("_slr_mutation.")]:
        del sys.modules[name]  # another tree's list, loaded before
    spec = importlib.util.spec_from_file_location("_slr_mutation", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = package  # relative imports and dataclasses resolve their modules by name
    spec.loader.exec_module(package)
    return importlib.import_module("_slr_mutation.mutants")


def check_mutants(mutants, repo: Path = REPO) -> list[str]:
    """Problems of the list against the tree at ``repo`` (empty if none): unique ids, a known
    category, tests named, a changed snippet found exactly once in its file."""
    problems, seen = [], set()
    module = load_mutants(repo)
    for m in mutants:
        where = f"mutant {m.id!r}"
        if m.id in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(m.id)
        if m.category not in module.CATEGORIES:
            problems.append(f"{where}: category {m.category!r} not in {module.CATEGORIES}")
        if not m.tests:
            problems.append(f"{where}: no tests named")
        if m.original == m.replacement:
            problems.append(f"{where}: the replacement equals the original")
        if "\n" in m.original.strip("\n"):
            problems.append(f"{where}: the snippet spans several lines (one-line bugs only)")
        path = repo / m.path
        if not path.is_file():
            problems.append(f"{where}: no file {m.path}")
            continue
        count = path.read_text().count(m.original)
        if count != 1:
            problems.append(f"{where}: snippet {m.original!r} found {count} times in {m.path} (need exactly 1)")
    return problems


@dataclasses.dataclass
class Outcome:
    mutant: object
    tests_killed: bool | None = None
    claims_killed: bool | None = None
    seconds: float = 0.0
    notes: list = dataclasses.field(default_factory=list)

    @property
    def killed(self) -> bool:
        return bool(self.tests_killed or self.claims_killed)


def _env(copy: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["MPLBACKEND"] = "Agg"
    # One thread per BLAS: the campaign runs --jobs processes side by side.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def _run(cmd, copy: Path, timeout: float):
    """(exit status, output tail); status None on timeout."""
    try:
        done = subprocess.run(cmd, cwd=copy, env=_env(copy), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return done.returncode, (done.stdout + done.stderr)[-3000:]


def _pytest(copy: Path, node_ids, timeout=_TIMEOUT):
    return _run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *node_ids], copy, timeout)


def _verify(copy: Path, claim_ids, quick: bool, out: Path, timeout=_TIMEOUT):
    cmd = [sys.executable, "-m", "figures.cli", "verify", "--jobs", "1", "--out", str(out),
           "--only", ",".join(claim_ids)] + (["--quick"] if quick else [])
    return _run(cmd, copy, timeout)


def make_copy(dest: Path, repo: Path = REPO) -> Path:
    shutil.copytree(repo, dest, ignore=_IGNORE)
    return dest


def apply_mutant(copy: Path, mutant) -> None:
    path = copy / mutant.path
    text = path.read_text()
    if text.count(mutant.original) != 1:
        raise ValueError(f"mutant {mutant.id!r}: snippet not found exactly once in {mutant.path}")
    path.write_text(text.replace(mutant.original, mutant.replacement))


def run_mutant(mutant, base: Path, scratch: Path, quick_claims: bool) -> Outcome:
    start = time.perf_counter()
    copy = make_copy(scratch / mutant.id, base)
    outcome = Outcome(mutant)
    try:
        apply_mutant(copy, mutant)
        status, tail = _pytest(copy, mutant.tests)
        if status in (0, 1, 2, None):
            outcome.tests_killed = status != 0
            if status in (2, None):
                outcome.notes.append("tests: " + ("timeout" if status is None else "collection interrupted"))
        else:
            outcome.notes.append(f"tests: pytest exit status {status}: {tail[-500:]}")
        if mutant.claims:
            status, tail = _verify(copy, mutant.claims, quick_claims, scratch / f"{mutant.id}-out")
            if status in (0, 1, None):
                outcome.claims_killed = status != 0
                if status is None:
                    outcome.notes.append("claims: timeout")
            else:
                outcome.notes.append(f"claims: verify exit status {status}: {tail[-500:]}")
        else:
            outcome.claims_killed = False
    finally:
        shutil.rmtree(copy, ignore_errors=True)
        shutil.rmtree(scratch / f"{mutant.id}-out", ignore_errors=True)
    outcome.seconds = time.perf_counter() - start
    return outcome


def baseline(base: Path, mutants, quick_claims: bool, jobs: int) -> list[str]:
    """The unmutated copy must import itself and pass every named test and claim."""
    problems = []
    status, tail = _run([sys.executable, "-c", "import theory, numerics, figures; "
                         "print(theory.__file__, numerics.__file__, figures.__file__)"], base, 120)
    if status != 0 or any(not Path(p).resolve().is_relative_to(base.resolve()) for p in tail.split()):
        problems.append(f"the scratch copy does not import its own modules: {tail}")
    node_ids = sorted({t for m in mutants for t in m.tests})
    claim_ids = sorted({c for m in mutants for c in m.claims})
    status, tail = _pytest(base, node_ids, timeout=3 * _TIMEOUT)
    if status != 0:
        problems.append(f"baseline: the named tests do not pass unmutated (exit {status}):\n{tail}")
    if claim_ids:
        cmd = [sys.executable, "-m", "figures.cli", "verify", "--jobs", str(jobs), "--out",
               str(base.parent / "baseline-out"), "--only", ",".join(claim_ids)] + (["--quick"] if quick_claims else [])
        status, tail = _run(cmd, base, 3 * _TIMEOUT)
        if status != 0:
            problems.append(f"baseline: the named claims do not pass unmutated (exit {status}):\n{tail}")
    return problems


def rates(outcomes) -> dict:
    """Kill rates of the goals (None where a category is empty)."""
    code = [o for o in outcomes if o.mutant.category in CODE_CATEGORIES]
    verification = [o for o in outcomes if o.mutant.category not in CODE_CATEGORIES]
    frac = lambda xs, key: (sum(bool(key(o)) for o in xs) / len(xs)) if xs else None
    return {"tests kill code mutants": frac(code, lambda o: o.tests_killed),
            "claims kill code mutants": frac(code, lambda o: o.claims_killed),
            "verification mutants killed": frac(verification, lambda o: o.killed)}


def report(outcomes, wall: float) -> bool:
    """Print the per-mutant table and the rates; True iff every goal is met."""
    mark = lambda x: "-" if x is None else ("killed" if x else "SURVIVED")
    print(f"{'mutant':34s} {'category':12s} {'tests':8s} {'claims':8s} seconds")
    for o in sorted(outcomes, key=lambda o: (o.mutant.category, o.mutant.id)):
        claims = "(none)" if not o.mutant.claims else mark(o.claims_killed)
        print(f"{o.mutant.id:34s} {o.mutant.category:12s} {mark(o.tests_killed):8s} {claims:8s} {o.seconds:6.1f}"
              + ("  " + "; ".join(o.notes) if o.notes else ""))
    print()
    for category in sorted({o.mutant.category for o in outcomes}):
        xs = [o for o in outcomes if o.mutant.category == category]
        print(f"{category:12s} {len(xs):3d} mutants: tests kill {sum(bool(o.tests_killed) for o in xs)}, "
              f"claims kill {sum(bool(o.claims_killed) for o in xs)}, either {sum(o.killed for o in xs)}")
    ok = True
    for name, value in rates(outcomes).items():
        if value is None:
            continue
        met = value >= GOALS[name]
        ok &= met
        print(f"kill rate: {name}: {value:.1%} (goal >= {GOALS[name]:.0%}) {'met' if met else 'MISSED'}")
    import resource

    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"mutation campaign: {len(outcomes)} mutants, wall time {wall:.0f} s, CPU time of the runs "
          f"{cpu.ru_utime + cpu.ru_stime:.0f} s, load average {os.getloadavg()[0]:.1f}")
    return ok


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="mutants run side by side (default 2)")
    parser.add_argument("--only", action="append", default=[], metavar="ID",
                        help="only these mutants (repeatable or comma-separated); goals are still checked")
    parser.add_argument("--full-claims", action="store_true", help="run the claims in full mode (slow)")
    parser.add_argument("--check", action="store_true", help="only check the list against the tree")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run (faster, less safe)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs={args.jobs} is not allowed: it must be >= 1")
    mutants = load_mutants().MUTANTS
    problems = check_mutants(mutants)
    if problems:
        print("the mutant list does not match the tree:\n  " + "\n  ".join(problems))
        return 2
    if args.check:
        print(f"{len(mutants)} mutants, every snippet found exactly once")
        return 0
    wanted = {x for item in args.only for x in item.split(",") if x}
    if wanted:
        unknown = wanted - {m.id for m in mutants}
        if unknown:
            parser.error(f"--only: unknown mutant ids {sorted(unknown)}")
        mutants = [m for m in mutants if m.id in wanted]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="slr-mutation-") as tmp:
        scratch = Path(tmp)
        base = make_copy(scratch / "base")
        if not args.no_baseline:
            problems = baseline(base, mutants, not args.full_claims, args.jobs)
            if problems:
                print("\n".join(problems))
                return 2
            print(f"baseline: named tests and claims pass unmutated ({time.perf_counter() - start:.0f} s)", flush=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(run_mutant, m, base, scratch, not args.full_claims) for m in mutants]
            outcomes = []
            for future in concurrent.futures.as_completed(futures):
                o = future.result()
                outcomes.append(o)
                print(f"[{len(outcomes)}/{len(mutants)}] {o.mutant.id}: tests {o.tests_killed}, "
                      f"claims {o.claims_killed} ({o.seconds:.0f} s)", flush=True)
    errors = [o for o in outcomes if o.notes and any("exit status" in n for n in o.notes)]
    ok = report(outcomes, time.perf_counter() - start)
    if errors:
        print(f"{len(errors)} mutants could not be judged (see notes): an error of the list")
        return 2
    return 0 if ok else 1
