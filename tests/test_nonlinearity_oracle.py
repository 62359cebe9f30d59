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
