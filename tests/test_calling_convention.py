"""One calling convention: the parameter objects (Task, Problem, ScheduledProblem, OdeOptions)
validate themselves, every dynamics route takes the problem first, and the paper's defaults are
written once."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import numerics
from numerics.dynamics import OdeOptions, PaperSchedule, ScheduledProblem, lambda_setting
from theory import PAPER_GAMMA, PAPER_L, Problem, Task

ROOT = Path(__file__).resolve().parents[1]


def test_a_problem_is_a_task_with_a_lambda():
    task = Task(d=20, eps=0.1)
    problem = task.with_lam(0.3)
    assert isinstance(problem, Task) and problem.task == task and problem.lam == 0.3
    assert (problem.L, problem.gamma) == (PAPER_L, PAPER_GAMMA)
    assert [f.name for f in dataclasses.fields(Problem)] == ["d", "L", "gamma", "eps", "lam"]
    with pytest.raises(TypeError):
        Problem(d=20)                                  # lambda is required: no placeholder default
    with pytest.raises(ValueError, match="gamma"):
        Task(d=20, gamma=0.0)


@pytest.mark.parametrize("lam, expected", [
    (0.5, 0.5), ([0.1, 0.2], [0.1, 0.2]), (np.array([0.1, 0.2]), [0.1, 0.2])])
def test_lambda_setting_reads_numbers_and_per_run_values(lam, expected):
    problem = ScheduledProblem(d=10, lam=lam) if not isinstance(lam, np.ndarray) else Problem(d=10, lam=lam)
    assert lambda_setting(problem) == expected


def test_scheduled_problem_takes_a_schedule_and_checks_it():
    schedule = PaperSchedule(lam0=1.0)
    assert lambda_setting(ScheduledProblem(d=400, lam=schedule)) is schedule
    for bad, where in [(0.0, "lam"), (-1.0, "lam"), ([0.1, -2.0], r"lam\[1\]"), (lambda t: -1.0, "t = 0"),
                       ([], "lam"), ("x", "lam"), ([np.ones(2)], "lam")]:
        with pytest.raises(ValueError, match=where):
            ScheduledProblem(d=400, lam=bad)
    with pytest.raises(ValueError, match="Task has no lambda"):
        lambda_setting(Task(d=4))


def test_ode_options_are_checked():
    assert OdeOptions().kwargs() == {"method": "LSODA", "rtol": 1e-10, "atol": 1e-12}
    for bad, name in [({"method": "Euler"}, "method"), ({"rtol": 0.0}, "rtol"), ({"atol": np.nan}, "atol"),
                      ({"rtol": "1e-3"}, "rtol")]:
        with pytest.raises(ValueError, match=name):
            OdeOptions(**bad)


@pytest.mark.parametrize("name", ["overlap_pgd", "vector_pgd", "overlap_flow", "manifold_flow",
                                  "manifold_flow_velocity", "manifold_jacobian", "manifold_fixed_points",
                                  "separatrix", "perturbed_pgd", "local_oracle_hessian_fd",
                                  "online_sgd_full", "online_sgd_reduced", "population_risk_mc",
                                  "bayes_risk_mc", "ols_risk_mc", "risk_mc_from_vectors", "sample_task"])
def test_routes_take_the_problem_first(name):
    first = next(iter(inspect.signature(getattr(numerics, name)).parameters))
    assert first == "problem"


@pytest.mark.parametrize("name", ["theory.highdim.gradient_moments", "theory.highdim.effective_drift",
                                  "numerics.highdim.gradient_moments_mc", "numerics.highdim.effective_flow",
                                  "numerics.highdim.moment_closure_flow", "numerics.highdim.compare_with_sgd",
                                  "numerics.highdim.escape_prediction", "numerics.highdim.escape_window",
                                  "numerics.highdim.sgd_escape_law", "numerics.highdim.one_step_increment_mc",
                                  "numerics.highdim.fluctuations.moment_closure_rhs",
                                  "numerics.highdim.fluctuations.population_velocity",
                                  "numerics.highdim.per_run_drift", "numerics.highdim.fast_mode",
                                  "numerics.highdim.aligned_fixed_point", "numerics.highdim.fixed_point_branch",
                                  "numerics.highdim.critical_step", "numerics.highdim.saddle_jacobian_on_m",
                                  "numerics.highdim.saddle_pitchfork_step"])
def test_highdim_routes_take_the_problem_first(name):
    import importlib

    module, attr = name.rsplit(".", 1)
    first = next(iter(inspect.signature(getattr(importlib.import_module(module), attr)).parameters))
    assert first == "problem"


def test_the_papers_defaults_are_written_once():
    """No library signature or dataclass retypes L = 10 or gamma = sqrt(1/2): they come from
    theory.parameters (PAPER_L, PAPER_GAMMA, PAPER_D); nor do the high-dimensional claims,
    recipes and benchmark."""
    pattern = re.compile(r"sqrt\(0?\.5\)|\bL(: int = |=)10\b")
    highdim = [p for pat in ("figures/**/highdim*.py", "benchmarks/bench_highdim.py") for p in ROOT.glob(pat)]
    assert len(highdim) >= 3
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
             for p in [q for folder in ("theory", "numerics") for q in sorted((ROOT / folder).rglob("*.py"))] + highdim
             if p.name != "parameters.py"
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, "\n".join(found)


def test_no_placeholder_problem_is_built():
    """A Problem(..., lam=1.0) built only to validate the other fields is a Task now."""
    pattern = re.compile(r"Problem\([^)]*lam=1\.0\)\s*(#.*)?$")
    found = [f"{p.relative_to(ROOT)}:{i}" for folder in ("theory", "numerics")
             for p in sorted((ROOT / folder).rglob("*.py"))
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line) and "=" not in line.split("Problem(")[0]]
    assert not found, found
