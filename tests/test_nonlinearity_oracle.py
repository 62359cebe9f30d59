"""The oracle of every member and its best lambda (theory.nonlinearity.oracle)."""

import dataclasses

import numpy as np
import pytest

from theory.risk_roundoff import population_risk_roundoff
from theory import Overlaps, Problem, Task, oracle_risk
from theory.nonlinearity import NONLINEARITY_NAMES, population_risk_sigma_quad
from theory.nonlinearity.oracle import oracle_best_lambda_sigma, oracle_excess_sigma


@pytest.mark.parametrize("d, L, gamma, lam", [(2, 1, 0.5, 0.1), (50, 10, 0.7, 0.3),
                                               (10**4, 100, 1.5, 2.0), (400, 3, 0.1, 10.0)])
def test_erf_oracle_excess_is_theorem_1(d, L, gamma, lam):
    problem = Problem(d=d, L=L, gamma=gamma, lam=lam)
    q = oracle_excess_sigma(problem, "erf")
    closed = float(oracle_risk(problem))
    assert abs(q.value - closed) <= q.abserr + float(population_risk_roundoff(problem, Overlaps.oracle()))


@pytest.mark.parametrize("name", NONLINEARITY_NAMES)
def test_oracle_excess_equals_the_general_risk_route(name):
    """The cancellation-free oracle form against R - eps^2 of the general quadrature."""
    problem = Problem(d=30, L=6, gamma=0.8, eps=0.2, lam=0.7)
    q = oracle_excess_sigma(problem, name)
    r = population_risk_sigma_quad(problem, Overlaps.oracle(), name)
    assert abs(q.value - (r.value - 0.04)) <= q.abserr + r.abserr + 4 * np.finfo(float).eps


def test_best_lambda_is_a_minimum():
    """The excess at lambda* is below its value at lambda* e^(+-0.1) (an interior minimum)."""
    task = Task(d=64, L=10)
    for name in ("erf", "softmax"):
        opt = oracle_best_lambda_sigma(task, name)
        assert opt.interior
        for f in (np.exp(-0.1), np.exp(0.1)):
            other = oracle_excess_sigma(task.with_lam(opt.lam * f), name)
            assert opt.excess.value < other.value


@pytest.mark.parametrize("name", [n for n in NONLINEARITY_NAMES if n != "softmax"])
def test_elementwise_search_value_is_the_estimated_one(name):
    """Without its error estimate an element-wise member evaluates the finest rule alone: the same
    value to the bit (the search's best lambda does not move), abserr nan."""
    problem = Task(d=64, L=10, gamma=np.sqrt(0.5)).with_lam(0.7)
    fast, full = oracle_excess_sigma(problem, name, with_error=False), oracle_excess_sigma(problem, name)
    assert fast.value == full.value and np.isnan(fast.abserr) and full.abserr > 0


def _reference_search(task, name, lam_range=(1e-3, 1e2), n_grid=9, xatol=1e-2):
    """oracle_best_lambda_sigma's search (grid, then bounded Brent on log excess) on oracle_excess_sigma at
    task.with_lam(lambda): the public route, evaluated at every point from a checked Problem."""
    import math

    import scipy.optimize

    cache = {}

    def f(x):
        if x not in cache:
            cache[x] = oracle_excess_sigma(task.with_lam(math.exp(x)), name, with_error=False).value
        return math.log(max(cache[x], 1e-300))

    grid = np.linspace(math.log(lam_range[0]), math.log(lam_range[1]), n_grid)
    i = int(np.argmin([f(x) for x in grid]))
    scipy.optimize.minimize_scalar(f, bounds=(grid[i - 1], grid[i + 1]), method="bounded", options={"xatol": xatol})
    return math.exp(min(cache, key=f))


@pytest.mark.parametrize("name", [n for n in NONLINEARITY_NAMES if n != "softmax"])
def test_elementwise_search_is_the_public_route_to_the_bit(name):
    """The search evaluates an element-wise member from the task's fields and token laws built once (no
    Problem per point): the same numbers as oracle_excess_sigma, so the same best lambda, bit for bit."""
    for d in (2, 64, 2**14):
        task = Task(d=d, L=10, gamma=np.sqrt(0.5))
        assert oracle_best_lambda_sigma(task, name).lam == _reference_search(task, name)


# The search rule of the softmax oracle (softmax_quad.SEARCH_ORDER) at the settings of the figure
# nonlinearity_comparison (L = 10, gamma = sqrt(1/2)): its stated relative error bound.
_SEARCH_RTOL = 1e-6
_FIGURE_TASK = dict(L=10, gamma=np.sqrt(0.5))


@pytest.mark.parametrize("d, lam", [(8, 1e-3), (8, 1.9), (8, 1e2), (256, 1e-3), (256, 15.0), (256, 1e2)])
def test_softmax_search_rule_within_its_bound(d, lam):
    """The order-SEARCH_ORDER rule (no error estimate) against the (12, 16) rules with theirs."""
    problem = Task(d=d, **_FIGURE_TASK).with_lam(lam)
    fast = oracle_excess_sigma(problem, "softmax", with_error=False)
    ref = oracle_excess_sigma(problem, "softmax")
    assert np.isnan(fast.abserr)
    assert abs(fast.value - ref.value) <= _SEARCH_RTOL * ref.value + ref.abserr


@pytest.mark.parametrize("d", [8, 256])
def test_softmax_best_lambda_search_matches_the_order_12_search(d, monkeypatch):
    """The best-lambda excess found with the search rule against the same search on the order-12
    rule (the reference route). Each search ends within 2 e (its rule's relative error e) plus
    Brent's resolution of the minimum of log excess: (1/2) f'' (2 xatol)^2, xatol = 1e-2 in log
    lambda, f'' the second difference of log excess at lambda* with step 0.1 (doubled: an upper
    estimate over the bracket). d = 8 binds the claim nonlinearities-softmax-oracle (ratio 0.76
    to the best element-wise member, tolerance 1); d = 256 has the smallest excess (1.3e-19)."""
    import theory.nonlinearity.softmax_quad as sq

    task = Task(d=d, **_FIGURE_TASK)
    fast = oracle_best_lambda_sigma(task, "softmax")
    monkeypatch.setattr(sq, "SEARCH_ORDER", sq.ORDERS[0])
    ref = oracle_best_lambda_sigma(task, "softmax")
    monkeypatch.undo()
    h = 0.1
    logs = [np.log(oracle_excess_sigma(task.with_lam(ref.lam * np.exp(k * h)), "softmax").value) for k in (-1, 1)]
    curvature = 2.0 * abs(logs[0] + logs[1] - 2.0 * np.log(ref.excess.value)) / h**2
    rtol = 2.0 * (_SEARCH_RTOL + 1e-10) + 0.5 * curvature * (2 * 1e-2) ** 2
    assert fast.interior and ref.interior
    assert abs(np.log(fast.excess.value / ref.excess.value)) <= rtol
