"""No oversubscription: BLAS threads per worker process so that workers x threads <= cores."""

from __future__ import annotations

import os

__all__ = ["blas_threads_per_worker", "limit_blas_threads"]

def blas_threads_per_worker(n_workers: int, n_cores: int | None = None) -> int:
    """max(1, n_cores // n_workers): the BLAS threads each of n_workers processes may use.
    n_cores defaults to the cores this process may run on (``os.sched_getaffinity``)."""
    if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
        raise ValueError(f"n_workers={n_workers!r} is not allowed: it must be an int >= 1")
    if n_cores is None:
        n_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, int(n_cores) // n_workers)


def limit_blas_threads(n_threads: int) -> None:
    """Limit the BLAS (and OpenMP) thread pools of this process to ``n_threads`` (threadpoolctl).

    Meant for the initializer of a worker process (``blas_threads_per_worker`` gives the number);
    the limit holds for the life of the process.
    """
    if isinstance(n_threads, bool) or not isinstance(n_threads, int) or n_threads < 1:
        raise ValueError(f"n_threads={n_threads!r} is not allowed: it must be an int >= 1")
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n_threads)  # not used as a context: the limit stays set
