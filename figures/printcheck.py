"""Is a figure fit for a paper? ``print_problems(fig)`` lists what is not (an empty list: it is).

Checked at the figure's own size, which is its print size (``figures.style``): the width is a
single or double column, and nothing is drawn outside it; drawing it raises no warning
(matplotlib's layout engines warn when they cannot fit the decorations; deprecation notices
between libraries do not count); every text is at least ``MIN_FONT_PT``; no two texts overlap;
no legend lies over an axes (data); every colour is one of ``PALETTE``, white or a neutral grey.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from .style import MIN_FONT_PT, PALETTE, PRINT_WIDTHS

__all__ = ["print_problems"]

_TOL = 1.5 / 255     # colour match: within rounding of 8-bit channels
_PX = 0.5            # overlap tolerance in pixels (antialiasing of touching boxes)


def _texts(fig):
    """The texts drawn: visible, not empty, in a visible axes; tick labels only where a tick is drawn."""
    from matplotlib.text import Text

    def shown(t):
        return t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())

    tick_labels, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.majorTicks + axis.minorTicks:
                tick_labels.update((id(tick.label1), id(tick.label2)))
            if ax.get_visible():
                drawn += [label for tick in axis._update_ticks() for label in (tick.label1, tick.label2)
                          if shown(label)]
    return drawn + [t for t in fig.findobj(Text) if id(t) not in tick_labels and shown(t)]


def _overlap(a, b) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > _PX) and (min(a.y1, b.y1) - max(a.y0, b.y0) > _PX)


def _colours(fig):
    from matplotlib.collections import Collection
    from matplotlib.colors import to_rgba_array
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.text import Text

    background = {id(fig.patch)} | {id(ax.patch) for ax in fig.axes}
    for artist in fig.findobj(lambda a: a.get_visible()):
        if isinstance(artist, Line2D):
            values = [artist.get_color(), artist.get_markerfacecolor(), artist.get_markeredgecolor()]
        elif isinstance(artist, Collection):
            values = [artist.get_facecolor(), artist.get_edgecolor()]
        elif isinstance(artist, Patch) and id(artist) not in background:
            values = [artist.get_facecolor(), artist.get_edgecolor()]
        elif isinstance(artist, Text):
            values = [artist.get_color()]
        else:
            continue
        for value in values:
            if isinstance(value, str) and value == "none":
                continue
            try:
                rgba = to_rgba_array(value)
            except (ValueError, TypeError):
                continue
            for r, g, b, a in rgba:
                if a > 0:
                    yield artist, (r, g, b)


def _allowed(rgb, palette) -> bool:
    r, g, b = rgb
    if abs(r - g) <= _TOL and abs(g - b) <= _TOL:      # black, white, neutral greys
        return True
    return bool(np.any(np.all(np.abs(palette - np.array(rgb)) <= _TOL, axis=1)))


def print_problems(fig) -> list[str]:
    """What keeps ``fig`` (a matplotlib Figure at its print size) from a paper; [] if nothing."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import to_hex, to_rgb

    problems = []
    width, height = fig.get_size_inches()
    if not any(abs(width - w) < 0.01 for w in PRINT_WIDTHS):
        problems.append(f"width {width:.2f} in is not a print width {PRINT_WIDTHS}")
    canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        canvas.draw()
    # A deprecation notice is a library telling another about its API (e.g. pyparsing >= 3.3 to
    # matplotlib < 3.10 on every mathtext parse), not a statement about this figure: not counted.
    problems += [f"warning while drawing: {w.message}" for w in caught
                 if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    renderer = canvas.get_renderer()
    # Saved with bbox_inches="tight", a figure grows by whatever sticks out of it (a wide legend or
    # title): then its printed width is not the declared one.
    tight, bbox = fig.get_tightbbox(renderer), fig.bbox_inches
    if tight.width > bbox.width + 0.05 or tight.height > bbox.height + 0.05:
        problems.append(f"drawn {tight.width:.2f} x {tight.height:.2f} in, larger than the figure "
                        f"{bbox.width:.2f} x {bbox.height:.2f} in (something sticks out)")
    texts = _texts(fig)
    problems += [f"text {t.get_text()[:40]!r} is {t.get_fontsize():.1f} pt < {MIN_FONT_PT} pt"
                 for t in texts if t.get_fontsize() < MIN_FONT_PT - 1e-9]
    boxes = [(t, t.get_window_extent(renderer)) for t in texts]
    problems += [f"texts {a.get_text()[:30]!r} and {b.get_text()[:30]!r} overlap"
                 for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if _overlap(ba, bb)]
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        problems += [f"a legend lies over the axes {ax.get_title()[:30]!r}" for ax in fig.axes
                     if ax.get_visible() and _overlap(box, ax.get_window_extent(renderer))]
    palette = np.array([to_rgb(c) for c in PALETTE.values()])
    off = {to_hex(rgb) for _, rgb in _colours(fig) if not _allowed(rgb, palette)}
    problems += [f"colour {c} is not in the palette" for c in sorted(off)]
    return problems
