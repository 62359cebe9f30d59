"""Progress a person sees: step-level bars forwarded from worker processes to one live display.

In a worker of ``numerics.pool.WorkerPool`` given a progress queue, ``bar(total=..., desc=...)``
returns a ``ForwardedBar``: tqdm's interface (``update``, ``set_description``, context
manager) that sends its state to the parent at most every ``_MIN_INTERVAL`` seconds and when it
closes. Elsewhere it returns a tqdm bar (shown only when stderr is a terminal).

In the parent, ``LiveDisplay(total, enabled=...)`` is the one display of a run: a tqdm bar of
items done out of ``total`` (with tqdm's rate and ETA, and the names of the running items),
and below it one line per worker with the step-level bar it forwarded last. Turned off when
the stream is not a terminal: nothing is drawn and no thread is started.
"""

from __future__ import annotations

import os
import queue as queue_module
import sys
import threading
import time

__all__ = ["ForwardedBar", "LiveDisplay", "attach_queue", "bar", "set_enabled", "task_started"]

_MIN_INTERVAL = 0.2  # seconds between two messages of one bar
_QUEUE = None        # set in a worker process by attach_queue
_IN_WORKER = False   # a pool worker never draws on the terminal itself
_ENABLED = True      # in this process: bars may be drawn (on a terminal); see set_enabled


def attach_queue(q) -> None:
    """In a worker process: send progress messages to ``q`` (None: drop them)."""
    global _QUEUE, _IN_WORKER
    _QUEUE, _IN_WORKER = q, True


def set_enabled(flag: bool) -> bool:
    """Allow (True) or forbid (False) bars drawn by this process; returns the previous setting."""
    global _ENABLED
    previous, _ENABLED = _ENABLED, bool(flag)
    return previous


def _send(kind: str, *payload) -> None:
    if _QUEUE is not None:
        _QUEUE.put((os.getpid(), kind) + payload)


def task_started(label: str) -> None:
    """In a worker process: tell the display which item this worker now runs."""
    _send("task", label)


class ForwardedBar:
    """A tqdm-like bar whose state goes to the parent's ``LiveDisplay``."""

    def __init__(self, iterable=None, *, total=None, desc: str = "", **_ignored):
        self.iterable, self.total, self.desc, self.n = iterable, total, desc or "", 0
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            self.total = len(iterable)
        self._last = 0.0
        self._post(force=True)

    def _post(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= _MIN_INTERVAL:
            self._last = now
            _send("bar", self.desc, self.n, self.total)

    def update(self, n=1) -> None:
        self.n += n
        self._post()

    def set_description(self, desc: str = "", refresh: bool = True) -> None:
        self.desc = desc or ""
        self._post(force=True)

    def set_postfix(self, *args, **kwargs) -> None:
        pass

    def refresh(self) -> None:
        self._post(force=True)

    def close(self) -> None:
        self._post(force=True)

    def __iter__(self):
        for x in self.iterable:
            yield x
            self.update()
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def bar(iterable=None, *, disable: bool | None = None, **kwargs):
    """A progress bar: forwarded to the parent in a pool worker, else tqdm on a terminal.

    disable: True for a silent bar; None (default) shows it where it can be seen: forwarded from
    a worker, drawn in this process when stderr is a terminal and ``set_enabled`` allows it."""
    if _IN_WORKER and not disable:
        return ForwardedBar(iterable, **kwargs)
    from tqdm.auto import tqdm

    if disable is None:
        disable = not (_ENABLED and sys.stderr.isatty())
    kwargs.setdefault("leave", False)
    return tqdm(iterable, disable=disable, **kwargs)


class LiveDisplay:
    """The run's display: items done / total with ETA, and one line per worker (see module doc).

    Use as a context manager; ``queue`` is the queue to give the pool (None when disabled),
    ``item_done()`` is called in this process as each item finishes.
    """

    def __init__(self, total: int, *, enabled: bool | None = None, stream=None, desc: str = "items",
                 context=None):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = self.stream.isatty() if enabled is None else bool(enabled)
        self.total, self.desc, self._context = total, desc, context
        self.queue, self._main, self._lines, self._running = None, None, {}, {}
        self._thread, self._lock = None, threading.Lock()

    def __enter__(self):
        if not self.enabled:
            return self
        from tqdm.auto import tqdm

        self._tqdm = tqdm
        self._main = tqdm(total=self.total, desc=self.desc, unit="item", file=self.stream,
                          dynamic_ncols=True, position=0)
        if self._context is not None:
            self.queue = self._context.Queue()
            self._thread = threading.Thread(target=self._drain, name="progress-display", daemon=True)
            self._thread.start()
        return self

    def _line(self, pid):
        if pid not in self._lines:
            self._lines[pid] = self._tqdm(total=None, desc="", file=self.stream, dynamic_ncols=True,
                                          position=len(self._lines) + 1, leave=False)
        return self._lines[pid]

    def handle(self, message) -> None:
        """Show one message ``(pid, kind, ...)`` of a worker."""
        pid, kind, *payload = message
        with self._lock:
            line = self._line(pid)
            if kind == "task":
                self._running[pid] = payload[0]
                line.reset(total=None)
                line.set_description_str(payload[0], refresh=False)
                self._main.set_postfix_str("running: " + ", ".join(sorted(self._running.values())))
            elif kind == "bar":
                desc, n, total = payload
                if line.total != total:
                    line.reset(total=total)
                line.set_description_str(f"{self._running.get(pid, '')}: {desc}".strip(": "), refresh=False)
                line.n = n
            line.refresh()

    def _drain(self) -> None:
        while True:
            try:
                message = self.queue.get(timeout=0.1)
            except queue_module.Empty:
                continue
            except (EOFError, OSError, ValueError):  # queue closed
                return
            if message is None:
                return
            self.handle(message)

    def write(self, text: str) -> None:
        """Print a line to stdout above the bars."""
        with self._lock:
            self._tqdm.write(text, file=sys.stdout)

    def item_done(self, label: str = "") -> None:
        if self._main is not None:
            with self._lock:
                self._running = {p: t for p, t in self._running.items() if t != label}
                self._main.set_postfix_str("running: " + ", ".join(sorted(self._running.values())),
                                           refresh=False)
                self._main.update(1)

    def __exit__(self, *exc):
        if self._thread is not None:
            self.queue.put(None)
            self._thread.join(timeout=2.0)
        with self._lock:
            for line in self._lines.values():
                line.close()
            if self._main is not None:
                self._main.close()
        return False
