"""Figure: the paper's population experiment 'sphere, small lambda' (SPEC §8 row 2): PGD from
uniform on the sphere at lambda = 0.1 (beyond Theorem 5).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_sphere_small_lambda"
TITLE = "Training, init uniform on the sphere, lambda = 0.1: most runs align, some stall off M"
SEED = 20250112
_ROW = 1


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
