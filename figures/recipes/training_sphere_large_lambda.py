"""Figure: the paper's population experiment 'sphere, large lambda' (SPEC §8 row 3): PGD from
uniform on the sphere at lambda = 0.9 (beyond Theorem 5).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_sphere_large_lambda"
TITLE = "Training, init uniform on the sphere, lambda = 0.9: the oracle is a saddle, runs do not align"
COST = 17  # seconds of a full compute, measured; orders slr reproduce's work
SEED = 20250113
_ROW = 2


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
