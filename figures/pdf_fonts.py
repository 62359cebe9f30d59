"""The TrueType fonts of a PDF, subset faster and to the same glyphs: ``lean_font_subsets`` (used by
``figures.saving.save_figure``).

matplotlib's PDF backend embeds each font (``pdf.fonttype`` 42) as a subset made by fontTools, which
loads the whole font file at every PDF. Within ``lean_font_subsets`` a font is loaded without its
OpenType layout tables (``LAYOUT_TABLES``), and its glyph names, metrics and character maps are
decompiled once per process (``_tables_decompiled_once``): the same pages, the same glyphs.
"""

from __future__ import annotations

import contextlib
import functools

__all__ = ["LAYOUT_TABLES", "lean_font_subsets"]

# OpenType layout tables: glyph substitution and positioning (GSUB, GPOS, their GDEF, BASE, JSTF,
# MATH) and the legacy kerning table. A text shaper reads them to choose and place glyphs; a PDF
# names every glyph and its position itself (matplotlib lays the text out with the installed font),
# so a font program embedded in a PDF is drawn without them.
LAYOUT_TABLES = ("GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH", "kern")


class _LeanSubsetting:
    """``fontTools.subset`` as matplotlib's PDF backend uses it, except that a font is loaded without
    ``LAYOUT_TABLES`` (dropped before they are parsed)."""

    def __init__(self, fonttools_subset):
        self._subset = fonttools_subset

    def __getattr__(self, name):
        return getattr(self._subset, name)

    def load_font(self, *args, **kwargs):
        font = self._subset.load_font(*args, **kwargs)
        for tag in LAYOUT_TABLES:
            if tag in font:
                del font[tag]   # never parsed: fontTools reads a table at its first use
        return font


@contextlib.contextmanager
def lean_font_subsets():
    """Within the block, the TrueType fonts that matplotlib embeds in a PDF (``pdf.fonttype`` 42,
    subset with fontTools) leave out ``LAYOUT_TABLES``.

    Subsetting parses every table it keeps, and a layout table of DejaVu Sans costs most of it
    (~0.11 s of a subset of ~70 glyphs, ~0.04 s without them: parsing GPOS, GSUB and kern, and
    the substitution closure over them). The glyphs kept are the ones the text uses, with the same
    outlines and advances; without the tables the subset no longer adds the glyphs that a
    substitution could reach (ligatures, variants), which the PDF never draws: matplotlib has chosen
    every glyph before it asks for the subset. The pages and widths are the same bytes, each
    character code draws the same glyph, and poppler renders the 14 figures' PDFs pixel for pixel
    the same (tests/test_pdf_fonts.py checks a figure glyph by glyph). Where matplotlib's PDF
    backend does not subset through ``fontTools.subset.load_font`` (another version), the block
    changes nothing. Within it, the whole-font tables a subset reads are decompiled once per process
    (``_tables_decompiled_once``), and the PDF's text is placed without loading its glyphs (``_TextPlacedOnly``)."""
    from matplotlib.backends import backend_pdf

    # the module through which the PDF backend subsets its fonts (a private one of matplotlib's)
    pdf_ps = getattr(backend_pdf, "_backend_pdf_ps", None)
    fonttools_subset = getattr(pdf_ps, "subset", None)
    if not callable(getattr(fonttools_subset, "load_font", None)) or isinstance(fonttools_subset, _LeanSubsetting):
        yield
        return
    pdf_ps.subset = _LeanSubsetting(fonttools_subset)
    helpers = getattr(backend_pdf, "_text_helpers", None)
    lean_text = not isinstance(helpers, _TextPlacedOnly) and _places_and_loads(getattr(helpers, "layout", None))
    if lean_text:
        backend_pdf._text_helpers = _TextPlacedOnly(helpers)
    try:
        with _tables_decompiled_once():
            yield
    finally:
        pdf_ps.subset = fonttools_subset
        if lean_text:
            backend_pdf._text_helpers = helpers


@functools.lru_cache(maxsize=None)
def _places_and_loads(layout) -> bool:
    """``layout`` places the glyphs with ``FT2Font._layout`` and loads each one (matplotlib >= 3.11)."""
    import inspect

    try:
        code = inspect.getsource(layout)
    except (OSError, TypeError):
        return False
    return "._layout(" in code and "load_glyph(" in code and "LoadFlags.NO_HINTING" in code


class _TextPlacedOnly:
    """``matplotlib._text_helpers`` as ``RendererPdf.draw_text`` reads it, except that ``layout`` gives the
    glyphs' places (``FT2Font._layout``, unhinted, as matplotlib's) without loading each glyph into its
    font: the PDF names each glyph and its place, and never reads a loaded glyph (the outlines come from
    the font file). The same page streams, byte for byte (the 14 figures), ~40% less CPU in the PDF's
    text layout (~0.12-0.19 s for the 14 figures' 8,369 characters)."""

    def __init__(self, helpers):
        self._helpers = helpers

    def __getattr__(self, name):
        return getattr(self._helpers, name)

    @staticmethod
    def layout(string, font, *, features=None, language=None):
        from matplotlib.ft2font import LoadFlags

        return iter(font._layout(string, LoadFlags.NO_HINTING, features=features, language=language))


# Font tables decompiled while subsetting, kept for the process: (table class, what its decompile
# reads) -> the attributes it set, containers copied on every use (``_tables_decompiled_once``).
_DECOMPILED: dict = {}
# The glyph tables split into their glyphs' data: (table class, data, offsets, glyph order) -> ((glyph
# name, its data), ...) (``_glyphs_split_once``).
_GLYPHS_SPLIT: dict = {}
_IMMUTABLE = (str, bytes, int, float, tuple, type(None))


def _fresh(value):
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


def _storable(value) -> bool:
    """A value whose copy by ``_fresh`` shares nothing mutable with it."""
    if isinstance(value, list):
        return all(isinstance(x, _IMMUTABLE) for x in value)
    if isinstance(value, dict):
        return all(isinstance(x, _IMMUTABLE) for x in value.values())
    return isinstance(value, _IMMUTABLE)


def _decompiled_once(decompile, reads):
    """``decompile(self, data, ttFont)`` run once per process for each table class and each value of
    ``reads(self, data, ttFont)`` (everything the decompile reads; None: not kept, decompiled as
    usual); then the attributes it set are given back, lists and dicts as new copies (their items
    are immutable: else the table is not kept)."""

    def once(self, data, ttFont):
        read = reads(self, data, ttFont)
        if read is None:
            return decompile(self, data, ttFont)
        key = (type(self), read)
        found = _DECOMPILED.get(key)
        if found is None:
            before = dict(vars(self))
            decompile(self, data, ttFont)
            found = {k: v for k, v in vars(self).items() if k not in before or before[k] is not v}
            if all(_storable(v) for v in found.values()):
                _DECOMPILED[key] = {k: _fresh(v) for k, v in found.items()}
            return None
        vars(self).update({k: _fresh(v) for k, v in found.items()})
        return None

    once.decompiled_once = True
    return once


def _post_reads(self, data, ttFont):
    # format 2.0 (glyph names): the header, the names and the glyph count (maxp) are all it reads
    return (bytes(data), ttFont.getGlyphCount()) if bytes(data[:4]) == b"\x00\x02\x00\x00" else None


def _metrics_reads(self, data, ttFont):
    # hmtx (and vmtx): the metrics, the glyph count (maxp), the number of long metrics (hhea) and the glyph order
    header = ttFont.get(self.headerTag)
    return (bytes(data), ttFont[self.maxpTag].numGlyphs,
            None if header is None else getattr(header, self.numberOfMetricsName), tuple(ttFont.getGlyphOrder()))


def _cmap_subtable_reads(self, data, ttFont):
    # a cmap subtable decompiled at its first use (data and ttFont None): its data after the header,
    # its format and group count, and the glyph order (glyph indices become names)
    # (read from the instance: a missing attribute would decompile it again through its __getattr__)
    own = vars(self)
    if data is not None or ttFont is not None or own.get("data") is None or own.get("ttFont") is None:
        return None
    return (own.get("format"), own.get("nGroups"), bytes(own["data"]), tuple(own["ttFont"].getGlyphOrder()))


def _glyphs_split_once(decompile):
    """``glyf`` decompile (``decompile(self, data, ttFont)``) with the split of the table into its glyphs'
    data (one slice per glyph between successive ``loca`` offsets, named by the glyph order) run once per
    process for each table data, offsets and glyph order; then each glyph is a new ``Glyph`` of its slice,
    as the decompile makes it (its outline is parsed at its first use, on that new object). Anything
    else (offsets not kept as an array, glyphs without a name, data beyond the last offset): decompiled
    as usual, and not kept."""

    def once(self, data, ttFont):
        from fontTools import ttLib

        glyph = ttLib.getTableModule("glyf").Glyph

        loca = ttFont[self.locaTag]
        locations = getattr(loca, "locations", None)
        order = ttFont.getGlyphOrder()
        if not hasattr(locations, "tobytes") or len(order) < len(locations) - 1:
            return decompile(self, data, ttFont)
        key = (type(self), bytes(data), locations.typecode, locations.tobytes(), tuple(order))
        pieces = _GLYPHS_SPLIT.get(key)
        if pieces is None:
            decompile(self, data, ttFont)
            if len(data) - locations[-1] < 4 and len(self.glyphs) == len(locations) - 1:
                _GLYPHS_SPLIT[key] = tuple((name, bytes(data[locations[i]:locations[i + 1]]))
                                         for i, name in enumerate(order[:len(locations) - 1]))
            return None
        self.glyphs = {name: glyph(piece) for name, piece in pieces}
        self.glyphOrder = order
        self._reverseGlyphOrder = {}
        if ttFont.lazy is False:
            self.ensureDecompiled()
        return None

    once.decompiled_once = True
    return once


@contextlib.contextmanager
def _tables_decompiled_once():
    """Within the block, the glyph names (post), horizontal metrics (hmtx) and character maps (cmap
    formats 4 and 12) of a font are decompiled once per process (``_decompiled_once``), and its glyph
    table is split into its glyphs once (``_glyphs_split_once``). Subsetting reads each of them whole,
    for every glyph of the font (~6,000 in DejaVu Sans), at every PDF: ~14 ms of a ~37 ms subset for
    the first four, ~9 ms for the glyph table, 2 fonts per figure. A table decompiles to the same
    attributes whenever what it reads is the same; the subset then changes copies of them. Where
    fontTools has none of these classes (another version), the block changes nothing."""
    try:
        from fontTools import ttLib

        cmap = ttLib.getTableModule("cmap")
        post, hmtx, glyf = ttLib.getTableClass("post"), ttLib.getTableClass("hmtx"), ttLib.getTableClass("glyf")
    except (ImportError, AttributeError):
        yield
        return
    kept = functools.partial
    patches = [(cls, wrap) for cls, wrap in (
        (post, kept(_decompiled_once, reads=_post_reads)), (hmtx, kept(_decompiled_once, reads=_metrics_reads)),
        (getattr(cmap, "cmap_format_4", None), kept(_decompiled_once, reads=_cmap_subtable_reads)),
        (getattr(cmap, "cmap_format_12_or_13", None), kept(_decompiled_once, reads=_cmap_subtable_reads)),
        (glyf, _glyphs_split_once))
        if cls is not None and "decompile" in vars(cls) and not getattr(vars(cls)["decompile"], "decompiled_once", False)]
    originals = [(cls, vars(cls)["decompile"]) for cls, _ in patches]
    for cls, wrap in patches:
        cls.decompile = wrap(vars(cls)["decompile"])
    try:
        yield
    finally:
        for cls, decompile in originals:
            cls.decompile = decompile
