"""Figure: the paper's population experiment 'sphere, schedule' (SPEC §8 row 4): PGD from uniform on
the sphere with the decreasing schedule lambda_t = 1/(1 + 1e-4 t) (beyond Theorem 5).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_sphere_schedule"
TITLE = "Training, init uniform on the sphere, lambda_t = 1/(1 + 1e-4 t): the schedule makes runs align"
COST = 16  # seconds of a full compute, measured; orders slr reproduce's work
SEED = 20250114
_ROW = 3


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
