"""The process pool (numerics/pool.py): no fork of a threaded parent, workers die with their
parent, prompt cancellation, temporary files removed; all with real processes and signals."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from numerics.pool import WorkerPool, ordered_map, worker_context
from pool_tasks import double, fail_on_three

# The reproducer of the hang: a thread of the parent holds tqdm's lock (as tqdm's monitor
# thread does while it looks at the bars) while the pool starts its workers; each task makes
# a disabled tqdm bar, which takes that lock. A forked worker inherits the lock held by a
# thread that does not exist in it and blocks forever; a forkserver or spawned worker does not.
REPRODUCER = textwrap.dedent('''
    import sys, threading
    from tqdm.auto import tqdm
    from numerics.pool import ordered_map

    def task(i):
        with tqdm(total=3, disable=True) as bar:
            bar.update(3)
        return i

    if __name__ == "__main__":
        held, release = threading.Event(), threading.Event()
        def hold():
            with tqdm.get_lock():
                held.set()
                release.wait()
        threading.Thread(target=hold, daemon=True).start()
        held.wait()
        if sys.argv[1] == "fork":  # the former pool: the default start method on Linux
            import concurrent.futures, multiprocessing
            with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as ex:
                out = list(ex.map(task, range(6)))
        else:
            out = ordered_map(task, range(6), jobs=2)
        release.set()
        assert out == list(range(6)), out
        print("done")
''')


def _run_script(tmp_path, text, *args, timeout):
    script = tmp_path / "script.py"
    script.write_text(text)
    argv = [sys.executable, "-W", "error::DeprecationWarning", str(script), *args]
    proc = subprocess.Popen(with_default_sigint(argv),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        return None, "", ""
    finally:
        kill_group(proc.pid)


def with_default_sigint(argv):
    """``argv`` run with SIGINT at its default action, which Python turns into KeyboardInterrupt.

    An ignored signal stays ignored across fork and exec, and Python leaves an ignored SIGINT
    ignored: under a test runner started as a background job of a non-interactive shell (which
    ignores SIGINT in its background jobs), the interrupt tests would send a SIGINT that nobody
    hears. A small exec wrapper (same process id) resets it; ``preexec_fn`` would run Python
    code in a forked child of a threaded runner."""
    reset = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             "os.execv(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", reset, *argv]


def test_children_hear_sigint_even_when_the_runner_ignores_it():
    probe = [sys.executable, "-c",
             "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a background job of a shell script
    try:
        plain, wrapped = (subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.strip()
                          for argv in (probe, with_default_sigint(probe)))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (plain, wrapped) == ("False", "True")


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def test_pool_never_forks():
    assert worker_context().get_start_method() == "spawn"


def test_fork_reproducer_hangs_with_fork_and_passes_with_the_pool(tmp_path):
    start = time.monotonic()
    code, out, err = _run_script(tmp_path, REPRODUCER, "pool", timeout=120)
    pooled = time.monotonic() - start
    assert (code, out.strip()) == (0, "done"), err
    if "fork" in __import__("multiprocessing").get_all_start_methods():
        # The reproducer does reproduce: with fork the workers block. Forked workers start with
        # less work than spawned ones (no interpreter start-up, no imports), so the fork run would
        # end within the pool run's time; twice that (and at least 2 s) allows for load changing.
        assert _run_script(tmp_path, REPRODUCER, "fork", timeout=max(2.0, 2 * pooled))[0] is None


def test_ordered_map_keeps_order_and_raises_the_task_error():
    assert ordered_map(double, range(7), jobs=2) == [2 * i for i in range(7)]
    with pytest.raises(ZeroDivisionError, match="three"):
        ordered_map(fail_on_three, range(6), jobs=2)
    with pytest.raises(ValueError, match="jobs=0"):
        ordered_map(double, [1], jobs=0)
    with pytest.raises(ValueError, match="max_workers=True"):
        WorkerPool(True)


def state(pid):
    """'gone', 'zombie' or 'alive' (a zombie has exited; its reaper may not be running)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return "zombie" if fh.read().rsplit(")", 1)[1].split()[0] in "ZX" else "alive"
    except (FileNotFoundError, ProcessLookupError):
        return "gone"


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def wait_for(predicate, timeout, period=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return predicate()


# A parent whose two workers each write half of a file through atomic_write and then sleep:
# the temporary file exists while the parent is killed. The grace period after which a stopped
# worker is ended for good is set to a minute (in the workers too, which import this module):
# a worker must end as soon as its task's cleanup ran (before, each waited for the grace period
# once its parent had died: 2 s at the default).
PARENT = textwrap.dedent('''
    import os, sys, time
    from pathlib import Path
    import numerics.pool
    from figures.cache import atomic_write
    from numerics.pool import ordered_map

    numerics.pool._GRACE = 60.0

    def slow_write(path):
        def write(fh):
            fh.write(b"half")
            fh.flush()
            os.write(1, b"writing\\n")   # one write(2) below PIPE_BUF: the workers' lines never interleave
            time.sleep(600)
        atomic_write(Path(path), write)

    if __name__ == "__main__":
        folder = Path(sys.argv[1])
        ordered_map(slow_write, [str(folder / f"out{i}.bin") for i in range(4)], jobs=2)
''')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_killed_parent_leaves_no_worker_and_no_temporary_file(tmp_path, signum):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    folder = tmp_path / "outputs"
    folder.mkdir()
    proc = subprocess.Popen(with_default_sigint([sys.executable, str(script), str(folder)]),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        assert proc.stdout.readline().strip() == "writing"  # both workers hold a temporary file
        family = descendants(proc.pid)
        assert len(list(folder.glob(".*.tmp"))) == 2 and len(family) >= 2
        start = time.monotonic()
        os.kill(proc.pid, signum)
        proc.wait(timeout=30)
        # Workers notice at once (the parent-death signal) or within the watchdog period (0.5 s).
        assert wait_for(lambda: all(state(p) != "alive" for p in family), timeout=15), \
            [(p, state(p)) for p in family]
        stopped = time.monotonic() - start
        assert list(folder.iterdir()) == []  # no temporary file, and no half-written output
        assert stopped < 10
    finally:
        kill_group(proc.pid)


# A second SIGTERM while the first one's cleanup runs (when a worker's parent dies, the kernel's
# parent-death signal and the watchdog's arrive about half a second apart). The former handlers
# raised again inside the cleanup and cut it short: a temporary file was left behind. Checked in
# the two places that turn SIGTERM into Terminated: a pool worker stopped by its pool, and the
# command line (its parser swapped for one whose command is the task below).
SECOND_SIGNAL = textwrap.dedent('''
    import argparse, os, signal, sys, time
    from pathlib import Path
    from numerics.pool import WorkerPool

    def task(folder):
        try:
            Path(folder, "started").write_text("")
            time.sleep(30)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # the second signal, delivered during the cleanup
            time.sleep(0.2)
            Path(folder, "cleaned").write_text("")

    def command(args):
        return task(args.folder)

    def parser():
        p = argparse.ArgumentParser()
        p.add_argument("folder")
        p.set_defaults(func=command, command="test", jobs=1)
        return p

    if __name__ == "__main__":
        folder = Path(sys.argv[2])
        if sys.argv[1] == "worker":
            with WorkerPool(1) as pool:
                pool.submit(task, str(folder))
                while not (folder / "started").exists():
                    time.sleep(0.05)
                pool.terminate()
        else:
            import figures.cli
            figures.cli.build_parser = parser
            pid = os.fork()
            if pid == 0:
                while not (folder / "started").exists():
                    time.sleep(0.05)
                os.kill(os.getppid(), signal.SIGTERM)
                os._exit(0)
            try:
                sys.exit(figures.cli.main([str(folder)]))
            finally:
                os.waitpid(pid, 0)
''')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="os.fork")
@pytest.mark.parametrize("where", ["worker", "cli"])
def test_a_second_sigterm_does_not_cut_the_cleanup_short(tmp_path, where):
    script = tmp_path / "stopped.py"
    script.write_text(SECOND_SIGNAL)
    out = subprocess.run([sys.executable, str(script), where, str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert (tmp_path / "started").exists(), out.stderr
    assert (tmp_path / "cleaned").exists(), out.stderr
    if where == "cli":
        assert out.returncode == 128 + signal.SIGTERM, out.stderr


# Ctrl-C at the moments where, raised inside concurrent.futures, it broke the pool: the main thread
# is stopped by a real SIGINT (signal.raise_signal from a trace function) at the given event of a
# function it runs. Before the pool held Ctrl-C back, "futures-locked" left one future's lock held
# by the main thread (the pool's thread blocked on it forever, and the interpreter waited for that
# thread at exit: the process never ended; the point is now ``completed``'s registration of its
# callback, inside the future's lock), "worker-started" left the second worker unrecorded
# (alive, never terminated) and "cleanup" cut the termination short (workers alive, hang at exit).
# "leaving-the-block": Ctrl-C while the pool's ``with`` block waits for running tasks at its end,
# after shutdown() had forgotten the workers (terminate then stopped none: hang at exit).
SIGINT_AT = textwrap.dedent('''
    import multiprocessing, signal, sys, threading, time
    from numerics.pool import WorkerPool, ordered_map

    def slow(i):
        time.sleep(600)

    def first_fails(i):
        if i == 0:
            raise ZeroDivisionError("first")
        time.sleep(600)

    POINTS = {  # class, method, trace event, its occurrence, task
        "worker-started": ("BaseProcess", "start", "return", 2, slow),
        "futures-locked": ("Future", "add_done_callback", "line", 2, slow),
        "cleanup": ("WorkerPool", "terminate", "call", 1, first_fails),
        "leaving-the-block": ("WorkerPool", "_finish", "call", 1, slow),
    }

    if __name__ == "__main__":
        owner, method, event, occurrence, task = POINTS[sys.argv[1]]
        seen = [0]

        def trace(frame, what, arg):
            if seen[0] >= occurrence or frame.f_code.co_name != method or \\
                    owner not in [c.__name__ for c in type(frame.f_locals.get("self")).__mro__]:
                return None
            if what == event:
                seen[0] += 1
                if seen[0] == occurrence:
                    signal.raise_signal(signal.SIGINT)
            return trace

        sys.settrace(trace)
        try:
            if sys.argv[1] == "leaving-the-block":
                with WorkerPool(2) as pool:
                    for i in range(4):
                        pool.submit(task, i)
            else:
                ordered_map(task, range(4), jobs=2)
            print("no KeyboardInterrupt")
        except KeyboardInterrupt:
            sys.settrace(None)
        print("hit", seen[0] == occurrence, flush=True)
        print("workers alive", [p.pid for p in multiprocessing.active_children()], flush=True)
        deadline = time.monotonic() + 5
        while threading.active_count() > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        print("threads", sorted(t.name for t in threading.enumerate() if t is not threading.main_thread()), flush=True)
''')


@pytest.mark.parametrize("where", ["worker-started", "futures-locked", "cleanup", "leaving-the-block"])
def test_sigint_inside_the_pools_bookkeeping_stops_everything(tmp_path, where):
    code, out, err = _run_script(tmp_path, SIGINT_AT, where, timeout=60)
    assert code is not None, "the process did not end"
    assert out.splitlines() == ["hit True", "workers alive []", "threads []"], err


# The executor's manager thread and ``WorkerPool.terminate`` both wait for the workers' exit. Of
# two threads waiting for one process, the loser finds it already reaped and gets no status: the
# process counts as alive until the winner records the status. Here the manager thread wins and
# records late, as it does when the main thread holds the interpreter's lock (an intermittent
# "workers alive [pid]" of the tests above, pid already gone): terminate must wait for it.
REAPED_BY_THE_MANAGER = textwrap.dedent('''
    import multiprocessing, os, threading, time
    from numerics.pool import ordered_map

    def first_fails(i):
        if i == 0:
            raise ZeroDivisionError("first")
        time.sleep(600)

    waitpid, late = os.waitpid, set()

    def manager_first(pid, options):
        if threading.current_thread() is threading.main_thread():
            if pid not in late:  # the main thread's first wait comes after the manager's
                late.add(pid)
                time.sleep(0.1)
            return waitpid(pid, options)
        status = waitpid(pid, options)
        if status[0] == pid:  # reaped: recorded half a second later
            time.sleep(0.5)
        return status

    if __name__ == "__main__":
        os.waitpid = manager_first
        try:
            ordered_map(first_fails, range(4), jobs=2)
        except ZeroDivisionError:
            print("workers alive", [p.pid for p in multiprocessing.active_children()])
''')


def test_terminate_returns_with_every_worker_recorded_as_ended(tmp_path):
    code, out, err = _run_script(tmp_path, REAPED_BY_THE_MANAGER, timeout=60)
    assert (code, out.strip()) == (0, "workers alive []"), err
