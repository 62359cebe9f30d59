"""Ctrl-C held back in the main thread, and raised at a point of the program's choosing.

Python turns SIGINT into a KeyboardInterrupt raised between any two bytecodes of the main thread:
inside a library's bookkeeping (a loop that takes several locks one by one, the start of a process
and its recording) it can leave that state half changed. ``held_interrupts`` makes SIGINT only set a
flag for the duration of a ``with`` block; ``raise_held_interrupt`` raises it where the state is
consistent, ``completed`` waits for futures and raises it within ``POLL`` seconds, and the end of
the outermost block raises it at the latest. Used by ``numerics.pool`` (see its module doc).
"""

from __future__ import annotations

import queue
import signal
import threading

__all__ = ["POLL", "completed", "held_interrupts", "raise_held_interrupt"]

POLL = 0.1  # seconds between two looks at a held-back Ctrl-C while results are awaited

_HELD = {"depth": 0, "pending": False, "previous": None}  # this process's held-back Ctrl-C


def _note_interrupt(signum, frame):
    _HELD["pending"] = True


def raise_held_interrupt() -> None:
    """Raise here the KeyboardInterrupt that ``held_interrupts`` held back, if a Ctrl-C came."""
    if _HELD["pending"]:
        _HELD["pending"] = False
        raise KeyboardInterrupt


class held_interrupts:
    """A ``with`` block in which Ctrl-C is held back; its KeyboardInterrupt is raised when the block ends.

    SIGINT then only sets a flag, which ``raise_held_interrupt`` (called by ``completed`` while
    it waits) turns into the KeyboardInterrupt at a point of its choosing. Nested blocks share the
    flag. Only in the main thread and when SIGINT has Python's default handler: an ignored SIGINT
    (a background job of a shell) stays ignored, and a handler of the caller's stays in place.
    """

    def __enter__(self):
        self._active = False
        if _HELD["depth"] == 0:
            if (threading.current_thread() is not threading.main_thread()
                    or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
                return self
            _HELD["pending"] = False
            _HELD["previous"] = signal.signal(signal.SIGINT, _note_interrupt)
        _HELD["depth"] += 1
        self._active = True
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._active:
            self._active = False
            _HELD["depth"] -= 1
            if _HELD["depth"] == 0:
                signal.signal(signal.SIGINT, _HELD["previous"])
            raise_held_interrupt()
        return False


def completed(futures):
    """Yield ``futures`` as they complete, like ``concurrent.futures.as_completed``, but wait in
    steps of ``POLL`` seconds and raise a Ctrl-C held back by ``held_interrupts`` between two.

    Each future puts itself into one queue when it completes (``add_done_callback``), so a step of
    the wait costs the same however many futures are pending (``concurrent.futures.wait`` installs
    and removes a waiter on every pending future at each step: in the command of ``slr reproduce``,
    ~65 items, ten steps a second)."""
    pending = list(futures)
    finished = queue.SimpleQueue()
    for future in pending:
        future.add_done_callback(finished.put)   # called at once if already done
    for _ in pending:
        while True:
            raise_held_interrupt()
            try:
                future = finished.get(timeout=POLL)
                break
            except queue.Empty:
                continue
        yield future
        raise_held_interrupt()
