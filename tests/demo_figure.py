"""The demo figure the saving tests draw (tests/test_figures_save.py, tests/test_pdf_fonts.py), a figure
saved to PNG pixels or PDF bytes as ``figures.saving`` lays it out, and the demo figure as matplotlib
alone saves it (``matplotlib_reference``), for the tests of both files that compare with it."""

import io
from types import SimpleNamespace

import numpy as np
from PIL import Image

from figures.saving import fix_layout
from figures.style import DOUBLE_COLUMN, figure_style


def demo_figure():
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


def pixels(data: bytes):
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))


def saved_in_box(fig, fmt):
    """``fig`` laid out by ``fix_layout`` and saved as PNG pixels or PDF bytes (no creation date), and
    the box saved (inches)."""
    bbox = fix_layout(fig)
    out = io.BytesIO()
    fig.savefig(out, format=fmt, bbox_inches=bbox, metadata={"CreationDate": None} if fmt == "pdf" else None)
    return (pixels(out.getvalue()) if fmt == "png" else out.getvalue()), bbox


def saved(fig, fmt):
    return saved_in_box(fig, fmt)[0]


def matplotlib_reference():
    """``demo_figure()`` saved by matplotlib alone (no shared cache of ``figures`` in force) in the project
    style, computed once per test run (the fixture ``demo_reference``, tests/conftest.py): ``png``,
    matplotlib's own ``savefig(bbox_inches="tight")`` PNG titled ``demo`` (two draws), and its ``pixels``
    (read-only), which ``saved`` also gives; ``pdf``, the PDF bytes ``saved`` writes, in the box ``box``."""
    with figure_style():
        png = io.BytesIO()
        demo_figure().savefig(png, format="png", metadata={"Title": "demo"})
        pdf, box = saved_in_box(demo_figure(), "pdf")
    image = pixels(png.getvalue())
    image.flags.writeable = False
    return SimpleNamespace(png=png.getvalue(), pixels=image, pdf=pdf, box=box)
