"""Saving a figure as PNG and PDF with one layout: ``save_figure`` (used by ``figures.runner``).

``savefig`` with a layout engine or ``bbox_inches="tight"`` (the project style, ``figures.style``)
draws the figure once without rendering, to run the layout and measure the tight box, before it
draws it for real: four draws and two layouts for a PNG and a PDF. ``fix_layout`` runs the layout
and measures the box once; both files are then drawn once each. The PDF embeds its TrueType fonts
without their OpenType layout tables (``lean_font_subsets``), and a font's glyph names, metrics and
character maps are decompiled once per process for all its subsets. An axis places its ticks, and
measures its tick labels' boxes, once for each place and size of its axes (``ticks_placed_once``). An
opaque PNG is written as RGB, its rows unfiltered, at zlib level ``PNG_COMPRESS_LEVEL`` (``fix_layout``
gives the figure that canvas; ``write_rgb_png``).
"""

from __future__ import annotations

import contextlib
import functools

from .cache import atomic_write
from .paths import OutputPaths
from .pdf_fonts import LAYOUT_TABLES, lean_font_subsets
from .shared_mathtext import shared_text_metrics
from .tick_placement import ticks_placed_once

__all__ = ["GC_YOUNG_THRESHOLD", "LAYOUT_TABLES", "PNG_COMPRESS_LEVEL", "fewer_collections", "fix_layout",
           "lean_font_subsets", "save_figure", "ticks_placed_once", "write_rgb_png"]

# zlib level of the PNGs. The 14 figures' pixels (300 dpi, opaque), encoded by Pillow, measured at
# load ~10: RGBA at level 6 (matplotlib's PNG) 1.29 s CPU, 4.01 MB; RGB at level 6 1.05 s, 3.60 MB;
# RGB at 3 0.73-0.77 s, 3.92 MB; RGB at 1 0.71 s, 4.04 MB; RGBA at 3 0.92 s, 4.44 MB. Pillow filters
# every row adaptively (it tries the five PNG filters on each), most of that cost; the rows unfiltered
# (filter type 0, ``write_rgb_png``), measured at load ~6: level 3 0.23 s CPU, 3.92 MB; level 1 0.21 s,
# 4.10 MB; level 6 0.54 s, 3.32 MB.
PNG_COMPRESS_LEVEL = 3


# Net allocations between two collections of the cycle collector's youngest generation while a figure is
# drawn and saved (``fewer_collections``); Python's default is 700. The 14 figures drawn and saved twice in
# one process (load ~14, the collector's CPU timed by ``gc.callbacks``): at 700, 949 and 594 collections,
# 1.36 s and 0.89 s of 10.8 s and 8.8 s; at 10,000, 51 and 27, 0.51 s and 0.37 s; at 50,000, 11 and 5,
# 0.39 s and 0.21 s, ~180,000 more objects alive at the end.
GC_YOUNG_THRESHOLD = 50_000


@contextlib.contextmanager
def fewer_collections(young: int = GC_YOUNG_THRESHOLD):
    """Within the block, the youngest generation of the cycle collector is collected after ``young``
    net allocations (``gc.set_threshold``; never fewer than the threshold in force), the older
    generations' thresholds unchanged; the thresholds in force before are restored after it.

    Drawing a figure allocates ~10^6 containers (artists, transforms, paths, boxes, fonts' glyph
    tables while a PDF is written), most of them alive until the figure is saved: each collection
    of the youngest generation walks what survived since the last one, and at Python's 700 the
    collector costs a tenth of the drawing and saving (``GC_YOUNG_THRESHOLD``). What is collected, and
    the figures, are the same; unreachable cycles wait longer for their collection."""
    import gc

    if young < 1:
        raise ValueError(f"young={young!r} is not allowed: a positive number of allocations")
    previous = gc.get_threshold()
    gc.set_threshold(max(young, previous[0]), *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    import struct
    import zlib

    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def write_rgb_png(fh, rgb, *, dpi: float, text: dict) -> None:
    """Write the 8-bit RGB pixels ``rgb`` (rows x columns x 3, or x 4 with the 4th channel left out) to
    the binary file ``fh`` as a PNG (ISO/IEC 15948): header (colour type 2), the ``text`` chunks as
    Pillow writes them (``PngInfo.add_text``: tEXt, iTXt where Latin-1 cannot hold the value), the
    resolution ``dpi`` (pHYs, pixels per metre rounded as Pillow rounds them), one IDAT of the rows
    with filter type 0 (none) compressed at zlib level ``PNG_COMPRESS_LEVEL``, end. Decoded, the same
    pixels as Pillow's PNG of them."""
    import struct
    import zlib

    import numpy as np
    from PIL import PngImagePlugin

    rgb = np.asarray(rgb)
    if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] not in (3, 4) or 0 in rgb.shape[:2]:
        raise ValueError(f"rgb of dtype {rgb.dtype} and shape {rgb.shape} is not allowed: 8-bit pixels, "
                         "rows x columns x 3 (or 4), at least one of each")
    height, width, channels = rgb.shape
    rows = np.empty((height, 1 + 3 * width), dtype=np.uint8)
    rows[:, 0] = 0   # filter type of each row: none
    # one channel at a time, rows of bytes taken at a stride: a copy of (rows, columns, 3) from
    # (rows, columns, 4) runs an inner loop of 3 bytes per pixel (300 dpi, 7 x 5.6 in: 4.5 ms
    # against 16-28 ms, the same bytes)
    pixels = rgb.reshape(height, width * channels)
    for channel in range(3):
        rows[:, 1 + channel::3] = pixels[:, channel::channels]
    info = PngImagePlugin.PngInfo()
    for key, value in text.items():
        info.add_text(key, value)
    ppm = int(dpi / 0.0254 + 0.5)
    fh.write(b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
             + b"".join(_png_chunk(tag, data) for tag, data, *_ in info.chunks)
             + _png_chunk(b"pHYs", struct.pack(">IIB", ppm, ppm, 1))
             + _png_chunk(b"IDAT", zlib.compress(rows, PNG_COMPRESS_LEVEL)) + _png_chunk(b"IEND", b""))

@functools.lru_cache(maxsize=None)
def _agg_canvas():
    """The class ``OpaquePngCanvas`` (defined at first use: matplotlib is imported then)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    class OpaquePngCanvas(FigureCanvasAgg):
        """Agg canvas whose PNG, where every pixel is opaque, is written as RGB (colour type 2), its
        rows unfiltered, at zlib level ``PNG_COMPRESS_LEVEL`` (``write_rgb_png``): the pixels, text
        chunks and resolution of matplotlib's RGBA PNG (the same ``Software`` entry and ``metadata``),
        a quarter fewer bytes to compress and no filter chosen per row. A figure with
        a transparent pixel is written as matplotlib writes it, RGBA, at that level. ``pil_kwargs``
        given: matplotlib's own PNG."""

        def print_png(self, filename_or_obj, *, metadata=None, pil_kwargs=None, **applied):
            # applied: what savefig passes and applies itself (facecolor, edgecolor, orientation,
            # bbox_inches_restore, dpi), unread by the Agg canvas
            if pil_kwargs is not None:
                return super().print_png(filename_or_obj, metadata=metadata, pil_kwargs=pil_kwargs)
            import matplotlib
            import numpy as np
            from matplotlib import cbook

            FigureCanvasAgg.draw(self)
            rgba = np.asarray(self.buffer_rgba())
            if not np.all(rgba[..., 3] == 255):
                return matplotlib.image.imsave(filename_or_obj, rgba, format="png", origin="upper",
                                               dpi=self.figure.dpi, metadata=metadata,
                                               pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})
            text = {key: value for key, value in {   # what matplotlib.image.imsave writes
                "Software": f"Matplotlib version{matplotlib.__version__}, https://matplotlib.org/",
                **(metadata or {})}.items() if value is not None}
            with cbook.open_file_cm(filename_or_obj, "wb") as fh:
                write_rgb_png(fh, rgba, dpi=self.figure.dpi, text=text)

    return OpaquePngCanvas


def fix_layout(fig):
    """Lay ``fig`` out once for saving and return the area to save, in inches: what
    ``savefig(bbox_inches="tight")`` would compute for a PNG at ``savefig.dpi``.

    ``savefig`` with a layout engine or ``bbox_inches="tight"`` draws the figure once without
    rendering, to run the layout and measure the tight box, before it draws it for real; with a PNG
    and a PDF that is four draws and two layouts per figure. Here the layout runs once, as the PNG's
    ``savefig`` would run it (Agg text metrics at ``savefig.dpi``), and is then frozen (layout
    engine removed): saved with the returned box, the PNG is the one ``savefig`` would have written,
    pixel for pixel, and the PDF has the same layout and box. The box is measured without that draw
    (it places every artist whose extent the box reads, as the draw would: titles, axis labels and
    offsets, legends): two draws for both files. ``savefig``'s own PDF would be laid out with the
    PDF's text metrics at 72 dpi: the page then differs by up to ~3 pt (of ~500), the drawing not
    at all."""
    import matplotlib

    dpi = matplotlib.rcParams["savefig.dpi"]
    pad = matplotlib.rcParams["savefig.pad_inches"]
    if matplotlib.rcParams["savefig.bbox"] != "tight" or dpi == "figure" or pad == "layout":
        raise ValueError(f"savefig.bbox={matplotlib.rcParams['savefig.bbox']!r}, savefig.dpi={dpi!r}, "
                         f"savefig.pad_inches={pad!r} are not allowed: fix_layout reproduces bbox 'tight' "
                         "at a numeric dpi and pad")
    canvas = _agg_canvas()(fig)   # the PNG's canvas: its renderer measures the text for the layout and the box
    screen_dpi = fig.dpi
    fig.dpi = dpi
    try:
        renderer = canvas.get_renderer()
        engine = fig.get_layout_engine()
        if engine is not None and fig.axes:
            engine.execute(fig)   # what a draw does first (Figure.draw), at the PNG's resolution
        bbox = fig.get_tightbbox(renderer).padded(pad)
    finally:
        fig.dpi = screen_dpi
    # No layout engine at all (a 'none' placeholder would still make savefig draw once more per file).
    fig.set_layout_engine(None)
    if fig.get_layout_engine() is not None:
        raise ValueError(f"layout engine {fig.get_layout_engine()!r} after set_layout_engine(None) is not "
                         "allowed: rcParams figure.autolayout and figure.constrained_layout.use must be off")
    return bbox


def save_figure(fig, paths: OutputPaths, name: str, metadata: dict):
    """Save ``fig`` as ``<figures>/<name>.png`` and ``.pdf`` (atomically), laid out once by ``fix_layout``,
    each text string measured once per process (``figures.shared_mathtext.shared_text_metrics``), the
    ticks of each axis placed once per place (``ticks_placed_once``);
    ``metadata``: the ``savefig`` metadata per format (``figures.metadata``)."""
    paths.figures.mkdir(parents=True, exist_ok=True)
    files = paths.figure_files(name)
    with shared_text_metrics(), ticks_placed_once():
        bbox = fix_layout(fig)
        for path in files:
            fmt = path.suffix[1:]
            with lean_font_subsets():
                atomic_write(path, lambda fh: fig.savefig(fh, format=fmt, metadata=metadata.get(fmt), bbox_inches=bbox))
    return files
