"""Figure: the paper's population experiment 'sphere, large lambda' (docs/math/dynamics.md#the-papers-experiments, row 3): PGD from
uniform on the sphere at lambda = 0.9 (beyond Theorem 5).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_sphere_large_lambda"
TITLE = ('Paper experiment "sphere, large lambda": PGD from uniform on the sphere, lambda = 0.9; the oracle is a saddle and runs do not align')
CAPTION = ('Exact population PGD from k, v uniform on the sphere (d = 400, L = 10, gamma = sqrt(1/2), lambda = 0.9 > lambda_c = 0.892, alpha = 1e-3, 30 runs): the oracle is a saddle of R on the sphere product. Panels: (a) excess risk, (b) |kappa| and |nu|, (c) runs in the (kappa, nu) plane, (d) distance to M; each group of runs (aligned / not aligned) as median and 25%-75% band.')
SEED = 20250113
COST = 1.2  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
_ROW = 2


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
