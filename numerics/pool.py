"""The project's one process pool: workers that cannot deadlock, stop promptly and die with their parent.

Used by the command line (figure recipes and claims, ``ordered_map``) and by the library's
sweeps (``numerics.executors.map_jobs`` with an integer executor). Its rules:

- Start method ``spawn``: a worker is never a ``fork`` of a parent that runs threads (tqdm's
  monitor thread, a display thread, BLAS threads), so no worker can inherit a lock held by a
  thread that does not exist in it. (``forkserver`` would avoid that too, but its workers are
  children of the fork server, which outlives a killed parent as long as they live; a spawned
  worker is a child of the parent itself, so the kernel can tell it when the parent dies.)
- Workers ignore SIGINT: a Ctrl-C (sent by a terminal to the whole process group) interrupts
  the parent alone, which then cancels the queued work and terminates the workers
  (``WorkerPool.__exit__`` on an exception), instead of each worker carrying on with the
  next queued item.
- In the parent, Ctrl-C is held back for the life of the pool (``numerics.interrupts``). Python
  raises KeyboardInterrupt between any two bytecodes of the main thread; raised inside
  ``concurrent.futures`` it can leave a future's lock held by the main thread (the pool's own
  thread then blocks forever on it, and the interpreter waits for that thread at exit) or a
  started worker process unrecorded (never terminated, and waited for at exit). Held back, it is
  raised where the pool's books are consistent: within ``POLL`` seconds while ``completed``
  waits for results, or after ``submit``, ``terminate`` or the ``with`` block.
- A worker ends when its parent dies, however the parent died (SIGKILL included): on Linux the
  kernel sends it SIGTERM (``prctl(PR_SET_PDEATHSIG)``); everywhere a watchdog thread notices
  the change of parent process (``os.getppid``) within a second. SIGTERM in a worker raises
  ``SystemExit``, so ``finally`` blocks (removal of temporary files) run; the worker then ends
  at once, or, stuck in compiled code, is ended for good after a grace period.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

from .interrupts import POLL, completed, held_interrupts, raise_held_interrupt
from .kernels import blas_threads_per_worker
from .spawn_context import SpawnWithoutTeardown

__all__ = ["Terminated", "WorkerPool", "available_cores", "ordered_map", "terminating_handler", "worker_context"]

_PR_SET_PDEATHSIG = 1   # from <linux/prctl.h>
_WATCHDOG_PERIOD = 0.5  # seconds between two looks at the parent process id
_GRACE = 2.0            # seconds a worker has to clean up after SIGTERM before it is ended


def available_cores() -> int:
    """The number of cores this process may use (its CPU affinity where the OS reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_context():
    """The pool's multiprocessing context: spawn (module docstring), no teardown (``numerics.spawn_context``)."""
    return SpawnWithoutTeardown()


class Terminated(SystemExit):
    """Raised by SIGTERM in a worker (and in the command line): the process is being stopped.
    Code that turns a task's ``SystemExit`` into a failure row must let this one through."""


def _exit_after(seconds: float, code: int) -> None:
    """End the process ``seconds`` from now, whatever its main thread is doing."""
    def end():
        time.sleep(seconds)
        os._exit(code)

    threading.Thread(target=end, name="exit-timer", daemon=True).start()


def terminating_handler(stopping: threading.Event, on_first=None):
    """A SIGTERM handler that raises ``Terminated(128 + signum)`` once and ignores later signals.

    The first signal sets ``stopping``, calls ``on_first(signum)`` (if given) and raises, which
    unwinds the program through its ``except``/``finally`` blocks (the removal of temporary
    files). A later signal returns at once: raised inside that cleanup, it would cut it short.
    Two signals are the rule, not a corner case: when a worker's parent dies, both the kernel
    (``PR_SET_PDEATHSIG``) and the watchdog send one, about half a second apart.
    """
    def handler(signum, frame):
        if stopping.is_set():
            return
        stopping.set()
        if on_first is not None:
            on_first(signum)
        raise Terminated(128 + signum)

    return handler


_STOPPING = threading.Event()  # set in a worker once it was told to stop
# SystemExit runs the finally blocks of the task; the pool's worker loop catches it as a task
# failure and would carry on with a queued task, hence the flag that makes any further task stop
# before it starts (``_guarded``) and the timer that ends the process for good.
_terminate_self = terminating_handler(_STOPPING, on_first=lambda signum: _exit_after(_GRACE, 128 + signum))


def _guarded(fn, *args, **kwargs):
    if _STOPPING.is_set():
        raise Terminated(128 + signal.SIGTERM)
    try:
        return fn(*args, **kwargs)
    finally:
        if _STOPPING.is_set():
            # Told to stop (by terminate, or its parent died: which one, getppid() cannot yet
            # tell) and the task's cleanup ran: no one waits for more, end before the grace period.
            with contextlib.suppress(Exception):
                sys.stdout.flush(), sys.stderr.flush()
            os._exit(128 + signal.SIGTERM)


def _watch_parent(ppid: int) -> None:
    while os.getppid() == ppid:
        time.sleep(_WATCHDOG_PERIOD)
    _exit_after(_GRACE, 1)                 # even if the main thread is stuck in compiled code
    os.kill(os.getpid(), signal.SIGTERM)   # clean exit first (SystemExit in the main thread)


def _die_with_parent(ppid: int) -> None:
    """Ask the kernel for SIGTERM when the parent ``ppid`` dies (Linux), and start the watchdog."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    threading.Thread(target=_watch_parent, args=(ppid,), name="parent-watchdog", daemon=True).start()
    if os.getppid() != ppid:  # the parent died before the request was in place (or while we started)
        os._exit(1)


def _init_worker(parent_pid, progress_queue, blas_threads, initializer, initargs) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate_self)
    _die_with_parent(parent_pid)
    from . import progress

    progress.attach_queue(progress_queue)
    from .kernels import limit_blas_threads

    limit_blas_threads(blas_threads)  # workers x BLAS threads <= cores: no oversubscription
    if initializer is not None:
        initializer(*initargs)


class WorkerPool(concurrent.futures.ProcessPoolExecutor):
    """A ``ProcessPoolExecutor`` with the rules of this module.

    ``progress_queue``: where workers send their progress messages (``numerics.progress``),
    None for none. Leaving the ``with`` block on an exception (KeyboardInterrupt included)
    cancels the queued tasks and terminates the running ones at once. Inside the ``with`` block
    Ctrl-C is held back (``held_interrupts``): wait for results with ``completed``, which raises
    it within ``POLL`` seconds; it is raised at the latest when the block ends. Each worker limits its
    BLAS threads to available_cores() // max_workers (at least 1), so workers x threads <= cores.
    """

    def __init__(self, max_workers: int, *, progress_queue=None, initializer=None, initargs=()):
        if not (isinstance(max_workers, int) and not isinstance(max_workers, bool) and max_workers >= 1):
            raise ValueError(f"max_workers={max_workers!r} is not allowed: a positive integer is needed")
        super().__init__(max_workers=max_workers, mp_context=worker_context(), initializer=_init_worker,
                         initargs=(os.getpid(), progress_queue,
                                   blas_threads_per_worker(max_workers, available_cores()),
                                   initializer, initargs))
        self._workers = self._processes  # shutdown() forgets it; terminate needs it after one too
        self._manager = None

    def submit(self, fn, /, *args, **kwargs):
        with held_interrupts():  # a worker it starts is recorded (and so terminated) before Ctrl-C
            future = super().submit(_guarded, fn, *args, **kwargs)
            self._manager = self._executor_manager_thread
            return future

    def terminate(self) -> None:
        """Cancel the queued tasks, stop the running ones (SIGTERM, then SIGKILL) and reap them.

        The executor's manager thread reaps them too; of two threads waiting for one process, the
        loser's ``join`` returns with ``is_alive()`` True until the winner records the exit status:
        hence the wait for that thread, after which every worker is recorded as ended."""
        with held_interrupts():  # a Ctrl-C during the cleanup is raised after it
            processes = list(self._workers.values())
            self.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                with contextlib.suppress(Exception):
                    process.terminate()
            deadline = time.monotonic() + 2 * _GRACE
            for process in processes:
                process.join(max(0.0, deadline - time.monotonic()))
                if process.is_alive():
                    process.kill()
                    process.join()
            if self._manager is not None:  # ends once it saw the workers end: bounded all the same
                self._manager.join(2 * _GRACE)

    def __enter__(self):
        self._held = held_interrupts().__enter__()  # for the pool's whole life: see the module doc
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is not None:
                self.terminate()
            else:
                self._finish()
        finally:
            self._held.__exit__(None, None, None)
        return False

    def _finish(self) -> None:
        """``shutdown(wait=True)``, with a held-back Ctrl-C during the wait turned into ``terminate``."""
        manager = self._manager
        self.shutdown(wait=False)
        try:
            while manager is not None and manager.is_alive():
                raise_held_interrupt()
                manager.join(POLL)
        except KeyboardInterrupt:
            self.terminate()
            raise


def ordered_map(fn, items, *, jobs: int = 1, on_result=None, progress_queue=None) -> list:
    """``[fn(x) for x in items]``, on ``min(jobs, len(items))`` worker processes when jobs > 1.

    ``fn`` must be picklable (a module-level function); ``on_result(result)`` is called in this
    process as each result arrives (in completion order). The first exception a task raised is
    raised here, after the other tasks were cancelled.
    """
    items = list(items)
    if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        raise ValueError(f"jobs={jobs!r} is not allowed: jobs must be a positive integer")
    if jobs == 1 or len(items) <= 1:
        results = []
        for x in items:
            results.append(fn(x))
            if on_result is not None:
                on_result(results[-1])
        return results
    with WorkerPool(min(jobs, len(items)), progress_queue=progress_queue) as pool:
        futures = [pool.submit(fn, x) for x in items]
        for future in completed(futures):
            result = future.result()
            if on_result is not None:
                on_result(result)
        return [f.result() for f in futures]
