"""The start method of the project's pool workers (``numerics.pool``): spawn, with workers that end
without the interpreter's teardown.

A spawned worker's work loop returns, multiprocessing runs its exit steps (finalizers, the join of
queue feeder threads, the flush of stdout and stderr), and the worker ends by ``os._exit`` with
its exit code instead of ``sys.exit``: the teardown that frees sympy, scipy and numba module by
module cost a worker of ``slr verify`` 0.5-0.7 s CPU, and the run as much wall time while the pool
waited for its workers to end. Nothing of the project's runs at interpreter exit (no ``atexit``).
"""

from __future__ import annotations

import multiprocessing.context
import os

__all__ = ["SpawnWithoutTeardown", "WorkerProcess"]


class WorkerProcess(multiprocessing.context.SpawnProcess):
    """A spawned process that ends by ``os._exit`` with its exit code once multiprocessing's exit steps ran."""

    def _bootstrap(self, *args, **kwargs):
        os._exit(super()._bootstrap(*args, **kwargs))


class SpawnWithoutTeardown(multiprocessing.context.SpawnContext):
    """The spawn context whose processes end by ``os._exit`` after multiprocessing's exit steps."""

    Process = WorkerProcess
