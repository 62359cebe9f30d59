"""bayes_risk_quad is bounded in time and memory: the Bhattacharyya bound (theory.bayes_bound)
answers where the excess is below the quadrature's own error, the grid is sized from the spread of
the log-likelihood ratio, and spreads beyond 5e4 panels raise a ValueError stating the bound."""

import functools
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from theory import Task, bayes_risk_quad
from theory.bayes_bound import bayes_excess_bound

# Where the quadrature runs, its value minus eps^2 must lie in [-abserr, bound + abserr].
QUAD_POINTS = [(2, 10, 0.7), (10, 10, 0.7), (10, 10, 0.3), (20, 10, 0.5), (100, 10, 0.9),
               (50, 3, 0.5), (2, 2, 3.0), (200, 10, 1.0)]


@functools.cache
def _quad(d, L, gamma):
    """bayes_risk_quad at eps = 0, computed once per process for the two tests of QUAD_POINTS."""
    return bayes_risk_quad(Task(d=d, L=L, gamma=gamma, eps=0.0))


@pytest.mark.parametrize("d, L, gamma", QUAD_POINTS)
def test_quadrature_lies_below_the_bound(d, L, gamma):
    q = _quad(d, L, gamma)
    bound = bayes_excess_bound(d, L, gamma)
    assert -q.abserr <= q.value <= bound + q.abserr
    assert q.abserr < bound            # the quadrature ran (it resolves B better than the bound)


def test_bound_is_within_a_factor_30_where_both_are_known():
    """Not a correctness requirement, a check that the bound is informative: measured ratios
    bound / B are 7-21 at the points above (d <= 100)."""
    for d, L, gamma in QUAD_POINTS[:6]:
        b = _quad(d, L, gamma).value
        assert bayes_excess_bound(d, L, gamma) <= 30 * b


def test_bound_branch_takes_over_only_below_the_quadrature_error():
    """At d = 400, gamma = sqrt(1/2) (the paper's setting) B <= 8e-39: the value is eps^2 with
    abserr half that bound, far below the quadrature's tail error 2e-17 (L-1)(gamma^2 + L)."""
    q = bayes_risk_quad(Task(d=400, gamma=np.sqrt(0.5), eps=0.1))
    assert q.value == 0.1 * 0.1 + q.abserr and 0 < q.abserr < 1e-38


_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))     # 1 GiB of address space
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))               # 60 s of CPU
    from theory import Task, bayes_risk_quad
    import scipy.stats   # loaded before the clock: its first use (the laws' quantiles) costs ~1 s of imports at load ~10
    out = []
    for d, gamma in json.loads(sys.argv[1]):
        start = time.process_time()
        try:
            q = bayes_risk_quad(Task(d=d, gamma=gamma, eps=0.1))
            result = [q.value, q.abserr]
        except ValueError as err:
            result = str(err)
        out.append([d, gamma, result, time.process_time() - start])
    print(json.dumps(out))
""")


def _run_limited(points, timeout):
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(points)], capture_output=True,
                          text=True, timeout=timeout, env={"OPENBLAS_NUM_THREADS": "1",
                                                           "OMP_NUM_THREADS": "1", "PATH": ""})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_far_from_gamma_one_is_instant_under_a_memory_limit():
    """The cases that took 101 s, > 300 s, 22.5 GB and a MemoryError (d = 100, gamma = 0.03, 0.01,
    1e-3, 1e3): under 1 GiB of address space and 60 s of CPU they return eps^2 with a bound below
    1e-130; d = 2, gamma = 1e-3 (ell spread ~5e7) raises a ValueError naming gamma at once."""
    rows = _run_limited([[100, 0.03], [100, 0.01], [100, 1e-3], [100, 1e3], [2, 1e-3], [10**12, 0.7]],
                        timeout=300)
    for d, gamma, result, cpu in rows[:4] + rows[5:]:
        value, abserr = result
        assert value == 0.1 * 0.1 + abserr and abserr < 1e-130, (d, gamma, result)
        assert cpu < 1.0
    d, gamma, message, cpu = rows[4]
    assert message.startswith("gamma=0.001 with d=2 is beyond bayes_risk_quad"), message
    assert "Bayes risk - eps^2 <=" in message and cpu < 1.0


@pytest.mark.slow
def test_largest_quadrature_fits_the_limits():
    """Just below the panel limit (d = 2, gamma = 0.04: ~6e4 panels over four laws) the quadrature
    completes within 1 GiB and 60 s of CPU (measured: ~8 s, 0.2 GB) and lies below the bound."""
    [(d, gamma, (value, abserr), cpu)] = _run_limited([[2, 0.04]], timeout=600)
    assert 0 <= value - 0.01 <= bayes_excess_bound(2, 10, 0.04) + abserr
