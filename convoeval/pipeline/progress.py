"""Progress of a run, where its user looks: a bar in a terminal, a few plain lines in a notebook.

A run on the local model takes minutes; a silent terminal reads as a hang. In a terminal the bar shows the
conversations done, the ETA and what each conversation in flight is doing (which turn, or judging). In a notebook
executed by papermill the same news goes out as short lines on standard output (``convoeval notebook`` and
``papermill --log-output`` print them in the terminal): one per finished conversation and, whatever is running
(turns, the database checks, the judges), a heartbeat every ``every_s`` seconds naming what is in flight, so the
executed notebook keeps a readable log rather than thousands of bar updates. The ETA counts the judging: given the
run's jobs it comes from the LLM calls each conversation has left and the time calls take (``pace.CallPace``), not
only from the conversations finished.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

from convoeval.llm.accounting import add_sink, remove_sink
from convoeval.pipeline.pace import CallPace

if TYPE_CHECKING:
    from convoeval.pipeline.jobs import Job

__all__ = ["JUDGING", "Progress", "Reporter", "StageProgress", "as_mode"]

Mode = Literal["bar", "lines", "off"]

#: The "turn" a conversation reports (``RunOptions.on_turn``) once it has stopped talking and its judges start.
JUDGING = 0


class Reporter(Protocol):
    """What a batch reports its conversations to: a ``Progress``, or a view of one that several batches share (the
    fault study names each conversation with its fault)."""

    def turn(self, label: str, turn: int) -> None:
        """Conversation ``label`` started turn ``turn`` (from 1), or its judging (``JUDGING``)."""

    def finished(self, label: str, status: str, score: Any = None) -> None: ...


def as_mode(progress: Mode | bool, *, on: Mode = "bar") -> Mode:
    """A ``progress`` argument as a mode: ``True`` is ``on``, ``False`` is ``"off"``, a mode stays itself."""
    if progress is True:
        return on
    return "off" if progress is False else progress


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes}m{seconds:02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


class Progress:
    """Counts finished conversations and reports them with an ETA, and a heartbeat while any is in flight.

    Args:
        total: conversations to run now.
        skipped: conversations already saved (resumed), reported once at the start.
        mode: ``"bar"`` (tqdm, terminals), ``"lines"`` (notebooks, logs) or ``"off"``.
        stream: where lines go (default standard output; the bar writes to standard error).
        every_s: the most time without a line (lines), or between two refreshes of the bar, while the run goes on.
        jobs: the conversations to run now; given, the ETA counts the LLM calls they have left, judging included
            (``pace.CallPace``); else it comes from the conversations finished.
        judge_samples: samples per judge call, for the calls left.
        clock: monotonic seconds (a test passes its own).
    """

    def __init__(self, total: int, *, skipped: int = 0, mode: Mode = "bar", stream: TextIO | None = None,
                 every_s: float = 20.0, jobs: Sequence[Job] | None = None, judge_samples: int = 1,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.mode, self.every_s = total, mode, every_s
        self.stream = stream or sys.stdout
        self.done = 0
        self._clock = clock
        self.started = clock()
        self._last_line = self.started
        self._turns: dict[str, int] = {}
        self._lock = threading.RLock()  # distributed runs report from the client's threads; the heartbeat its own
        self._stop = threading.Event()
        self._bar: Any = None
        self._pace: CallPace | None = None
        if mode == "lines" and (total or skipped):
            resumed = f" ({skipped} already saved, kept)" if skipped else ""
            self._print(f"running {total} conversation(s){resumed}")
        if mode == "off" or not total:
            return
        if jobs is not None:
            self._pace = CallPace(jobs, judge_samples=judge_samples, clock=clock)
            add_sink(self._pace.record)
        if mode == "bar":
            from tqdm.auto import tqdm  # noqa: PLC0415 - start-up budget (tests/test_startup.py)

            # tqdm's own remaining time counts conversations only: the ETA shown is ours, in the postfix.
            self._bar = tqdm(total=total, desc="conversations", unit="conv", dynamic_ncols=True,
                             bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")
        threading.Thread(target=self._heartbeat, name="convoeval-progress", daemon=True).start()

    def turn(self, label: str, turn: int) -> None:
        """Conversation ``label`` started turn ``turn`` (from 1), or its judging (``JUDGING``)."""
        if self.mode == "off":
            return
        with self._lock:
            self._turns[label] = turn
            if self._bar is not None:
                self._refresh_bar()

    def finished(self, label: str, status: str, score: Any = None) -> None:
        """A conversation ended with ``status`` (and ``score``, missing for errors)."""
        with self._lock:
            self._turns.pop(label, None)
            self.done += 1
            if self._pace is not None:
                self._pace.finished(label)
            if self._bar is not None:
                self._bar.update(1)
                self._refresh_bar()
            elif self.mode == "lines":
                shown = "" if score is None or score != score else f" {score:.1f}"
                self._print(f"[{self.done}/{self.total}] {label}: {status}{shown} · {self.eta_text()}")

    def close(self) -> None:
        """Stop the heartbeat; end the bar, or print the total time."""
        self._stop.set()
        if self._pace is not None:
            remove_sink(self._pace.record)
        with self._lock:
            if self._bar is not None:
                self._bar.close()
            elif self.mode == "lines" and self.total:
                self._print(f"{self.done} conversation(s) in {_duration(self._clock() - self.started)}")

    def eta_text(self) -> str:
        """The time elapsed and the ETA, e.g. ``3m12s elapsed, ETA 5m40s``."""
        shown = f"{_duration(self._clock() - self.started)} elapsed"
        eta = self._eta()
        return f"{shown}, {eta}" if eta else shown

    def _eta(self) -> str:
        if self.done >= self.total:
            return ""
        estimate = self._pace.eta() if self._pace is not None else None
        if estimate is not None:
            left, lower_bound = estimate
            if left <= 0:
                return "ETA passed (the calls are slower than so far)"
            return f"ETA {_duration(left)}" + (" or more (no judge call timed yet)" if lower_bound else "")
        if self.done:  # no call timed here (all cached, or made on Dask workers): the conversations' pace
            elapsed = self._clock() - self.started
            return f"ETA {_duration(elapsed / self.done * (self.total - self.done))}"
        return ""

    def _heartbeat(self) -> None:
        # A line (or a refreshed bar) whatever is running: a judge call on the local model can take minutes, and no
        # turn starts and no conversation ends meanwhile (issue #39).
        while not self._stop.wait(self.every_s / 4):
            with self._lock:
                if self._stop.is_set():
                    return
                if self._bar is not None:
                    self._refresh_bar()
                elif self._clock() - self._last_line >= self.every_s:
                    flight = self._in_flight(4)
                    self._print(f"  … {self.eta_text()} · {self.done}/{self.total} done"
                                + (f" · in flight: {flight}" if flight else ""))

    def _refresh_bar(self) -> None:
        shown = "; ".join(part for part in (self._eta(), self._in_flight(2)) if part)
        self._bar.set_postfix_str(shown, refresh=False)
        self._bar.refresh()

    def _in_flight(self, most: int) -> str:
        items = list(self._turns.items())
        shown = ", ".join(f"{label} judging" if turn == JUDGING else f"{label} turn {turn}"
                          for label, turn in items[:most])
        return shown + (f" (+{len(items) - most} more)" if len(items) > most else "")

    def _print(self, line: str) -> None:
        self._last_line = self._clock()
        print(line, file=self.stream, flush=True)


class StageProgress:
    """Progress of a job made of steps of LLM calls (the agreement study's judging and probes), as plain lines.

    Each step prints a line when it starts and one when it ends; while it runs, one line every ``every_s`` seconds
    counts its LLM calls (every call ``convoeval.llm`` accounts, cache hits included) with an ETA from the expected
    number and the pace of the calls the model answered. Lines go to standard output, so ``convoeval notebook``
    shows them in the terminal as it does a run's.

    Args:
        steps: How many steps the job has (for ``[k/steps]``).
        mode: ``"lines"``, ``"bar"`` (lines too: a step has no natural bar) or ``"off"``.
        stream: Where lines go (default standard output).
        every_s: Seconds between two lines within a step (0: a line per call, no timer).

    Example:
        >>> stages = StageProgress(2, mode="off")
        >>> with stages.step("judging 3 conversations with 'greedy'", calls=6):
        ...     pass
    """

    def __init__(self, steps: int, *, mode: Mode = "lines", stream: TextIO | None = None,
                 every_s: float = 20.0) -> None:
        self.steps, self.mode, self.every_s = steps, mode, every_s
        self.stream = stream or sys.stdout
        self.started = time.monotonic()
        self._k = 0
        self._lock = threading.Lock()

    def step(self, what: str, *, calls: int | None = None, count: bool = True) -> _Step:
        """A context manager around one step.

        Args:
            what: What the step does, for its first line.
            calls: How many LLM calls it is expected to make, if known (for the ETA).
            count: Count its LLM calls; ``False`` for a step that reports its own progress (conversations).
        """
        self._k += 1
        return _Step(self, f"[{self._k}/{self.steps}] {what}", calls, count)

    def print(self, line: str) -> None:
        """One line (nothing when ``mode`` is ``"off"``)."""
        if self.mode != "off":
            with self._lock:
                print(line, file=self.stream, flush=True)

    def close(self) -> None:
        """The job's total time."""
        self.print(f"done in {_duration(time.monotonic() - self.started)}")


class _Step:
    """One step of a ``StageProgress``: counts the LLM calls made while it runs."""

    def __init__(self, owner: StageProgress, title: str, calls: int | None, count: bool) -> None:
        self.owner, self.title, self.expected, self.count = owner, title, calls, count
        self.done = self.cached = 0
        self.started = self._last = time.monotonic()
        self._stop = threading.Event()

    def __enter__(self) -> _Step:

        expected = f" (~{self.expected} LLM call{'s' if self.expected != 1 else ''})" if self.expected else ""
        self.owner.print(f"{self.title}{expected}")
        self.started = self._last = time.monotonic()
        if self.owner.mode != "off" and self.count:
            add_sink(self._count)
            if self.owner.every_s > 0:  # (at 0 every call prints already)
                # One slow call (a long translation) must not leave the terminal silent for minutes.
                threading.Thread(target=self._heartbeat, name="convoeval-progress", daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:

        remove_sink(self._count)
        self._stop.set()
        ended = "stopped" if exc[0] is not None else "done"
        counted = f"{self._calls_text()} " if self.count else ""
        self.owner.print(f"  {ended}: {counted}in {_duration(time.monotonic() - self.started)}")

    def _count(self, record: Any) -> None:
        # Called from the event loop's thread for every accounted call, while the step runs.
        self.done += 1
        self.cached += bool(getattr(record, "cache_hit", False))
        self._report_if_due()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.owner.every_s / 4):
            self._report_if_due()

    def _report_if_due(self) -> None:
        now = time.monotonic()
        if now - self._last >= self.owner.every_s and not self._stop.is_set():
            self._last = now
            self.owner.print(f"  … {self._calls_text()} · {self._eta_text(now)}")

    def _calls_text(self) -> str:
        of = f"/{self.expected}" if self.expected else ""
        cached = f" ({self.cached} from the cache)" if self.cached else ""
        return f"{self.done}{of} LLM call(s){cached}"

    def _eta_text(self, now: float) -> str:
        # Cache hits take no time: the pace is that of the calls the model answered.
        elapsed, answered = now - self.started, self.done - self.cached
        if not self.expected or not answered or self.done >= self.expected:
            return f"{_duration(elapsed)} elapsed"
        return f"{_duration(elapsed)} elapsed, ETA {_duration(elapsed / answered * (self.expected - self.done))}"
