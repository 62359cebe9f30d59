"""Saving a figure (``figures.saving.save_figure``): the layout runs once for both files, the PNG is the one
``savefig(bbox_inches="tight")`` writes, bit for bit, and the PDF keeps its text as text (its TrueType fonts
embedded: tests/test_pdf_fonts.py); text parsed and measured once per process, and ticks placed once per
state, draw the same."""

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from demo_figure import demo_figure, pixels, saved
from PIL import Image

from figures.paths import OutputPaths
from figures.saving import GC_YOUNG_THRESHOLD, fewer_collections, fix_layout, save_figure, write_rgb_png
from figures.style import figure_style

pytestmark = pytest.mark.usefixtures("agg_backend", "drawing_collections")

METADATA = {"png": {"Title": "demo"}, "pdf": {"Title": "demo"}}


@pytest.fixture
def reference(demo_reference):
    """``demo_figure()`` saved by matplotlib alone (no shared cache in force): its PNG (matplotlib's
    ``savefig(bbox_inches="tight")``) and pixels, its PDF as ``saved`` writes it and the box; once per
    test run for the tests that compare with it (``demo_figure.matplotlib_reference``)."""
    return demo_reference


def test_png_is_what_savefig_tight_writes_and_the_layout_runs_once(tmp_path, monkeypatch, reference):
    from matplotlib.figure import Figure

    assert METADATA["png"] == {"Title": "demo"}   # the reference's (matplotlib's own bbox "tight")
    with figure_style():
        draws = []
        draw = Figure.draw
        monkeypatch.setattr(Figure, "draw", lambda self, renderer: (draws.append(1), draw(self, renderer))[1])
        png, pdf = save_figure(demo_figure(), OutputPaths(out=tmp_path, cache=tmp_path / "cache"), "demo", METADATA)
    # one draw per file, the layout and the box without one (savefig: two per file)
    assert len(draws) == 2
    assert np.array_equal(pixels(png.read_bytes()), reference.pixels)
    ours, theirs = Image.open(png), Image.open(io.BytesIO(reference.png))
    assert (ours.mode, theirs.mode) == ("RGB", "RGBA")   # opaque: the same pixels without the alpha channel
    assert ours.text == theirs.text and ours.text["Title"] == "demo" and "Matplotlib" in ours.text["Software"]
    assert ours.info["dpi"] == theirs.info["dpi"]
    data = pdf.read_bytes()
    assert b"/FontFile2" in data and b"/Subtype /Image" not in data   # embedded TrueType text, no raster


def test_png_with_transparent_pixels_keeps_its_alpha(tmp_path):
    with figure_style():
        reference = io.BytesIO()
        fig = demo_figure()
        fig.patch.set_alpha(0.0)
        fig.savefig(reference, format="png")
        fig = demo_figure()
        fig.patch.set_alpha(0.0)
        png, _ = save_figure(fig, OutputPaths(out=tmp_path, cache=tmp_path / "cache"), "demo", METADATA)
    assert Image.open(png).mode == "RGBA"
    ours = pixels(png.read_bytes())
    assert ours[..., 3].min() == 0 and np.array_equal(ours, pixels(reference.getvalue()))


def test_rgb_png_decodes_to_its_pixels_text_and_resolution():
    rng = np.random.default_rng(7)
    rgba = rng.integers(0, 256, size=(37, 53, 4), dtype=np.uint8)   # noise: every byte value, no run to lean on
    out = io.BytesIO()
    write_rgb_png(out, rgba, dpi=300, text={"Title": "demo", "Description": "\u03c9 = 2\u03c0 f"})   # iTXt
    image = Image.open(io.BytesIO(out.getvalue()))
    reference = io.BytesIO()
    Image.fromarray(rgba[..., :3]).save(reference, format="png", dpi=(300, 300))
    assert image.mode == "RGB" and np.array_equal(np.asarray(image), rgba[..., :3])
    assert image.text == {"Title": "demo", "Description": "\u03c9 = 2\u03c0 f"}
    assert image.info["dpi"] == Image.open(reference).info["dpi"]
    # three channels, and a view that is not contiguous (every other column): the same pixels
    for rgb in (np.ascontiguousarray(rgba[..., :3]), rgba[:, ::2]):
        out = io.BytesIO()
        write_rgb_png(out, rgb, dpi=300, text={})
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(out.getvalue()))), rgb[..., :3])
    for bad in (rgba.astype(np.uint16), rgba[..., :2], rgba[:0]):
        with pytest.raises(ValueError, match="rgb of dtype"):
            write_rgb_png(io.BytesIO(), bad, dpi=300, text={})


def test_pdf_page_is_the_tight_box(reference):
    import re

    bbox = reference.box   # fix_layout's, the PDF saved in it
    box = [float(x) for x in re.search(rb"/MediaBox \[ *([-\d. ]+)\]", reference.pdf).group(1).split()]
    # PDF page in points (72 per inch), written with 6 significant digits at most
    assert box[2:] == pytest.approx([72 * bbox.width, 72 * bbox.height], rel=1e-6, abs=1e-3)


def test_fix_layout_needs_the_tight_style():
    import matplotlib

    with figure_style(), matplotlib.rc_context({"savefig.bbox": "standard"}):
        with pytest.raises(ValueError, match="savefig.bbox=None"):
            fix_layout(demo_figure())


def test_shared_mathtext_draws_the_same_and_parses_each_string_once(reference):
    from matplotlib.mathtext import MathTextParser

    from figures.shared_mathtext import shared_cache_info, shared_mathtext

    original = MathTextParser.__dict__["_parse_cached"]
    with figure_style():
        before = shared_cache_info().misses
        with shared_mathtext():
            first = [saved(demo_figure(), fmt) for fmt in ("png", "pdf")]
            misses = shared_cache_info().misses
            again = [saved(demo_figure(), fmt) for fmt in ("png", "pdf")]
            # the first figure's parses go to the shared cache; the second figure's layout, PNG and
            # PDF find every tick label there (new renderers, new parsers)
            assert misses > before and shared_cache_info().misses == misses
    assert MathTextParser.__dict__["_parse_cached"] is original and "_parse_uncached" not in MathTextParser.__dict__
    for drawn in (first, again):
        assert np.array_equal(drawn[0], reference.pixels) and drawn[1] == reference.pdf


def test_shared_text_metrics_draw_the_same_and_measure_each_string_once(reference):
    from matplotlib import text

    from figures.shared_mathtext import shared_layouts_info, shared_metrics_info, shared_text_metrics

    original, layout = text._get_text_metrics_with_cache, text.Text.__dict__["_get_layout"]
    with figure_style():
        with shared_text_metrics():
            first = [saved(demo_figure(), fmt) for fmt in ("png", "pdf")]
            measured, laid_out = shared_metrics_info(), shared_layouts_info()
            with shared_text_metrics():   # nested: the outer block's cache stays
                again = [saved(demo_figure(), fmt) for fmt in ("png", "pdf")]
            # the second figure's layout, PNG and PDF find every string measured and every text laid
            # out (new renderers, new texts)
            assert shared_metrics_info().misses == measured.misses >= 1
            assert shared_layouts_info().misses == laid_out.misses >= 1
            assert shared_layouts_info().hits > laid_out.hits
    assert text._get_text_metrics_with_cache is original and text.Text.__dict__["_get_layout"] is layout
    for drawn in (first, again):
        assert np.array_equal(drawn[0], reference.pixels) and drawn[1] == reference.pdf


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
        reference, expected = extents()
        for _ in range(2):   # laid out, then from the shared cache
            with shared_text_metrics():
                boxes, drawn = extents()
            assert boxes == reference and np.array_equal(drawn, expected)


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
            upright = saved(figure(), "png")
        italic = saved(figure(), "png")
        assert not np.array_equal(upright, italic)
        with shared_mathtext():
            assert np.array_equal(saved(figure(), "png"), italic)
        with matplotlib.rc_context({"mathtext.default": "regular"}), shared_mathtext():
            assert np.array_equal(saved(figure(), "png"), upright)


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

    calls, boxes = [], []
    update, measure = maxis.Axis._update_ticks, maxis.Axis._get_ticklabel_bboxes

    def counted(self):
        calls.append(self)
        return update(self)

    def measured(self, ticks, renderer):
        boxes.append(self)
        return measure(self, ticks, renderer)

    with figure_style():
        maxis.Axis._update_ticks, maxis.Axis._get_ticklabel_bboxes = counted, measured
        try:
            reference = drawn(contextlib.nullcontext())
            asked, asked_boxes = len(calls), len(boxes)
            placed = drawn(ticks_placed_once())   # wraps the counting functions: counts the placements
            computed, computed_boxes = len(calls) - asked, len(boxes) - asked_boxes
        finally:
            maxis.Axis._update_ticks, maxis.Axis._get_ticklabel_bboxes = update, measure
    for got, expected in zip(placed, reference):
        assert np.array_equal(got, expected)
    assert 0 < computed < asked / 2   # each axis asked several times per draw, placed once
    assert 0 < computed_boxes <= asked_boxes / 2   # its labels measured for its label's place, then reused


def test_tick_label_boxes_follow_the_renderer():
    """Inside ``ticks_placed_once`` the tick labels' boxes measured for a PNG are not reused for a PDF
    (other text metrics) nor the PDF's for the next PNG: each file is the one matplotlib writes without
    the block, and the boxes are given as copies."""
    import matplotlib
    from matplotlib import axis as maxis
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from figures.saving import ticks_placed_once

    def figure():
        fig = Figure(figsize=(3.4, 2.4), layout="constrained")
        ax = fig.subplots()
        ax.plot([1e-3, 10.0], [0.5, 3.0])
        ax.set(xscale="log", xlabel="step $t$", ylabel="risk")
        return fig

    # at the PDF's resolution (72 dpi) too, where the PNG's canvas has the size of the PDF's page
    with figure_style(), matplotlib.rc_context({"savefig.dpi": 72}):
        fig = figure()
        reference = [saved(fig, fmt) for fmt in ("png", "pdf")]   # matplotlib's next PNG is its first
        with ticks_placed_once():
            fig = figure()
            drawn = [saved(fig, fmt) for fmt in ("png", "pdf", "png")]
            FigureCanvasAgg(fig).draw()
            ticks = fig.axes[0].xaxis._update_ticks()
            renderer = fig.canvas.get_renderer()
            first, _ = fig.axes[0].xaxis._get_ticklabel_bboxes(ticks, renderer)
            first[0].x0 += 100.0   # a caller's change stays its own
            again, _ = fig.axes[0].xaxis._get_ticklabel_bboxes(ticks, renderer)
            assert again[0].x0 == first[0].x0 - 100.0
        assert "measured_once" not in vars(maxis.Axis._get_ticklabel_bboxes)
    assert np.array_equal(drawn[0], reference[0]) and np.array_equal(drawn[2], reference[0])
    assert drawn[1] == reference[1]


def test_fewer_collections_raise_the_youngest_threshold_and_restore_it():
    import gc

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_collections():
            assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, 10, 10)
            with fewer_collections(10):   # never fewer than the threshold in force
                assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (700, 10, 10)
        with pytest.raises(RuntimeError), fewer_collections(1000):
            raise RuntimeError("a failing figure")
        assert gc.get_threshold() == (700, 10, 10)
        with pytest.raises(ValueError, match="young=0"), fewer_collections(0):
            pass
    finally:
        gc.set_threshold(*before)


def test_drawing_and_saving_a_figure_loads_no_pyplot(tmp_path):
    """A worker draws and saves figures as ``figures.runner`` does (style, shared text caches, ticks placed
    once) without pyplot: reading every rcParam (``backend`` included, while matplotlib has not chosen
    one) would import pyplot and resolve the backend (figures.shared_mathtext._rc_snapshot). A new
    process, no backend selected (MPLBACKEND unset)."""
    code = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from demo_figure import demo_figure
from figures.paths import OutputPaths
from figures.saving import fewer_collections, save_figure
from figures.shared_mathtext import shared_mathtext
from figures.style import figure_style
with figure_style(), shared_mathtext(), fewer_collections():
    save_figure(demo_figure(), OutputPaths.resolve({str(tmp_path)!r}), "demo", {{"png": None, "pdf": None}})
print(sorted(m for m in sys.modules if m == "matplotlib.pyplot"))
"""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
    assert (tmp_path / "figures" / "demo.png").stat().st_size > 0 and (tmp_path / "figures" / "demo.pdf").stat().st_size > 0
