"""Each mathtext string parsed, and each text string measured, once per process while figures are drawn:
``shared_mathtext()``, ``shared_text_metrics()``.

matplotlib keeps a parsed mathtext string (``MathTextParser._parse_cached``, a per-parser cache) for the
renderer that asked for it, and every renderer has its own parser: saving one figure lays it out with
one renderer and draws it with a new one per file, so each tick label of a log axis
(``$\\mathdefault{10^{-3}}$``) is parsed again for the layout, the PNG and the PDF, and again in the
next figure. The 13 full figures asked for 337 parses of 43 strings, 1.8 s CPU of their 14 s of
drawing and saving (load ~10).

Inside ``with shared_mathtext():`` a parse is kept for the whole process, keyed by what it depends on:
the parser's output (raster for Agg, vector for PDF), the string, dpi, font properties, antialiasing
and glyph-loading flags (the arguments of ``_parse_cached``), and the ``mathtext.*``, ``font.*``,
``text.*``, ``pdf.*`` and ``ps.*`` rcParams in force when the block was entered (which the per-parser
cache leaves out: it lives for one draw). The parse is a pure function of these, so the figures are drawn the same, pixel for
pixel (tests/test_figures_save.py). Where matplotlib has no such cache (another version), the block
changes nothing.

The same holds for the size of a plain text string (``shared_text_metrics()``): matplotlib keeps it per
renderer (``matplotlib.text._get_text_metrics_with_cache``), so the layout, the PNG and the PDF measure
every tick label, title and legend entry again, each with FreeType's shaping of the string. Inside
the block a size is kept for the process, keyed by the renderer's kind and resolution, the string,
the font properties, the math mode, dpi and the rcParams above: the 14 figures asked 11,395 times for
548 sizes. The block also keeps the layout of a text (``Text._get_layout``: its lines' offsets and its
box, relative to its anchor, from those sizes and the font's line metrics), asked again for every
extent and every draw of a text (9,882 times in the 14 figures), keyed by what it reads: the renderer,
dpi and rcParams as for a size, the string, font properties, math parsing, line spacing, alignments,
rotation and rotation mode (a wrapped text, whose lines depend on its place, is laid out each time).
"""

from __future__ import annotations

import contextlib
import functools

__all__ = ["renderer_kind", "shared_mathtext", "shared_cache_info", "shared_text_metrics", "shared_metrics_info",
           "shared_layouts_info"]


class _Request:
    """One request: ``compute()`` gives its value, which depends on ``key`` only; hashed and compared by the key."""

    __slots__ = ("key", "compute")

    def __init__(self, key, compute):
        self.key, self.compute = key, compute

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Request) and self.key == other.key


def _process_cache(maxsize: int):
    """A process-wide cache of ``_Request`` values (``functools.lru_cache``)."""

    @functools.lru_cache(maxsize=maxsize)
    def computed(request: _Request):
        value = request.compute()
        request.compute = None   # the cache keeps the key, not the parser or renderer that computed it
        return value

    return computed


_parsed = _process_cache(2048)
_measured = _process_cache(8192)
_laid_out = _process_cache(8192)


def shared_cache_info():
    """Hits, misses (parses run) and size of the process-wide cache (``functools`` ``cache_info``)."""
    return _parsed.cache_info()


def shared_metrics_info():
    """Hits, misses (strings measured) and size of the process-wide cache of text sizes."""
    return _measured.cache_info()


def shared_layouts_info():
    """Hits, misses (texts laid out) and size of the process-wide cache of text layouts."""
    return _laid_out.cache_info()


def _rc_snapshot() -> tuple:
    # The keys are filtered before any value is read: reading rcParams["backend"] while it is still
    # undecided (matplotlib's automatic choice) imports pyplot and resolves the backend, which no
    # figure here uses (they are drawn on Agg and PDF canvases of their own).
    import matplotlib

    rc = matplotlib.rcParams
    return tuple((k, repr(rc[k])) for k in sorted(rc) if k.startswith(_RC_PREFIXES))


_RC_PREFIXES = ("mathtext.", "font.", "text.", "pdf.", "ps.")


@contextlib.contextmanager
def shared_mathtext():
    """Within the block, every ``MathTextParser`` reads and fills one process-wide cache (module doc)."""
    from matplotlib.mathtext import MathTextParser

    cached = MathTextParser.__dict__.get("_parse_cached")
    compute = getattr(cached, "__wrapped__", None)
    if compute is None or "_parse_uncached" in MathTextParser.__dict__:   # unknown layout, or already shared
        yield
        return
    rc = _rc_snapshot()

    def parse(self, *args, **kwargs):
        output = getattr(self, "_output_type", None)
        if output is None:   # a parser of unknown kind: its own cache
            return cached(self, *args, **kwargs)
        return _parsed(_Request((type(self), output, rc, args, tuple(sorted(kwargs.items()))),
                                lambda: compute(self, *args, **kwargs)))

    MathTextParser._parse_uncached = compute
    MathTextParser._parse_cached = parse
    try:
        yield
    finally:
        MathTextParser._parse_cached = cached
        del MathTextParser._parse_uncached


def renderer_kind(renderer) -> tuple:
    """What a text's size on ``renderer`` depends on besides the text: the renderer's class and
    resolution, and those of the renderer it draws with (a PDF's mixed-mode renderer)."""
    inner = getattr(renderer, "_renderer", None)   # a PDF's mixed-mode renderer draws with this one
    return type(renderer), getattr(renderer, "dpi", None), type(inner), getattr(inner, "dpi", None)


def _copied_layout(layout):
    """A layout as ``Text._get_layout`` returns it, its box a new ``Bbox`` (callers may change a box,
    never the tuples)."""
    bbox, lines, rest = layout
    return type(bbox)(bbox.get_points().copy()), list(lines), rest


@contextlib.contextmanager
def shared_text_metrics():
    """Within the block, the size (width, height, descent) of a text string is measured once per process,
    for each kind of renderer and resolution, and a text with the same string and properties is laid out
    once (module doc)."""
    from matplotlib import text

    measure = getattr(text, "_get_text_metrics_with_cache", None)
    layout = text.Text.__dict__.get("_get_layout")
    if measure is None or layout is None or getattr(measure, "shared", False):   # unknown layout, or already shared
        yield
        return
    rc = _rc_snapshot()

    def shared(renderer, string, fontprop, ismath, dpi):
        prop = fontprop.copy()   # FontProperties are mutable: the key keeps the values asked for
        return _measured(_Request((renderer_kind(renderer), rc, string, prop, ismath, dpi),
                                  lambda: measure(renderer, string, prop, ismath, dpi)))

    def shared_layout(self, renderer):
        if self.get_wrap():   # its lines depend on where it stands in the figure
            return layout(self, renderer)
        key = (renderer_kind(renderer), rc, self.get_text(), self.get_fontproperties().copy(), self.get_usetex(),
               self.get_parse_math(), self._linespacing, self._get_multialignment(),
               self.get_rotation(),
               self.get_horizontalalignment(), self.get_verticalalignment(), self.get_rotation_mode(),
               getattr(self.figure, "dpi", None))
        return _copied_layout(_laid_out(_Request(key, lambda: _copied_layout(layout(self, renderer)))))

    shared.shared = True
    text._get_text_metrics_with_cache = shared
    text.Text._get_layout = shared_layout
    try:
        yield
    finally:
        text._get_text_metrics_with_cache = measure
        text.Text._get_layout = layout
