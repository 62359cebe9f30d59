"""Runs and sweeps on different executors give bit-identical numbers (numerics/executors.py)."""

import concurrent.futures
import dataclasses

import numpy as np
import pytest

from numerics.executors import RunJob, chunk_sizes, map_jobs, map_runs
from numerics.sgd.experiment import PAPER_SGD, run_sgd_experiment, run_sgd_sweep
from pool_tasks import fails_on_second_chunk
from theory import OVERLAP_NAMES

SMALL = dataclasses.replace(PAPER_SGD, n_steps=300, n_runs=5, test_size=40, log_every=100, seed=11)
FIELDS = OVERLAP_NAMES + ("population_risk", "test_risk", "steps", "lam")


def _same(a, b):
    return all(np.array_equal(getattr(a.trajectory, f), getattr(b.trajectory, f)) for f in FIELDS)


def test_chunk_sizes_depend_only_on_the_arguments():
    assert chunk_sizes(30) == [15, 15]
    assert chunk_sizes(16) == [16] and chunk_sizes(17) == [9, 8]
    assert chunk_sizes(10, 4) == [4, 3, 3]
    assert chunk_sizes(3, 10) == [3]
    with pytest.raises(ValueError, match="n_runs"):
        chunk_sizes(0)
    with pytest.raises(ValueError, match="runs_per_task"):
        chunk_sizes(5, 0)


def test_run_job_seeds_are_reproducible():
    seed = np.random.SeedSequence(5)
    job = RunJob(fn=len, n_runs=7, seed=seed, runs_per_task=3)
    first, second = job.tasks(), job.tasks()
    seed.spawn(2)  # spawning from the caller's sequence elsewhere changes nothing
    third = job.tasks()
    assert [len(t) for t in first] == [3, 2, 2]
    flat = lambda tasks: [s.generate_state(2).tolist() for t in tasks for s in t]
    assert flat(first) == flat(second) == flat(third)
    assert flat(first) == [s.generate_state(2).tolist() for s in np.random.SeedSequence(5).spawn(7)]


def test_serial_threads_and_dask_give_identical_numbers():
    """Serially, on threads and on a dask worker process: the same numbers. (On a pool of 2
    processes: test_a_sweep_equals_its_experiments_run_one_by_one below; the claim
    sgd-determinism-across-executors compares one worker process and three threads.)"""
    distributed = pytest.importorskip("distributed")
    kw = dict(runs_per_task=2)  # 3 tasks of 2, 2, 1 runs
    serial = run_sgd_experiment(SMALL, executor=None, **kw)
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        threads = run_sgd_experiment(SMALL, executor=pool, **kw)
    # one worker process (and its nanny): a process boundary, as for the process pool below; the
    # tasks run one after another in it, so no state may leak from one task to the next
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dask = run_sgd_experiment(SMALL, executor=client, progress=True, **kw)
    assert serial.trajectory.n_runs == 5
    assert _same(serial, threads) and _same(serial, dask)


def test_a_sweep_equals_its_experiments_run_one_by_one():
    other = dataclasses.replace(SMALL, lam0=1.0, n_runs=3, seed=12)
    sweep = run_sgd_sweep([SMALL, other], executor=2, runs_per_task=2)
    assert _same(sweep[0], run_sgd_experiment(SMALL, runs_per_task=2))
    assert _same(sweep[1], run_sgd_experiment(other, runs_per_task=2))


def test_task_errors_propagate_and_bad_executors_are_rejected():
    with pytest.raises(ArithmeticError, match="task failed"):
        map_runs(fails_on_second_chunk, 4, 0, runs_per_task=2)
    with pytest.raises(ArithmeticError, match="task failed"):
        map_runs(fails_on_second_chunk, 4, 0, runs_per_task=2, executor=2)
    with pytest.raises(ValueError, match="executor"):
        map_runs(len, 4, 0, executor="cluster")
    with pytest.raises(ValueError, match="executor"):
        map_runs(len, 4, 0, executor=0)
    out = map_jobs([RunJob(fn=len, n_runs=5, seed=1, runs_per_task=2),
                    RunJob(fn=len, n_runs=1, seed=2)])
    assert out == [[2, 2, 1], [1]]
