"""Figure: the paper's population experiment 'sphere, schedule' (docs/math/dynamics.md#the-papers-experiments, row 4): PGD from uniform on
the sphere with the decreasing schedule lambda_t = 1/(1 + 1e-4 t) (beyond Theorem 5).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_sphere_schedule"
TITLE = ('Paper experiment "sphere, schedule": PGD from uniform on the sphere, lambda_t = 1/(1 + 1e-4 t); the schedule makes runs align')
CAPTION = ("Exact population PGD from k, v uniform on the sphere with the decreasing schedule lambda_t = 1/(1 + 1e-4 t) (d = 400, L = 10, gamma = sqrt(1/2), alpha = 4e-3, 30 runs). Panels: (a) excess risk with the oracle's at lambda_t, (b) |kappa| and |nu|, (c) runs in the (kappa, nu) plane, (d) distance to M; each group of runs (aligned / not aligned) as median and 25%-75% band.")
SEED = 20250114
COST = 1.5  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
_ROW = 3


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
