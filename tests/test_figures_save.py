"""Saving a figure (``figures.saving.save_figure``): the layout runs once for both files, the PNG is the one
``savefig(bbox_inches="tight")`` writes, bit for bit, and the PDF keeps its text as text (its TrueType fonts
embedded, without layout tables, drawing the same glyphs); text parsed and measured once per process
draws the same."""

import io

import numpy as np
import pytest
from PIL import Image

from figures.paths import OutputPaths
from figures.saving import fix_layout, save_figure
from figures.style import DOUBLE_COLUMN, figure_style

pytestmark = pytest.mark.usefixtures("agg_backend")

METADATA = {"png": {"Title": "demo"}, "pdf": {"Title": "demo"}}


def _figure():
    """What the recipes draw: constrained layout, log axes (mathtext tick labels), titles, an outside legend.
    Two decades per axis (a few labelled ticks each, no labelled minor ticks, as over four): the
    layout's cost is in the minor ticks it places, whose number grows with the decades."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(DOUBLE_COLUMN, 3.0), layout="constrained")
    t = np.linspace(1.0, 100.0, 200)
    for j, ax in enumerate(fig.subplots(1, 2)):
        ax.fill_between(t, 1 / t, 3 / t, alpha=0.25, lw=0)
        ax.plot(t, 2 / t, label=f"line {j}")
        ax.set(xscale="log", yscale="log", xlabel="step t", ylabel="excess risk", title=f"({'ab'[j]}) panel")
    fig.legend(loc="outside lower center", ncols=2)
    fig.suptitle("Demo figure: two panels\nsecond line of the title")
    return fig


def _pixels(data: bytes):
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))


def test_png_is_what_savefig_tight_writes_and_the_layout_runs_once(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    with figure_style():
        reference = io.BytesIO()
        _figure().savefig(reference, format="png", metadata=METADATA["png"])   # matplotlib's own bbox "tight"
        draws = []
        draw = Figure.draw
        monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(1), draw(self, renderer))[1])
        png, pdf = save_figure(_figure(), OutputPaths(out=tmp_path, cache=tmp_path / "cache"), "demo", METADATA)
    # one draw per file, the layout and the box without one (savefig: two per file)
    assert len(draws) == 2
    assert np.array_equal(_pixels(png.read_bytes()), _pixels(reference.getvalue()))
    ours, theirs = Image.open(png), Image.open(reference)
    assert (ours.mode, theirs.mode) == ("RGB", "RGBA")   # opaque: the same pixels without the alpha channel
    assert ours.text == theirs.text and ours.text["Title"] == "demo" and "Matplotlib" in ours.text["Software"]
    assert ours.info["dpi"] == theirs.info["dpi"]
    data = pdf.read_bytes()
    assert b"/FontFile2" in data and b"/Subtype /Image" not in data   # embedded TrueType text, no raster


def test_png_with_transparent_pixels_keeps_its_alpha(tmp_path):
    with figure_style():
        reference = io.BytesIO()
        fig = _figure()
        fig.patch.set_alpha(0.0)
        fig.savefig(reference, format="png")
        fig = _figure()
        fig.patch.set_alpha(0.0)
        png, _ = save_figure(fig, OutputPaths(out=tmp_path, cache=tmp_path / "cache"), "demo", METADATA)
    assert Image.open(png).mode == "RGBA"
    pixels = _pixels(png.read_bytes())
    assert pixels[..., 3].min() == 0 and np.array_equal(pixels, _pixels(reference.getvalue()))


def test_pdf_page_is_the_tight_box():
    import re

    with figure_style():
        fig = _figure()
        bbox = fix_layout(fig)
        out = io.BytesIO()
        fig.savefig(out, format="pdf", bbox_inches=bbox)
    box = [float(x) for x in re.search(rb"/MediaBox \[ *([-\d. ]+)\]", out.getvalue()).group(1).split()]
    # PDF page in points (72 per inch), written with 6 significant digits at most
    assert box[2:] == pytest.approx([72 * bbox.width, 72 * bbox.height], rel=1e-6, abs=1e-3)


def test_fix_layout_needs_the_tight_style():
    import matplotlib

    with figure_style(), matplotlib.rc_context({"savefig.bbox": "standard"}):
        with pytest.raises(ValueError, match="savefig.bbox=None"):
            fix_layout(_figure())


def _saved(fig, fmt):
    out = io.BytesIO()
    fig.savefig(out, format=fmt, bbox_inches=fix_layout(fig), metadata={"CreationDate": None} if fmt == "pdf" else None)
    return _pixels(out.getvalue()) if fmt == "png" else out.getvalue()


@pytest.fixture(scope="module")
def reference():
    """``_figure()`` saved as PNG pixels and PDF bytes by matplotlib alone (no shared cache in
    force), once for the tests of this module that compare with it."""
    with figure_style():
        return [_saved(_figure(), fmt) for fmt in ("png", "pdf")]


def test_shared_mathtext_draws_the_same_and_parses_each_string_once(reference):
    from matplotlib.mathtext import MathTextParser

    from figures.shared_mathtext import shared_cache_info, shared_mathtext

    original = MathTextParser.__dict__["_parse_cached"]
    with figure_style():
        before = shared_cache_info().misses
        with shared_mathtext():
            first = [_saved(_figure(), fmt) for fmt in ("png", "pdf")]
            misses = shared_cache_info().misses
            again = [_saved(_figure(), fmt) for fmt in ("png", "pdf")]
            # the first figure's parses go to the shared cache; the second figure's layout, PNG and
            # PDF find every tick label there (new renderers, new parsers)
            assert misses > before and shared_cache_info().misses == misses
    assert MathTextParser.__dict__["_parse_cached"] is original and "_parse_uncached" not in MathTextParser.__dict__
    for drawn in (first, again):
        assert np.array_equal(drawn[0], reference[0]) and drawn[1] == reference[1]


def test_shared_text_metrics_draw_the_same_and_measure_each_string_once(reference):
    from matplotlib import text

    from figures.shared_mathtext import shared_layouts_info, shared_metrics_info, shared_text_metrics

    original, layout = text._get_text_metrics_with_cache, text.Text.__dict__["_get_layout"]
    with figure_style():
        with shared_text_metrics():
            first = [_saved(_figure(), fmt) for fmt in ("png", "pdf")]
            measured, laid_out = shared_metrics_info(), shared_layouts_info()
            with shared_text_metrics():   # nested: the outer block's cache stays
                again = [_saved(_figure(), fmt) for fmt in ("png", "pdf")]
            # the second figure's layout, PNG and PDF find every string measured and every text laid
            # out (new renderers, new texts)
            assert shared_metrics_info().misses == measured.misses >= 1
            assert shared_layouts_info().misses == laid_out.misses >= 1
            assert shared_layouts_info().hits > laid_out.hits
    assert text._get_text_metrics_with_cache is original and text.Text.__dict__["_get_layout"] is layout
    for drawn in (first, again):
        assert np.array_equal(drawn[0], reference[0]) and drawn[1] == reference[1]


def test_shared_text_metrics_key_the_rc_parameters():
    """A size measured with one ``font.sans-serif`` is not reused under another (the font the
    properties resolve to changes, the properties do not)."""
    import matplotlib
    from matplotlib.figure import Figure

    from figures.shared_mathtext import shared_text_metrics

    def width():
        fig = Figure(figsize=(3.0, 1.0))
        label = fig.text(0.1, 0.3, "excess risk 0.25")
        fig.canvas.draw()
        return label.get_window_extent().width

    with figure_style():
        with matplotlib.rc_context({"font.sans-serif": ["DejaVu Sans Mono"]}):
            mono = width()
        proportional = width()
        assert mono != proportional
        with shared_text_metrics():
            assert width() == proportional
        with matplotlib.rc_context({"font.sans-serif": ["DejaVu Sans Mono"]}), shared_text_metrics():
            assert width() == mono


def test_shared_text_layouts_key_the_text_properties():
    """Texts with one string but another alignment, rotation, line spacing or size are laid out each with
    their own properties: their extents and pixels are the ones matplotlib draws without the shared cache;
    a wrapped text is laid out where it stands."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from figures.shared_mathtext import shared_text_metrics

    label, long = "step $t$\nexcess risk", "a wrapped text, broken into lines where it meets the figure's edge"
    variants = [(label, {}), ("step $t$\nrisk", {}), (label, {"ha": "right"}), (label, {"va": "top"}),
                (label, {"rotation": 30}), (label, {"rotation": 30, "rotation_mode": "anchor"}),
                (label, {"linespacing": 2.0}), (label, {"fontsize": 11}), (label, {"multialignment": "right"}),
                (label, {"parse_math": False}), (long, {"wrap": True}), (long, {"wrap": True, "x": 0.6})]

    def extents():
        fig = Figure(figsize=(3.0, 2.0))
        texts = [fig.text(kw.pop("x", 0.05 + 0.02 * j), 0.5, string, **kw)
                 for j, (string, kw) in enumerate((string, dict(kw)) for string, kw in variants)]
        FigureCanvasAgg(fig).draw()
        return [t.get_window_extent().bounds for t in texts], np.asarray(fig.canvas.buffer_rgba()).copy()

    with figure_style():
        reference, pixels = extents()
        for _ in range(2):   # laid out, then from the shared cache
            with shared_text_metrics():
                boxes, drawn = extents()
            assert boxes == reference and np.array_equal(drawn, pixels)


def test_shared_mathtext_keys_the_rc_parameters():
    """A parse made under one ``mathtext.default`` is not reused under another (the per-renderer cache
    of matplotlib does not key it: it lives for one draw)."""
    import matplotlib
    from matplotlib.figure import Figure

    from figures.shared_mathtext import shared_mathtext

    def figure():
        fig = Figure(figsize=(1.5, 0.6))
        fig.text(0.1, 0.3, r"$x + y$")
        return fig

    with figure_style():
        with matplotlib.rc_context({"mathtext.default": "regular"}):
            upright = _saved(figure(), "png")
        italic = _saved(figure(), "png")
        assert not np.array_equal(upright, italic)
        with shared_mathtext():
            assert np.array_equal(_saved(figure(), "png"), italic)
        with matplotlib.rc_context({"mathtext.default": "regular"}), shared_mathtext():
            assert np.array_equal(_saved(figure(), "png"), upright)


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


def test_pdf_fonts_embedded_without_layout_tables_draw_the_same_glyphs(tmp_path, reference):
    """``save_figure``'s PDF embeds its TrueType fonts without the OpenType layout tables, and every
    character of every font draws the glyph (outline and advance) that matplotlib's own subsetting
    embeds; the pages and every other stream are the same bytes."""
    from figures.saving import LAYOUT_TABLES

    reference = _drawn_glyphs(reference[1])
    with figure_style():
        _, pdf = save_figure(_figure(), OutputPaths(out=tmp_path, cache=tmp_path / "cache"), "demo",
                             {"png": {}, "pdf": {"CreationDate": None}})
    fonts, others = _drawn_glyphs(pdf.read_bytes())
    assert len(fonts) == len(reference[0]) >= 1 and others == reference[1]
    assert any(set(tables) & set(LAYOUT_TABLES) for _, tables in reference[0])   # the reference has some
    assert sum(len(drawn) for drawn, _ in fonts) >= 20   # the labels' characters
    for (drawn, tables), (expected, expected_tables) in zip(fonts, reference[0]):
        assert drawn == expected
        assert set(tables) == set(expected_tables) - set(LAYOUT_TABLES)   # hinting programs and all kept


def test_ticks_placed_once_follow_what_they_depend_on():
    """Inside ``ticks_placed_once`` an axis draws the ticks matplotlib draws without it after its limits,
    scale, size, dpi or tick parameters change, with a locator and formatter shared with an axis of
    another width (``sharex``), and places them once per state."""
    import contextlib

    from matplotlib import axis as maxis
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from figures.saving import ticks_placed_once

    def drawn(block):
        fig = Figure(figsize=(5.0, 2.5))
        left, right = fig.subplots(1, 2, sharex=True, gridspec_kw={"width_ratios": (3, 1)})
        for ax in (left, right):
            ax.plot([1.0, 70.0], [0.5, 3.0])
            ax.set_title("panel")
        canvas, pictures = FigureCanvasAgg(fig), []
        with block:
            for change in (lambda: None, lambda: left.set_xlim(0.5, 40.0), lambda: right.set_yscale("log"),
                           lambda: fig.set_size_inches(2.5, 2.5), lambda: setattr(fig, "dpi", 150.0),
                           lambda: left.tick_params(axis="y", labelsize=16), lambda: left.set_ylim(-3e5, 2e6)):
                change()
                canvas.draw()
                pictures.append(np.asarray(canvas.buffer_rgba()).copy())
        return pictures

    calls = []
    update = maxis.Axis._update_ticks

    def counted(self):
        calls.append(self)
        return update(self)

    with figure_style():
        maxis.Axis._update_ticks = counted
        try:
            reference = drawn(contextlib.nullcontext())
            asked = len(calls)
            placed = drawn(ticks_placed_once())   # wraps the counting function: counts the placements
            computed = len(calls) - asked
        finally:
            maxis.Axis._update_ticks = update
    for got, expected in zip(placed, reference):
        assert np.array_equal(got, expected)
    assert 0 < computed < asked / 2   # each axis asked several times per draw, placed once


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


def test_font_tables_decompiled_once_give_the_same_pdf(monkeypatch):
    """Inside ``lean_font_subsets`` the glyph names, metrics and character maps of a font are decompiled
    once per process: a PDF saved with them kept (the first save fills them, the next ones reuse
    them) is the PDF saved without, byte for byte; the kept tables stay whole; the tables' own
    decompile is back after the block."""
    import contextlib

    from fontTools.ttLib import getTableClass

    import figures.pdf_fonts as pdf_fonts

    def pdf():
        with pdf_fonts.lean_font_subsets():
            return _saved(_figure(), "pdf")

    monkeypatch.setattr(pdf_fonts, "_DECOMPILED", {})
    with figure_style():
        with monkeypatch.context() as m:
            m.setattr(pdf_fonts, "_tables_decompiled_once", contextlib.nullcontext)
            without = pdf()
        assert pdf_fonts._DECOMPILED == {}
        first = pdf()
        kept = {cls.__name__ for cls, _ in pdf_fonts._DECOMPILED}
        assert {"table__p_o_s_t", "table__h_m_t_x"} <= kept and any(k.startswith("cmap_format") for k in kept)
        sizes = {key: {k: len(v) for k, v in attrs.items() if isinstance(v, (list, dict))}
                 for key, attrs in pdf_fonts._DECOMPILED.items()}
        second, third = pdf(), pdf()
    assert without == first == second == third
    # the kept tables are whole (~6,000 glyphs of DejaVu Sans), not the subsets made from their copies
    assert sizes == {key: {k: len(v) for k, v in attrs.items() if isinstance(v, (list, dict))}
                     for key, attrs in pdf_fonts._DECOMPILED.items()}
    assert max(len(attrs["metrics"]) for (cls, _), attrs in pdf_fonts._DECOMPILED.items()
               if cls.__name__ == "table__h_m_t_x") > 1000
    assert not any(getattr(getTableClass(tag).decompile, "decompiled_once", False) for tag in ("post", "hmtx"))


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
