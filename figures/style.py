"""The one plotting style of every figure, applied as a scoped ``matplotlib.rc_context``.

Nothing here touches the global ``rcParams``: the runner draws and saves each figure inside
``with figure_style(): ...``. Recipes build figures with ``matplotlib.figure.Figure`` (no
pyplot, hence no global figure registry and no dependence on the interactive backend).
"""

from __future__ import annotations

import contextlib
from types import MappingProxyType

__all__ = ["STYLE", "QUICK_STYLE", "figure_style", "PALETTE", "CYCLE", "SINGLE_COLUMN", "DOUBLE_COLUMN", "PRINT_WIDTHS",
           "MIN_FONT_PT", "draw_fixed_points", "mark_quick"]

# Colour-blind safe (Okabe-Ito, Color Universal Design): the only colours a figure may use, besides
# white and neutral greys. Named by the role they play in most figures.
PALETTE = MappingProxyType({
    "closed_form": "#000000",   # black
    "quadrature": "#0072B2",    # blue
    "monte_carlo": "#D55E00",   # vermillion
    "flow": "#009E73",          # bluish green
    "accent": "#CC79A7",        # reddish purple
    "muted": "#999999",         # grey
    "sky": "#56B4E9",
    "orange": "#E69F00",
    "yellow": "#F0E442",
})
# Default order of the colour cycle (lines drawn without an explicit colour).
CYCLE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000")

# Print sizes (inches) of a paper's single and double column; every figure is one of these widths,
# and its text is at least MIN_FONT_PT at that size.
SINGLE_COLUMN = 3.4
DOUBLE_COLUMN = 7.0
PRINT_WIDTHS = (SINGLE_COLUMN, DOUBLE_COLUMN)
MIN_FONT_PT = 7.0

STYLE = MappingProxyType({
    "figure.dpi": 100,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.03,
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "figure.titlesize": 9,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "axes.linewidth": 0.6,
    "axes.prop_cycle": f"cycler('color', {list(CYCLE)!r})",
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "pdf.fonttype": 42,  # embed TrueType: text stays selectable in the PDF
    "svg.fonttype": "none",
})


# A quick (smoke-run) figure is saved more cheaply, drawn the same: its PDF embeds its fonts as Type 3
# (matplotlib's own glyph outlines) instead of subset TrueType, without fontTools' subsetting, most
# of the cost of writing a PDF; its PNG is rasterised at 100 dpi. The 13 quick figures' drawing and
# saving, measured at load ~4: TrueType 16.7 s CPU, Type 3 13.0 s (both 300 dpi); then, in a later
# build, Type 3 at 300 dpi 11.5-12.3 s against 10.2-10.3 s at 100 dpi.
# Nothing reads a quick PDF's fonts or a quick PNG's pixels; the print checks (figures.printcheck)
# draw the figure at its own size, whatever the saved resolution.
QUICK_STYLE = MappingProxyType({**STYLE, "pdf.fonttype": 3, "savefig.dpi": 100})


@contextlib.contextmanager
def figure_style(quick: bool = False):
    """Context manager applying ``STYLE`` (``QUICK_STYLE`` if ``quick``) to the figures created and
    saved inside it."""
    import matplotlib

    with matplotlib.rc_context(dict(QUICK_STYLE if quick else STYLE)):
        yield


# Marker and face colour of a fixed point of the flow on M, by its type (numerics.dynamics.phase_portrait).
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
