"""Hostile input and faults at the command line: arguments checked before any work, claims not
trusted, interrupts with real signals on real processes."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from figures.cli import main
from figures.verify import Check, claim

from test_pool import descendants, kill_group, state, wait_for, with_default_sigint


def _usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("command", ["verify", "reproduce", "risk"])
def test_negative_seed_is_rejected_at_parse_time_naming_the_flag(command, capsys, monkeypatch):
    import figures.registry as registry

    monkeypatch.setattr(registry, "discover_recipes", lambda: pytest.fail("work started"))
    extra = ["--d", "3", "--lam", "1", "--kappa", "0", "--nu", "0"] if command == "risk" else []
    err = _usage_error([command, "--seed", "-1", *extra], capsys)
    assert "--seed" in err and "'-1' is not allowed" in err


@pytest.mark.parametrize("argv", [["figures", "--only", ","], ["verify", "--only", " , "],
                                  ["reproduce", "--only-claim", ","]])
def test_only_naming_nothing_is_an_error(argv, tmp_path, capsys):
    err = _usage_error([*argv, "--out", str(tmp_path)], capsys)
    assert "names no" in err and argv[1] in err
    assert not (tmp_path / "verification.md").exists()


@pytest.mark.parametrize("flag", ["--out", "--cache"])
def test_file_as_output_folder_is_found_before_any_work(flag, tmp_path, capsys, monkeypatch):
    import figures.registry as registry

    monkeypatch.setattr(registry, "discover_recipes", lambda: pytest.fail("work started"))
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    argv = ["figures", flag, str(blocker / "sub" if flag == "--cache" else blocker)]
    err = _usage_error(argv, capsys)
    assert f"{flag} {blocker}" in err and "writable folder" in err


def test_verify_unwritable_out_fails_before_running_claims(tmp_path, capsys, monkeypatch):
    import figures.verify as verify

    monkeypatch.setattr(verify, "discover_claims", lambda: pytest.fail("work started"))
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert "writable folder" in _usage_error(["verify", "--out", str(blocker)], capsys)


def _main_captured(argv):
    """(exit status, stderr) of ``main(argv)``."""
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, err.getvalue()


def _main_unprivileged(argv):
    """``_main_captured(argv)`` run by a user without root's override of file permissions: as
    root (CAP_DAC_OVERRIDE writes anywhere) in a forked child that drops to nobody (uid/gid
    65534), so a folder's mode bits really deny the write; otherwise in this process. The child
    inherits the modules already imported (the interpreter's own files may be unreadable to
    nobody: run the same code path once before) and the test's monkeypatches."""
    if os.geteuid() != 0:
        return _main_captured(argv)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # child: never returns into pytest
        status = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.write(write_end, json.dumps(_main_captured(argv)).encode())
            status = 0
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        out = pipe.read()
    assert os.waitpid(pid, 0)[1] == 0 and out, "the unprivileged child failed (traceback above)"
    return tuple(json.loads(out))


@pytest.mark.parametrize("command, flag", [("figures", "--out"), ("figures", "--cache"),
                                           ("verify", "--out")])
@pytest.mark.parametrize("below", [False, True], ids=["locked", "below_locked"])
def test_permission_denied_output_folder_is_found_before_any_work(command, flag, below,
                                                                  monkeypatch):
    """A folder whose mode bits deny writing (0o555), or a new folder below it, given as --out or
    --cache: a usage error naming the flag, the folder and the OS's reason, before any work."""
    import shutil
    import tempfile

    import figures.registry as registry
    import figures.verify as verify

    monkeypatch.setattr(registry, "discover_recipes", lambda: pytest.fail("work started"))
    monkeypatch.setattr(verify, "discover_claims", lambda: pytest.fail("work started"))
    base = tempfile.mkdtemp(prefix="slr-perm-")    # /tmp: reachable by nobody (tmp_path is 0o700)
    locked = os.path.join(base, "locked")
    try:
        os.chmod(base, 0o755)
        free, blocker = os.path.join(base, "free"), os.path.join(base, "a_file")
        os.mkdir(locked, 0o555)
        os.mkdir(free)
        os.chmod(free, 0o777)
        with open(blocker, "w") as f:
            f.write("x")

        def argv(target):
            return [command, flag, target] + (["--out", free] if flag == "--cache" else [])
        # The same path once with a file in the way (loads every module the check needs).
        assert _main_captured(argv(blocker))[0] == 2
        target = os.path.join(locked, "sub") if below else locked
        code, err = _main_unprivileged(argv(target))
    finally:
        os.chmod(locked, 0o755)
        shutil.rmtree(base)
    assert code == 2, err
    assert f"{flag} {target} is not allowed" in err and "writable folder" in err, err
    assert "Permission denied" in err, err


def test_jobs_is_capped_at_the_cores_available(tmp_path, capsys, monkeypatch):
    import figures.cli as cli
    import figures.verify as verify

    seen = []
    monkeypatch.setattr(cli, "available_cores", lambda: 1)
    monkeypatch.setattr(verify, "discover_claims", lambda: [])
    monkeypatch.setattr("figures.work.run_items", lambda items, options, *, jobs, **kw: seen.append(jobs) or [])
    assert main(["verify", "--jobs", "1000", "--out", str(tmp_path)]) == 0
    assert seen == [1] and "--jobs 1000 capped at 1" in capsys.readouterr().err


def _bad_claims():
    def exits(quick, rng):
        raise SystemExit(0)

    def nothing(quick, rng):
        return None

    def negative(quick, rng):
        return Check(method="m", measured=-1.0, measured_text="", tolerance=1.0, derivation="d")

    def fine(quick, rng):
        return Check(method="m", measured=0.5, measured_text="", tolerance=1.0, derivation="d")

    return [claim(name, "s")(fn) for name, fn in
            (("exits", exits), ("none", nothing), ("negative", negative), ("fine", fine))]


def test_verify_does_not_trust_its_claims(tmp_path, monkeypatch):
    import figures.verify as verify

    monkeypatch.setattr(verify, "discover_claims", _bad_claims)
    assert main(["verify", "--out", str(tmp_path), "--jobs", "1"]) == 1
    report = json.loads((tmp_path / "verification.json").read_text())
    status = {c["claim_id"]: (c["status"], c["measured_text"]) for c in report["claims"]}
    assert status["exits"] == ("error", "SystemExit: 0")
    assert status["none"][0] == "error" and "NoneType, not a Check" in status["none"][1]
    assert status["negative"][0] == "error" and "measured=-1.0 is not allowed" in status["negative"][1]
    assert status["fine"][0] == "pass"


# --- interrupts of the real command on real worker processes ---------------------------------

# The command's process sees the two busy recipes (tests/busy_recipe.py) in place of the project's.
_WITH_BUSY_RECIPES = ("import sys, busy_recipe, busy_recipe_two, figures.registry as registry; "
                      "registry.discover_recipes = lambda: [registry.Recipe.from_module(m) "
                      "for m in (busy_recipe, busy_recipe_two)]; "
                      "from figures.cli import main; sys.exit(main(sys.argv[1:]))")


def _start_slr(tmp_path):
    """``slr figures`` on two recipes that compute until stopped, two workers, forced recomputation."""
    argv = [sys.executable, "-c", _WITH_BUSY_RECIPES, "figures", "--only", "busy_one,busy_two", "--force",
            "--jobs", "2", "--no-progress", "--out", str(tmp_path)]
    tests = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH")) if p)   # workers import the recipes
    proc = subprocess.Popen(with_default_sigint(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": path})
    # Each worker is inside its recipe's task once it took the recipe's cache entry lock
    # (figures.runner.entry_lock creates <out>/cache/.<name>.lock right before computing): the
    # recipes compute until stopped from there, so the signal finds both computing.
    both = wait_for(lambda: proc.poll() is not None or len(list((tmp_path / "cache").glob(".*.lock"))) == 2,
                    timeout=60, period=0.05)
    assert both and proc.poll() is None, proc.stderr.read()[-2000:] if proc.poll() is not None else "no two locks in 60 s"
    return proc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -9)])
def test_interrupted_run_stops_promptly_and_leaves_no_worker(tmp_path, signum, status):
    proc = _start_slr(tmp_path)
    try:
        family = descendants(proc.pid)
        start = time.monotonic()
        os.kill(proc.pid, signum)
        proc.wait(timeout=30)
        # Before the change, Ctrl-C took 18-45 s (workers ran the queued items) and the workers
        # outlived SIGTERM and SIGKILL indefinitely. The recipes compute until they are stopped.
        assert time.monotonic() - start < 10
        assert proc.returncode == status, proc.stderr.read()[-2000:]
        # A worker still starting up (importing) on a loaded machine notices at its initializer.
        assert wait_for(lambda: all(state(p) != "alive" for p in family), timeout=30), \
            [(p, state(p), open(f"/proc/{p}/cmdline").read()[:90]) for p in family if state(p) == "alive"]
        leftovers = [p for p in tmp_path.rglob(".*.tmp")]
        assert leftovers == []
    finally:
        kill_group(proc.pid)
