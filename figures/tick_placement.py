"""Ticks placed, and their labels measured, once for each state of an axis while a figure is saved:
``ticks_placed_once`` (used by ``figures.saving.save_figure``).

A draw or a tight box asks each axis for its ticks (``Axis._update_ticks``) and its tick labels' boxes
(``Axis._get_ticklabel_bboxes``) several times, and nothing in between moves them: within the block
an axis does either again only when what it reads (``_tick_state``) has changed.
"""

from __future__ import annotations

import contextlib

__all__ = ["ticks_placed_once"]


def _tick_state(axis) -> tuple:
    """What ``Axis._update_ticks`` reads, as (values, objects): the view and data intervals, the
    smallest positive datum, the axes' box on the canvas and the figure's dpi (the locators' tick
    space), the tick parameters and the formatters' last locations (a formatter shared by axes keeps
    the locations of the last axis it labelled); the locators, formatters, scale and tick lists,
    compared by identity."""
    values = (tuple(axis.get_view_interval()), tuple(axis.get_data_interval()), axis.get_minpos(),
              axis.axes.bbox.bounds, axis.axes.figure.dpi, dict(axis._major_tick_kw), dict(axis._minor_tick_kw),
              [_formatted_locations(f) for f in (axis.major.formatter, axis.minor.formatter)])
    objects = (axis.major.locator, axis.major.formatter, axis.minor.locator, axis.minor.formatter,
               getattr(axis, "_scale", None), axis.__dict__.get("majorTicks"), axis.__dict__.get("minorTicks"))
    return values, objects


def _formatted_locations(formatter):
    # the locations a formatter was last given (``Formatter.set_locs``; ``_locs`` from matplotlib 3.11)
    locs = vars(formatter).get("_locs", vars(formatter).get("locs"))
    return None if locs is None else list(locs)


def _same_state(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and len(a[1]) == len(b[1]) and all(x is y for x, y in zip(a[1], b[1]))


@contextlib.contextmanager
def ticks_placed_once():
    """Within the block, an axis places and labels its ticks (``Axis._update_ticks``: locator,
    formatter, each tick's position and text) again only when what that reads (``_tick_state``) has
    changed since it last did, else returns the ticks it placed then. A draw or a tight box asks each
    axis for its ticks several times (the axis, its spines, its label next to the tick labels of its
    siblings: 2,184 times in the 14 figures, ~440 places), and nothing in between moves them. Where
    ``Axis`` has no ``_update_ticks`` (another matplotlib), the block changes nothing.

    Within the block, the boxes of an axis's tick labels (``Axis._get_ticklabel_bboxes``: each label's
    extent on the canvas) are likewise measured again only when the ticks asked for, the axis's
    ``_tick_state`` or the kind and resolution of the renderer have changed: a draw or a tight box
    measures them for the axis label's place (``_update_label_position``) and then for the axis
    itself, and the box of the whole figure measures them as the layout last did (``_measured_once``)."""
    from matplotlib import axis as maxis

    update = maxis.Axis.__dict__.get("_update_ticks")
    if update is None or getattr(update, "placed_once", False):   # unknown layout, or already in force
        yield
        return
    measure = maxis.Axis.__dict__.get("_get_ticklabel_bboxes")
    placed = {}   # id(axis) -> (axis, state, ticks)

    def placed_once(self):
        last = placed.get(id(self))
        if last is not None and last[0] is self and _same_state(_tick_state(self), last[1]):
            return list(last[2])
        ticks = update(self)
        placed[id(self)] = (self, _tick_state(self), ticks)   # after: the formatters' locations set
        return list(ticks)

    placed_once.placed_once = True
    maxis.Axis._update_ticks = placed_once
    if measure is not None:
        maxis.Axis._get_ticklabel_bboxes = _measured_once(measure)
    try:
        yield
    finally:
        maxis.Axis._update_ticks = update
        if measure is not None:
            maxis.Axis._get_ticklabel_bboxes = measure


def _measured_once(measure):
    """``Axis._get_ticklabel_bboxes(self, ticks, renderer)`` (``measure``) run again for an axis only when
    the ticks (the same objects, in order), its ``_tick_state`` or the renderer's kind and resolution
    differ from its last run; else copies of the boxes found then. A tick label's box is its text's
    extent at its place: the text, font and place are set when the ticks are placed
    (``_update_ticks``, whose inputs ``_tick_state`` lists) and the extent is measured as the shared
    text metrics measure it (``figures.shared_mathtext``: by the renderer's kind and resolution)."""
    from .shared_mathtext import renderer_kind

    measured = {}   # id(axis) -> (axis, ticks, renderer kind, state, boxes)

    def measured_once(self, ticks, renderer=None):
        if renderer is None:   # the figure's own renderer: as matplotlib finds it
            return measure(self, ticks, renderer)
        ticks, kind, last = list(ticks), renderer_kind(renderer), measured.get(id(self))
        if (last is None or last[0] is not self or last[2] != kind or len(last[1]) != len(ticks)
                or any(a is not b for a, b in zip(last[1], ticks)) or not _same_state(_tick_state(self), last[3])):
            boxes = measure(self, ticks, renderer)
            last = (self, ticks, kind, _tick_state(self), boxes)
            measured[id(self)] = last
        return tuple([box.frozen() for box in group] for group in last[4])

    measured_once.measured_once = True
    return measured_once
