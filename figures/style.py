"""The one plotting style of every figure, applied as a scoped ``matplotlib.rc_context``.

Nothing here touches the global ``rcParams``: the runner draws and saves each figure inside
``with figure_style(): ...``. Recipes build figures with ``matplotlib.figure.Figure`` (no
pyplot, hence no global figure registry and no dependence on the interactive backend).
"""

from __future__ import annotations

import contextlib
from types import MappingProxyType

__all__ = ["STYLE", "figure_style", "PALETTE", "draw_fixed_points", "mark_quick"]

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


# Marker and face colour of a fixed point of the flow on M, by its type (numerics.manifold_dynamics).
_FIXED_POINT_MARKERS = {"stable node": ("o", "black"), "unstable node": ("o", "white"), "saddle": ("X", "black")}


def draw_fixed_points(ax, points, kinds, *, label: str, seen: set, size: float = 8, edge: float = 1.1):
    """Mark fixed points (kappa, nu) by type, one legend entry per type not yet in ``seen``."""
    for (k, n), kind in zip(points, kinds):
        marker, face = _FIXED_POINT_MARKERS.get(str(kind), ("D", "grey"))
        ax.plot(k, n, marker, ms=size, mfc=face, mec="black", mew=edge, clip_on=False, zorder=5,
                label=f"{label}: {kind}" if kind not in seen else None)
        seen.add(kind)


QUICK_MARK = "QUICK RUN: smoke-test sizes, not the paper's figure"


def mark_quick(fig) -> None:
    """Stamp a quick (smoke-run) figure so that it is never mistaken for the full one."""
    fig.text(0.5, 1.0, QUICK_MARK, ha="center", va="bottom", fontsize=9, fontweight="bold",
             color=PALETTE["monte_carlo"], transform=fig.transFigure)
