"""BLAS threads per worker (numerics/kernels/blas.py): workers x threads <= cores."""

import subprocess
import sys

import pytest

from numerics.kernels import blas_threads_per_worker, limit_blas_threads


@pytest.mark.parametrize("workers, cores, threads", [(1, 2, 2), (2, 2, 1), (3, 2, 1), (2, 8, 4), (3, 8, 2)])
def test_threads_per_worker(workers, cores, threads):
    assert blas_threads_per_worker(workers, cores) == threads
    assert workers * threads <= max(cores, workers)


def test_limit_holds_in_the_process():
    code = ("import numpy, threadpoolctl\n"
            "from numerics.kernels import limit_blas_threads\n"
            "limit_blas_threads(1)\n"
            "pools = threadpoolctl.threadpool_info()\n"
            "assert pools and all(p['num_threads'] == 1 for p in pools), pools\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_input(bad):
    with pytest.raises(ValueError, match="n_workers="):
        blas_threads_per_worker(bad)
    with pytest.raises(ValueError, match="n_threads="):
        limit_blas_threads(bad)
