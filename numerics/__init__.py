"""Training dynamics and Monte Carlo for single-location regression.

Three subpackages, one per column of the README's routes table:

- ``numerics.montecarlo``: the task sampler, the attention predictor, and finite-sample risk
  estimates (population, Bayes, linear baseline) with standard errors;
- ``numerics.dynamics``: population training dynamics on the five overlaps (exact PGD, gradient
  flow, phase portrait on M, initial laws, schedules, the paper's experiments, Hessians at the oracle);
- ``numerics.sgd``: online SGD (full d-dimensional and exact reduced simulators, experiments);

plus ``numerics.executors`` (runs in parallel) and the optional ``numerics.probing`` (BERT probe).
Every public name of the subpackages is re-exported here, so ``from numerics import X`` works; the
re-exports are lazy (``theory.namespace``): a module is imported when one of its names is first
used, so that ``import numerics.pool`` (each worker process) loads the pool only.
"""

from theory.namespace import lazy_namespace

from . import dynamics, montecarlo, sgd   # lazy namespaces themselves: importing them is cheap

lazy_namespace(__name__, {
    ".montecarlo": tuple(montecarlo.__all__),
    ".dynamics": tuple(dynamics.__all__),
    ".sgd": tuple(sgd.__all__),
    ".executors": ("RunJob", "map_jobs", "map_runs"),
})
