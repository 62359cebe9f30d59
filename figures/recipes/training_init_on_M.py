"""Figure: the paper's population experiment 'init on M' (SPEC §8 row 1): PGD from uniform on M at
lambda = 0.1 (paper Theorem 5's setting).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_init_on_M"
TITLE = "Training, init uniform on M, lambda = 0.1: all runs align with (k*, v*) up to sign (Theorem 5)"
SEED = 20250111
_ROW = 0


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
