"""Training dynamics and Monte Carlo for single-location regression.

Three subpackages, one per column of the README's routes table:

- ``numerics.montecarlo``: the task sampler, the attention predictor, and finite-sample risk
  estimates (population, Bayes, linear baseline) with standard errors;
- ``numerics.dynamics``: population training dynamics on the five overlaps (exact PGD, gradient
  flow, phase portrait on M, initial laws, schedules, the paper's experiments, Hessians at the oracle);
- ``numerics.sgd``: online SGD (full d-dimensional and exact reduced simulators, experiments);

plus ``numerics.executors`` (runs in parallel) and the optional ``numerics.probing`` (BERT probe).
Every public name of the subpackages is re-exported here, so ``from numerics import X`` works.
"""

from . import dynamics, montecarlo, sgd
from .dynamics import *  # noqa: F401,F403  (flat re-export, names listed in dynamics.__all__)
from .executors import RunJob, map_jobs, map_runs
from .montecarlo import *  # noqa: F401,F403
from .sgd import *  # noqa: F401,F403

__all__ = [*montecarlo.__all__, *dynamics.__all__, *sgd.__all__, "RunJob", "map_jobs", "map_runs"]
