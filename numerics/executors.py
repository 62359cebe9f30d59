"""Independent runs and sweeps on local processes or a cluster, with executor-independent results.

A job is ``fn(seeds)`` evaluated on the runs of one experiment: the runs get the seeds
``SeedSequence(seed).spawn(n_runs)``, are cut into contiguous chunks whose sizes depend only on
n_runs and ``runs_per_task`` (never on the executor or the number of workers), each chunk is one
task ``fn(list_of_its_seeds)``, and the chunk results come back in run order. So the same seed gives
bit-identical numbers serially, on the project's process pool (``numerics.pool.WorkerPool``, any
size), on any ``concurrent.futures`` executor, or on a dask.distributed cluster (pass the ``distributed.Client``: its ``get_executor()`` is used; dask is
an optional dependency, never imported here).

``fn`` must be picklable for process and cluster executors (a module-level function, or a
``functools.partial`` of one with picklable arguments).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from .interrupts import completed, held_interrupts
from .pool import WorkerPool

__all__ = ["RunJob", "chunk_sizes", "map_runs", "map_jobs"]

# Default largest chunk: big enough that per-step Python overhead is shared by many vectorised runs.
_DEFAULT_MAX_RUNS_PER_TASK = 16


def chunk_sizes(n_runs: int, runs_per_task: int | None = None) -> list[int]:
    """Sizes of the contiguous chunks of runs. Default: the fewest chunks of at most 16 runs,
    as equal as possible (30 runs -> [15, 15]). Depends only on the arguments."""
    if not (isinstance(n_runs, (int, np.integer)) and n_runs >= 1):
        raise ValueError(f"n_runs={n_runs!r} is not allowed: must be an integer >= 1")
    if runs_per_task is None:
        n_tasks = math.ceil(n_runs / _DEFAULT_MAX_RUNS_PER_TASK)
    elif isinstance(runs_per_task, (int, np.integer)) and runs_per_task >= 1:
        n_tasks = math.ceil(n_runs / runs_per_task)
    else:
        raise ValueError(f"runs_per_task={runs_per_task!r} is not allowed: must be None or an "
                         "integer >= 1")
    base, extra = divmod(n_runs, n_tasks)
    return [base + 1] * extra + [base] * (n_tasks - extra)


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunJob:
    """n_runs runs of ``fn`` seeded from ``seed`` (an int or a SeedSequence), chunked as
    ``chunk_sizes(n_runs, runs_per_task)``."""

    fn: Callable
    n_runs: int
    seed: int | np.random.SeedSequence
    runs_per_task: int | None = None

    def tasks(self) -> list[list[np.random.SeedSequence]]:
        if isinstance(self.seed, np.random.SeedSequence):  # a fresh copy: spawn() has a counter
            s = self.seed
            seq = np.random.SeedSequence(s.entropy, spawn_key=s.spawn_key, pool_size=s.pool_size)
        else:
            seq = np.random.SeedSequence(self.seed)
        seeds = seq.spawn(self.n_runs)
        bounds = np.cumsum([0] + chunk_sizes(self.n_runs, self.runs_per_task))
        return [seeds[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


class _Serial:
    """In-process stand-in with the submit() of an executor (tasks run at submission)."""

    def submit(self, fn, *args):
        future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # handed to the caller through future.result()
            future.set_exception(exc)
        return future


@contextlib.contextmanager
def _executor(executor):
    if executor is None or executor == "serial":
        yield _Serial()
    elif isinstance(executor, (int, np.integer)) and not isinstance(executor, bool):
        if executor < 1:
            raise ValueError(f"executor={executor!r} is not allowed: a worker count must be >= 1")
        if executor == 1:
            yield _Serial()
        else:
            with WorkerPool(int(executor)) as pool:  # spawn; terminated on an exception
                yield pool
    elif hasattr(executor, "get_executor"):  # a dask.distributed Client
        yield executor.get_executor()
    elif hasattr(executor, "submit"):
        yield executor
    else:
        raise ValueError(f"executor={executor!r} is not allowed: use None or 'serial', a number of "
                         "local processes, a concurrent.futures.Executor, or a distributed.Client")


def map_jobs(jobs: Sequence[RunJob], *, executor=None, progress: bool = False,
             desc: str | None = None) -> list[list]:
    """Run every task of every job on ``executor``; return, per job, its chunk results in run order.

    executor: None or "serial" (in this process), an int (a ``numerics.pool.WorkerPool`` with that
    many workers, created and shut down here; 1 means serial), any concurrent.futures-style executor,
    or a distributed.Client. All tasks of all jobs are submitted at once (a sweep is load-balanced).
    ``progress`` shows a bar of finished tasks (``numerics.progress.bar``: on a terminal, or
    forwarded to the parent's display from a pool worker). The first failing task's exception is raised.
    With another executor than the serial one, Ctrl-C is held back while tasks are submitted and
    raised while their results are awaited (``numerics.interrupts``), never inside the
    executor's bookkeeping; the tasks not yet finished are then cancelled.
    """
    tasks = [job.tasks() for job in jobs]
    plan = [(i, j, job.fn, seeds) for i, job in enumerate(jobs) for j, seeds in enumerate(tasks[i])]
    results = [[None] * len(t) for t in tasks]
    with _executor(executor) as ex, (contextlib.nullcontext() if isinstance(ex, _Serial) else held_interrupts()):
        # (the serial stand-in runs the tasks in this process: there Ctrl-C interrupts them at once)
        futures = {ex.submit(fn, seeds): (i, j) for i, j, fn, seeds in plan}
        try:
            done = completed(futures)
            if progress:
                from .progress import bar

                done = bar(done, total=len(futures), desc=desc, unit="task")
            for future in done:
                i, j = futures[future]
                results[i][j] = future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return results


def map_runs(fn: Callable, n_runs: int, seed, *, runs_per_task: int | None = None, executor=None,
             progress: bool = False, desc: str | None = None) -> list:
    """One job (see ``map_jobs``): the chunk results of ``fn`` over n_runs seeded runs, in order."""
    job = RunJob(fn=fn, n_runs=n_runs, seed=seed, runs_per_task=runs_per_task)
    return map_jobs([job], executor=executor, progress=progress, desc=desc)[0]
