"""Figure: the paper's population experiment 'sphere, small lambda' (docs/math/dynamics.md#the-papers-experiments, row 2): PGD from
uniform on the sphere at lambda = 0.1 (beyond Theorem 5).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_sphere_small_lambda"
TITLE = ('Paper experiment "sphere, small lambda": PGD from uniform on the sphere, lambda = 0.1; most runs align, the others stall off M')
CAPTION = ('Exact population PGD from k, v uniform on the sphere (d = 400, L = 10, gamma = sqrt(1/2), lambda = 0.1, alpha = 4e-3, 30 runs), beyond Theorem 5: runs that align with (k*, v*) and runs that stall are drawn as two groups (median and 25%-75% band each), since their mean lies where no run is. Panels: (a) excess risk, (b) |kappa| and |nu|, (c) runs in the (kappa, nu) plane, (d) distance to M.')
SEED = 20250112
COST = 0.65  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
_ROW = 1


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
