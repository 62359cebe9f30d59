"""Progress a person sees (numerics/progress.py): under a pseudo-terminal, the step-level bar of a
task running in a worker process reaches the terminal through the parent's live display; with
no terminal nothing is drawn."""

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import pytest

from numerics.progress import LiveDisplay

SCRIPT = textwrap.dedent('''
    import time
    from numerics import progress
    from numerics.pool import ordered_map, worker_context

    def task(i):
        progress.task_started(f"item {i}")
        with progress.bar(total=40, desc=f"steps of item {i}") as bar:
            for _ in range(40):
                time.sleep(0.02)
                bar.update(1)
        return i

    if __name__ == "__main__":
        with progress.LiveDisplay(3, context=worker_context(), desc="run") as live:
            out = ordered_map(task, range(3), jobs=2, progress_queue=live.queue,
                              on_result=lambda r: live.item_done(f"item {r}"))
        print("results", out, "display", live.enabled)
''')


def _read_all(fd, proc, timeout):
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the terminal closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks).decode(errors="replace")


def _run_on_a_terminal(argv, env=None, timeout=240):
    """Everything ``argv`` wrote to a 24 x 160 pseudo-terminal (its stdin, stdout and stderr);
    asserts a zero exit status."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # a terminal's size
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, env=env)
    os.close(slave)
    try:
        text = _read_all(master, proc, timeout=timeout)
        assert proc.wait(timeout=30) == 0, text[-3000:]
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return text


needs_pty = pytest.mark.skipif(not hasattr(pty, "openpty") or sys.platform == "win32",
                               reason="needs a pseudo-terminal")


@needs_pty
def test_worker_progress_reaches_the_terminal(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    text = _run_on_a_terminal([sys.executable, str(script)])
    assert "results [0, 1, 2] display True" in text
    # step-level progress sent by the workers: a partial count of some item's 40 steps
    partial = [f"{k}/40" for k in range(1, 40)]
    assert "steps of item" in text and any(p in text for p in partial), text[-3000:]
    assert "run:" in text and "3/3" in text  # the items bar reached the end


@needs_pty
def test_slr_shows_the_live_display_on_a_terminal(tmp_path):
    """The installed ``slr`` script on a terminal, two claims on two worker processes: the live
    display names the running items and counts them to the end; each finished item prints its line.
    Two of the cheapest claims (closed forms, no figure data: ~1.1 s CPU for the command against
    ~1.6 s with zeta-closed-form and theorem1-oracle-general); the display is what is tested."""
    script = shutil.which("slr", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the slr script is not installed next to this interpreter (pip install -e .)")
    text = _run_on_a_terminal([script, "verify", "--quick", "--only",
                               "proposition3-null-limit,nonlinearities-linear-gate-rate",
                               "--jobs", "2", "--out", str(tmp_path)], env=dict(os.environ, MPLBACKEND="Agg"))
    assert "running: claim" in text and "slr: 100%" in text and "2/2" in text, text[-3000:]
    assert "pass     claim proposition3-null-limit" in text and "pass     claim nonlinearities-linear-gate-rate" in text


def test_display_is_off_without_a_terminal(tmp_path):
    with open(tmp_path / "log", "w") as stream:
        with LiveDisplay(2, stream=stream) as live:
            assert not live.enabled and live.queue is None
            live.item_done("a")
            live.handle((1, "bar", "x", 1, 2)) if live.enabled else None
    assert (tmp_path / "log").read_text() == ""


def test_sgd_step_bars_are_forwarded_from_a_worker(monkeypatch):
    """In a pool worker (here: this process made to look like one), the SGD simulators' step bars
    and map_jobs' task bar send their counts to the display's queue; a disabled bar sends nothing."""
    import queue

    import numerics.progress as progress
    from numerics.executors import map_runs
    from numerics.sgd.trajectory import progress_bar

    q = queue.Queue()
    monkeypatch.setattr(progress, "_QUEUE", q)
    monkeypatch.setattr(progress, "_IN_WORKER", True)
    with progress_bar(False, 10, "silent") as silent:
        silent.update(10)
    assert q.empty()
    bar = progress_bar(True, 10, "SGD steps")
    bar.update(4)
    bar.close()
    map_runs(len, 4, 0, runs_per_task=2, progress=True, desc="tasks")
    messages = []
    while not q.empty():
        messages.append(q.get())
    bars = [m[2:] for m in messages if m[1] == "bar"]
    assert ("SGD steps", 4, 10) in bars and ("tasks", 2, 2) in bars, bars
