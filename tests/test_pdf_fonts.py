"""PDF fonts of a saved figure (``figures.pdf_fonts``, through ``figures.saving.save_figure``): TrueType fonts
embedded without layout tables draw the same glyphs; font tables decompiled once per process give the same PDF
bytes and are handed out as copies; the backend is restored after the block."""

import io

import numpy as np
import pytest
from demo_figure import demo_figure, saved

from figures.paths import OutputPaths
from figures.saving import save_figure, ticks_placed_once
from figures.shared_mathtext import shared_text_metrics
from figures.style import figure_style

pytestmark = pytest.mark.usefixtures("agg_backend", "drawing_collections")


@pytest.fixture
def reference_pdf(demo_reference):
    """``demo_figure()`` saved as PDF bytes by matplotlib alone (no shared cache in force), once per
    test run (``demo_figure.matplotlib_reference``)."""
    return demo_reference.pdf


def _pdf_objects(data: bytes) -> dict:
    """``{number: (dictionary, stream)}`` of a PDF's objects, streams inflated (None without one)."""
    import re
    import zlib

    objects = {}
    for match in re.finditer(rb"(\d+) 0 obj\s(.*?)endobj", data, re.S):
        body = match.group(2)
        head, sep, rest = body.partition(b"stream")
        stream = None
        if sep:
            raw = re.sub(rb"^\r?\n", b"", rest).rsplit(b"endstream", 1)[0]
            # a deflate stream ends itself: the end-of-line before "endstream" is left unused
            stream = zlib.decompressobj().decompress(raw) if b"/FlateDecode" in head else raw.rstrip(b"\r\n")
        objects[int(match.group(1))] = (head, stream)
    return objects


def _drawn_glyphs(data: bytes) -> tuple:
    """What a viewer draws for each character code of each embedded TrueType font (``CIDFontType2``, in
    the order of the file): ``{cid: (outline, advance)}`` read through the font's ``CIDToGIDMap`` and its
    ``FontFile2`` program, the program's tables, and every other stream of the file."""
    import re

    from fontTools.ttLib import TTFont

    objects = _pdf_objects(data)
    ref = lambda head, key: int(re.search(rb"/" + key + rb" (\d+) 0 R", head).group(1))   # noqa: E731
    fonts, used = [], set()
    for number, (head, _) in sorted(objects.items()):
        if b"/CIDFontType2" not in head:
            continue
        cid_map, descriptor = ref(head, b"CIDToGIDMap"), ref(head, b"FontDescriptor")
        program = ref(objects[descriptor][0], b"FontFile2")
        used |= {cid_map, program}
        font = TTFont(io.BytesIO(objects[program][1]))
        order, glyf, hmtx = font.getGlyphOrder(), font["glyf"], font["hmtx"]
        gids = np.frombuffer(objects[cid_map][1], dtype=">u2")
        drawn = {int(cid): (repr(glyf[order[gid]].getCoordinates(glyf)), hmtx[order[gid]][0])
                 for cid, gid in enumerate(gids) if gid}
        fonts.append((drawn, sorted(font.keys())))
    others = [stream for number, (_, stream) in sorted(objects.items()) if stream is not None and number not in used]
    return fonts, others


def test_pdf_fonts_embedded_without_layout_tables_draw_the_same_glyphs(tmp_path, reference_pdf):
    """``save_figure``'s PDF embeds its TrueType fonts without the OpenType layout tables, and every
    character of every font draws the glyph (outline and advance) that matplotlib's own subsetting
    embeds; the pages and every other stream are the same bytes."""
    from figures.saving import LAYOUT_TABLES

    reference = _drawn_glyphs(reference_pdf)
    with figure_style():
        _, pdf = save_figure(demo_figure(), OutputPaths(out=tmp_path, cache=tmp_path / "cache"), "demo",
                             {"png": {}, "pdf": {"CreationDate": None}})
    fonts, others = _drawn_glyphs(pdf.read_bytes())
    assert len(fonts) == len(reference[0]) >= 1 and others == reference[1]
    assert any(set(tables) & set(LAYOUT_TABLES) for _, tables in reference[0])   # the reference has some
    assert sum(len(drawn) for drawn, _ in fonts) >= 20   # the labels' characters
    for (drawn, tables), (expected, expected_tables) in zip(fonts, reference[0]):
        assert drawn == expected
        assert set(tables) == set(expected_tables) - set(LAYOUT_TABLES)   # hinting programs and all kept


def test_lean_font_subsets_restores_the_backend():
    from matplotlib.backends import backend_pdf

    from figures.saving import lean_font_subsets

    pdf_ps = backend_pdf._backend_pdf_ps
    original = pdf_ps.subset
    with lean_font_subsets():
        with lean_font_subsets():   # nested: the outer block's subsetting stays
            inner = pdf_ps.subset
        assert pdf_ps.subset is inner is not original
    assert pdf_ps.subset is original


def test_pdf_text_placed_without_glyph_loads_is_placed_the_same(reference_pdf):
    """Within ``lean_font_subsets`` the PDF backend's text layout gives the glyphs, fonts and places that
    matplotlib's gives (a fallback font's glyph, kerning and a superscript among them); the page
    streams of the demo figure are the same bytes; after the block the backend has matplotlib's module."""
    import re
    import zlib

    from matplotlib import font_manager
    from matplotlib.backends import backend_pdf

    from figures.pdf_fonts import lean_font_subsets

    helpers = backend_pdf._text_helpers   # matplotlib's module, as the backend reads it

    font = font_manager.get_font(font_manager.fontManager._find_fonts_by_props(font_manager.FontProperties(size=7)))
    font.set_size(7, 72)

    def placed(layout):
        return [(item.ft_object.fname, item.char, item.glyph_index, item.x, item.y, item.prev_kern)
                for string in ("AVAT excess risk R − ε²", "step t ≥ 10⁴ “κ, ν”", "中 x") for item in layout(string, font)]

    def pages(data):
        return [zlib.decompress(m) for m in re.findall(rb"/Filter /FlateDecode[^>]*>>\s*stream\n(.*?)endstream", data, re.S)
                if b"BT" in zlib.decompress(m)]

    # matplotlib places text with FT2Font._layout from 3.11 on: there the lean layout must be taken; before,
    # the block leaves matplotlib's own (whose items have no glyph_index) and the PDF is the same.
    lean_expected = hasattr(font, "_layout")
    expected = placed(helpers.layout) if lean_expected else None
    with figure_style():
        reference = pages(reference_pdf)
        with lean_font_subsets():
            assert (backend_pdf._text_helpers is not helpers) == lean_expected
            if lean_expected:
                assert placed(backend_pdf._text_helpers.layout) == expected
            drawn = pages(saved(demo_figure(), "pdf"))
    assert backend_pdf._text_helpers is helpers
    assert reference and drawn == reference


def test_font_tables_decompiled_once_give_the_same_pdf(monkeypatch):
    """Inside ``lean_font_subsets`` the glyph names, metrics and character maps of a font are decompiled,
    and its glyph table split into glyphs, once per process: a PDF saved with them kept (the first save fills them, the next ones reuse
    them) is the PDF saved without, byte for byte; the kept tables stay whole; the tables' own
    decompile is back after the block."""
    import contextlib

    from fontTools.ttLib import getTableClass

    import figures.pdf_fonts as pdf_fonts

    def pdf():
        with pdf_fonts.lean_font_subsets():
            return saved(demo_figure(), "pdf")

    monkeypatch.setattr(pdf_fonts, "_DECOMPILED", {})
    monkeypatch.setattr(pdf_fonts, "_GLYPHS_SPLIT", {})
    # the four saved as save_figure saves them (each text measured, each axis's ticks placed once): the
    # pages drawn the same (tests/test_figures_save.py), each font subset from the same characters
    with figure_style(), shared_text_metrics(), ticks_placed_once():
        with monkeypatch.context() as m:
            m.setattr(pdf_fonts, "_tables_decompiled_once", contextlib.nullcontext)
            without = pdf()
        assert pdf_fonts._DECOMPILED == {} == pdf_fonts._GLYPHS_SPLIT
        first = pdf()
        kept = {cls.__name__ for cls, _ in pdf_fonts._DECOMPILED}
        assert {"table__p_o_s_t", "table__h_m_t_x"} <= kept and any(k.startswith("cmap_format") for k in kept)
        # each font's glyph table split once: every glyph of the font (~6,000 in DejaVu Sans), each
        # subset given new glyphs of the kept pieces (subsetting expands and trims the glyphs it keeps)
        split = {key[0].__name__: len(pieces) for key, pieces in pdf_fonts._GLYPHS_SPLIT.items()}
        assert set(split) == {"table__g_l_y_f"} and min(split.values()) > 1000
        pieces = dict(pdf_fonts._GLYPHS_SPLIT)
        sizes = {key: {k: len(v) for k, v in attrs.items() if isinstance(v, (list, dict))}
                 for key, attrs in pdf_fonts._DECOMPILED.items()}
        second, third = pdf(), pdf()
    assert without == first == second == third
    # the kept tables are whole (~6,000 glyphs of DejaVu Sans), not the subsets made from their copies
    assert sizes == {key: {k: len(v) for k, v in attrs.items() if isinstance(v, (list, dict))}
                     for key, attrs in pdf_fonts._DECOMPILED.items()}
    assert max(len(attrs["metrics"]) for (cls, _), attrs in pdf_fonts._DECOMPILED.items()
               if cls.__name__ == "table__h_m_t_x") > 1000
    assert pdf_fonts._GLYPHS_SPLIT.keys() == pieces.keys()   # the later PDFs split no glyph table again
    assert all(pdf_fonts._GLYPHS_SPLIT[key] is kept for key, kept in pieces.items())
    assert not any(getattr(getTableClass(tag).decompile, "decompiled_once", False) for tag in ("post", "hmtx", "glyf"))


def test_a_table_decompiled_once_is_handed_out_as_copies():
    """A reused decompile gives new lists and dicts (with the kept values), so that changing one
    table's does not change the next; what it reads keys it; a table holding a mutable item inside a
    container is not kept (decompiled every time)."""
    import figures.pdf_fonts as pdf_fonts

    calls = []

    class Table:
        def decompile(self, data, font):
            calls.append(data)
            self.names, self.widths, self.scale = list(data), {c: ord(c) for c in data}, len(data)

    class Nested(Table):
        def decompile(self, data, font):
            calls.append(data)
            self.names = [list(data)]

    for cls in (Table, Nested):
        cls.decompile = pdf_fonts._decompiled_once(cls.decompile, lambda self, data, font: data)
    first, second, other = Table(), Table(), Table()
    first.decompile("ab", None)
    first.names.append("z"); first.widths["z"] = 0
    second.decompile("ab", None)
    other.decompile("abc", None)
    assert calls == ["ab", "abc"]
    assert (second.names, second.widths, second.scale) == (["a", "b"], {"a": 97, "b": 98}, 2)
    assert second.names is not first.names and other.names == ["a", "b", "c"]
    Nested().decompile("ab", None), Nested().decompile("ab", None)
    assert calls == ["ab", "abc", "ab", "ab"]
