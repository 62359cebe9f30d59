"""Tasks that tests hand to worker processes (numerics.pool, numerics.executors).

A spawned worker imports the module of the function it runs: here a module without pytest and
without the test modules' other imports (a test module costs each worker ~0.2-0.6 s CPU to import).
"""


def double(x):
    return 2 * x


def fail_on_three(x):
    if x == 3:
        raise ZeroDivisionError("three")
    return x


def fails_on_second_chunk(seeds):
    """``len(seeds)``, except on the second chunk of runs (its seeds' spawn key ends in 1 or more)."""
    if seeds[0].spawn_key[-1] > 0:
        raise ArithmeticError("task failed")
    return len(seeds)
