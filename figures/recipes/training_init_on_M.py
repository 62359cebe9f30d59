"""Figure: the paper's population experiment 'init on M' (docs/math/dynamics.md#the-papers-experiments, row 1): PGD from uniform on M at
lambda = 0.1 (paper Theorem 5's setting).

Four panels against the step (excess risk with the oracle's, |kappa| and |nu|, (kappa, nu) plane,
distance to M), drawn by the shared helper ``figures.training_panels``.
"""

from __future__ import annotations

from .. import training_panels as panels

NAME = "training_init_on_M"
TITLE = ('Paper experiment "init on M": PGD from uniform on M, lambda = 0.1; every run aligns with (k*, v*) up to sign (Theorem 5)')
CAPTION = ('Exact population PGD in overlap coordinates from k, v uniform on M (d = 400, L = 10, gamma = sqrt(1/2), lambda = 0.1, alpha = 4e-3, 30 runs): (a) excess risk, (b) |kappa| and |nu|, (c) runs in the (kappa, nu) plane with the fixed points and the separatrix of the flow on M, (d) distance to M (exactly 0). Lines: median over the runs of a group; bands: 25%-75% of its runs.')
SEED = 20250111
COST = 0.55  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
_ROW = 0


params, compute = panels.recipe_functions(_ROW)


def plot(data: dict, p: dict):
    """The four panels, drawn by ``figures.training_plot`` (not part of the cache key)."""
    from ..training_plot import plot_training_panels

    return plot_training_panels(data, p)
