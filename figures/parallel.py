"""Run independent tasks (figure recipes, claims) on worker processes, results in input order.

Every task is seeded by its own name (recipes by their SEED, claims by their id and the root
seed), so the numbers do not depend on the number of workers or on which worker ran what.
"""

from __future__ import annotations

import concurrent.futures
import os

from numerics.kernels import blas_threads_per_worker, limit_blas_threads

__all__ = ["apply_task", "default_jobs", "ordered_map"]


def default_jobs() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def ordered_map(fn, items, *, jobs: int = 1, on_result=None) -> list:
    """``[fn(x) for x in items]``, on ``jobs`` worker processes when jobs > 1.

    ``fn`` must be a module-level function (it is pickled); ``on_result(result)`` is called in
    this process as each result arrives (in completion order), e.g. to echo a progress line.
    """
    items = list(items)
    if jobs < 1:
        raise ValueError(f"jobs={jobs!r} is not allowed: jobs must be a positive integer")
    if jobs == 1 or len(items) <= 1:
        results = []
        for x in items:
            results.append(fn(x))
            if on_result is not None:
                on_result(results[-1])
        return results
    workers = min(jobs, len(items))
    # workers x BLAS threads <= cores (one BLAS pool per core would oversubscribe the machine)
    with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, initializer=limit_blas_threads,
            initargs=(blas_threads_per_worker(workers),)) as pool:
        futures = [pool.submit(fn, x) for x in items]
        if on_result is not None:
            for future in concurrent.futures.as_completed(futures):
                on_result(future.result())
        return [f.result() for f in futures]


def apply_task(task):
    """``fn(arg)`` for a task ``(fn, arg)``: lets one pool run tasks of several kinds."""
    fn, arg = task
    return fn(arg)
