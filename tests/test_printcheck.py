"""figures.printcheck finds what keeps a figure from a paper (and passes a figure that is fit)."""

import pytest

from figures.printcheck import print_problems
from figures.style import DOUBLE_COLUMN, PALETTE, SINGLE_COLUMN, figure_style

pytestmark = pytest.mark.usefixtures("agg_backend")


def _figure(width, **plot):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, 2.4), layout="constrained")
    ax = fig.subplots()
    ax.plot([0, 1, 2], [0, 1, 0], label="data", **plot)
    ax.set(xlabel="x", ylabel="y", title="title")
    return fig, ax


def test_a_figure_fit_for_a_paper_has_no_problem():
    with figure_style():
        fig, ax = _figure(SINGLE_COLUMN, color=PALETTE["quadrature"])
        fig.legend(loc="outside lower center")
        assert print_problems(fig) == []


def test_each_problem_is_found():
    with figure_style():
        fig, ax = _figure(5.0, color="#ff0000")            # not a print width; red is not in the palette
        ax.legend(loc="center")                              # over the data
        ax.text(0.5, 0.9, "tiny", fontsize=5, transform=ax.transAxes)
        ax.text(0.1, 0.1, "one", transform=ax.transAxes)
        ax.text(0.1, 0.1, "two", transform=ax.transAxes)   # on top of "one"
        problems = " | ".join(print_problems(fig))
    for expected in ("width 5.00 in", "#ff0000 is not in the palette", "legend lies over",
                     "'tiny' is 5.0 pt", "texts 'one' and 'two' overlap"):
        assert expected in problems, problems


def test_a_layout_warning_is_a_problem():
    from matplotlib.figure import Figure

    with figure_style():
        fig = Figure(figsize=(DOUBLE_COLUMN, 0.3), layout="constrained")   # no room for the axes
        fig.subplots(3, 1)[0].set_title("a title that needs room")
        assert any("warning while drawing" in p for p in print_problems(fig))


def test_a_deprecation_notice_while_drawing_is_not_a_problem_but_other_warnings_are():
    """pyparsing >= 3.3 warns matplotlib < 3.10 of renamed methods on every mathtext parse, with a
    class that is both a UserWarning and a DeprecationWarning: that says nothing of the figure."""
    import warnings

    from matplotlib.artist import Artist

    class LibraryDeprecation(UserWarning, DeprecationWarning):
        pass

    class Noisy(Artist):
        def __init__(self, category):
            super().__init__()
            self.category = category

        def draw(self, renderer):
            warnings.warn(f"drawn with a {self.category.__name__}", self.category)

    problems = {}
    for category in (LibraryDeprecation, PendingDeprecationWarning, UserWarning):
        with figure_style():
            fig, ax = _figure(SINGLE_COLUMN, color=PALETTE["quadrature"])
            fig.add_artist(Noisy(category))
            problems[category] = print_problems(fig)
    assert problems[LibraryDeprecation] == [] and problems[PendingDeprecationWarning] == []
    assert problems[UserWarning] == ["warning while drawing: drawn with a UserWarning"]
