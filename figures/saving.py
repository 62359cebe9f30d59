"""Saving a figure as PNG and PDF with one layout: ``save_figure`` (used by ``figures.runner``).

``savefig`` with a layout engine or ``bbox_inches="tight"`` (the project style, ``figures.style``)
draws the figure once without rendering, to run the layout and measure the tight box, before it
draws it for real: four draws and two layouts for a PNG and a PDF. ``fix_layout`` runs the layout
and measures the box once; both files are then drawn once each.
"""

from __future__ import annotations

from .cache import atomic_write
from .paths import OutputPaths

__all__ = ["fix_layout", "save_figure"]


def fix_layout(fig):
    """Lay ``fig`` out once for saving and return the area to save, in inches: what
    ``savefig(bbox_inches="tight")`` would compute for a PNG at ``savefig.dpi``.

    ``savefig`` with a layout engine or ``bbox_inches="tight"`` draws the figure once without
    rendering, to run the layout and measure the tight box, before it draws it for real; with a PNG
    and a PDF that is four draws and two layouts per figure. Here the layout runs once, as the PNG's
    ``savefig`` would run it (Agg text metrics at ``savefig.dpi``), and is then frozen (layout
    engine removed): saved with the returned box, the PNG is the one ``savefig`` would have written,
    pixel for pixel, and the PDF has the same layout and box (three draws for both files, one without
    rendering). ``savefig``'s own PDF would be laid out with the PDF's text metrics at 72 dpi: the
    page then differs by up to ~3 pt (of ~500), the drawing not at all."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    dpi = matplotlib.rcParams["savefig.dpi"]
    pad = matplotlib.rcParams["savefig.pad_inches"]
    if matplotlib.rcParams["savefig.bbox"] != "tight" or dpi == "figure" or pad == "layout":
        raise ValueError(f"savefig.bbox={matplotlib.rcParams['savefig.bbox']!r}, savefig.dpi={dpi!r}, "
                         f"savefig.pad_inches={pad!r} are not allowed: fix_layout reproduces bbox 'tight' "
                         "at a numeric dpi and pad")
    FigureCanvasAgg(fig)   # the PNG's canvas: its one renderer measures the text for the layout and the box
    screen_dpi = fig.dpi
    fig.dpi = dpi
    try:
        fig.draw_without_rendering()   # the layout engine runs here, at the PNG's resolution
        bbox = fig.get_tightbbox().padded(pad)
    finally:
        fig.dpi = screen_dpi
    # No layout engine at all (a 'none' placeholder would still make savefig draw once more per file).
    fig.set_layout_engine(None)
    if fig.get_layout_engine() is not None:
        raise ValueError(f"layout engine {fig.get_layout_engine()!r} after set_layout_engine(None) is not "
                         "allowed: rcParams figure.autolayout and figure.constrained_layout.use must be off")
    return bbox


def save_figure(fig, paths: OutputPaths, name: str, metadata: dict):
    """Save ``fig`` as ``<figures>/<name>.png`` and ``.pdf`` (atomically), laid out once by ``fix_layout``;
    ``metadata``: the ``savefig`` metadata per format (``figures.metadata``)."""
    paths.figures.mkdir(parents=True, exist_ok=True)
    files = paths.figure_files(name)
    bbox = fix_layout(fig)
    for path in files:
        fmt = path.suffix[1:]
        atomic_write(path, lambda fh: fig.savefig(fh, format=fmt, metadata=metadata.get(fmt), bbox_inches=bbox))
    return files
