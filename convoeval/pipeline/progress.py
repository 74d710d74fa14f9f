"""Progress of a run, where its user looks: a bar in a terminal, a few plain lines in a notebook.

A run on the local model takes minutes; a silent terminal reads as a hang. In a terminal the bar shows the
conversations done, the ETA and which conversation is at which turn. In a notebook executed by papermill the
same news goes out as short lines on standard output (``papermill --log-output`` prints them in the terminal):
one per finished conversation and, between them, at most one every ``every_s`` seconds naming the turns in
flight, so the executed notebook keeps a readable log rather than thousands of bar updates.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Literal, TextIO

__all__ = ["Progress"]

Mode = Literal["bar", "lines", "off"]


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}m{seconds:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


class Progress:
    """Counts finished conversations and reports them with an ETA.

    Args:
        total: conversations to run now.
        skipped: conversations already saved (resumed), reported once at the start.
        mode: ``"bar"`` (tqdm, terminals), ``"lines"`` (notebooks, logs) or ``"off"``.
        stream: where lines go (default standard output; the bar writes to standard error).
        every_s: the least time between two "in flight" lines.
    """

    def __init__(self, total: int, *, skipped: int = 0, mode: Mode = "bar", stream: TextIO | None = None,
                 every_s: float = 20.0) -> None:
        self.total, self.mode, self.every_s = total, mode, every_s
        self.stream = stream or sys.stdout
        self.done = 0
        self.started = time.monotonic()
        self._last_line = self.started
        self._turns: dict[str, int] = {}
        self._lock = threading.Lock()  # distributed runs report from the client's threads
        self._bar: Any = None
        if mode == "bar" and total:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc="conversations", unit="conv", dynamic_ncols=True)
        if mode == "lines" and (total or skipped):
            resumed = f" ({skipped} already saved, kept)" if skipped else ""
            self._print(f"running {total} conversation(s){resumed}")

    def turn(self, label: str, turn: int) -> None:
        """A conversation started turn ``turn``."""
        if self.mode == "off":
            return
        with self._lock:
            self._turns[label] = turn
            if self._bar is not None:
                self._bar.set_postfix_str(self._in_flight(2), refresh=False)
                self._bar.refresh()
            elif time.monotonic() - self._last_line >= self.every_s:
                self._print(f"  … {self._eta_text()} · in flight: {self._in_flight(4)}")

    def finished(self, label: str, status: str, score: Any = None) -> None:
        """A conversation ended with ``status`` (and ``score``, missing for errors)."""
        with self._lock:
            self._turns.pop(label, None)
            self.done += 1
            if self._bar is not None:
                self._bar.update(1)
                self._bar.set_postfix_str(f"{label}: {status}", refresh=False)
            elif self.mode == "lines":
                shown = "" if score is None or score != score else f" {score:.1f}"
                self._print(f"[{self.done}/{self.total}] {label}: {status}{shown} · {self._eta_text()}")

    def close(self) -> None:
        """End the bar, or print the total time."""
        if self._bar is not None:
            self._bar.close()
        elif self.mode == "lines" and self.total:
            self._print(f"{self.done} conversation(s) in {_duration(time.monotonic() - self.started)}")

    def _in_flight(self, most: int) -> str:
        items = list(self._turns.items())
        shown = ", ".join(f"{label} turn {turn}" for label, turn in items[:most])
        return shown + (f" (+{len(items) - most} more)" if len(items) > most else "")

    def _eta_text(self) -> str:
        elapsed = time.monotonic() - self.started
        if not self.done:
            return f"{_duration(elapsed)} elapsed"
        left = elapsed / self.done * (self.total - self.done)
        return f"{_duration(elapsed)} elapsed, ETA {_duration(left)}" if self.done < self.total else \
            f"{_duration(elapsed)} elapsed"

    def _print(self, line: str) -> None:
        self._last_line = time.monotonic()
        print(line, file=self.stream, flush=True)
