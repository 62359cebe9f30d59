"""Each mathtext string parsed once per process while figures are drawn: ``shared_mathtext()``.

matplotlib keeps a parsed mathtext string (``MathTextParser._parse_cached``, a per-parser cache) for the
renderer that asked for it, and every renderer has its own parser: saving one figure lays it out with
one renderer and draws it with a new one per file, so each tick label of a log axis
(``$\\mathdefault{10^{-3}}$``) is parsed again for the layout, the PNG and the PDF, and again in the
next figure. The 13 full figures asked for 337 parses of 43 strings, 1.8 s CPU of their 14 s of
drawing and saving (load ~10).

Inside ``with shared_mathtext():`` a parse is kept for the whole process, keyed by what it depends on:
the parser's output (raster for Agg, vector for PDF), the string, dpi, font properties, antialiasing
and glyph-loading flags (the arguments of ``_parse_cached``), and the ``mathtext.*``, ``font.*`` and
``text.*`` rcParams in force when the block was entered (which the per-parser cache leaves out: it
lives for one draw). The parse is a pure function of these, so the figures are drawn the same, pixel for
pixel (tests/test_figures_save.py). Where matplotlib has no such cache (another version), the block
changes nothing.
"""

from __future__ import annotations

import contextlib
import functools

__all__ = ["shared_mathtext", "shared_cache_info"]


class _Parse:
    """One parse request: the parser that asked (used to run the parse), hashed and compared by its key only."""

    __slots__ = ("parser", "key", "args", "kwargs")

    def __init__(self, parser, key, args, kwargs):
        self.parser, self.key, self.args, self.kwargs = parser, key, args, kwargs

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Parse) and self.key == other.key


@functools.lru_cache(maxsize=2048)
def _parsed(request: _Parse):
    return request.parser._parse_uncached(*request.args, **request.kwargs)


def shared_cache_info():
    """Hits, misses (parses run) and size of the process-wide cache (``functools`` ``cache_info``)."""
    return _parsed.cache_info()


def _rc_snapshot() -> tuple:
    import matplotlib

    return tuple(sorted((k, repr(v)) for k, v in matplotlib.rcParams.items()
                        if k.startswith(("mathtext.", "font.", "text."))))


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
        return _parsed(_Parse(self, (type(self), output, rc, args, tuple(sorted(kwargs.items()))), args, kwargs))

    MathTextParser._parse_uncached = compute
    MathTextParser._parse_cached = parse
    try:
        yield
    finally:
        MathTextParser._parse_cached = cached
        del MathTextParser._parse_uncached
