"""The one plotting style of every figure, applied as a scoped ``matplotlib.rc_context``.

Nothing here touches the global ``rcParams``: the runner draws and saves each figure inside
``with figure_style(): ...``. Recipes build figures with ``matplotlib.figure.Figure`` (no
pyplot, hence no global figure registry and no dependence on the interactive backend).
"""

from __future__ import annotations

import contextlib
from types import MappingProxyType

__all__ = ["STYLE", "figure_style", "PALETTE"]

# Colour-blind safe (Okabe-Ito); one colour per route of the toolkit.
PALETTE = MappingProxyType({
    "closed_form": "#000000",
    "quadrature": "#0072B2",
    "monte_carlo": "#D55E00",
    "flow": "#009E73",
    "accent": "#CC79A7",
    "muted": "#999999",
})

STYLE = MappingProxyType({
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "pdf.fonttype": 42,  # embed TrueType: text stays selectable in the PDF
    "svg.fonttype": "none",
})


@contextlib.contextmanager
def figure_style():
    """Context manager applying ``STYLE`` to the figures created and saved inside it."""
    import matplotlib

    with matplotlib.rc_context(dict(STYLE)):
        yield
