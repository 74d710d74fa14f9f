"""``RunFrames``: a run's data as one typed object, one attribute per frame (``frames.scores``, ``frames.rubric``, …).

A run (one folder, a sweep, a study, the forks of a conversation) leaves ten tidy frames: the nine contracts of
``FRAME_SCHEMAS`` and the LLM ``calls``. Library code reads them as attributes, so a typo is a type error and an
``AttributeError`` naming the object, never a ``KeyError`` deep inside a view. Code that loops over the frames
(saving them, filtering every frame by conversation) uses ``items()``; ``frame(name)`` reads one by a name held in
a variable and names the valid ones when it is wrong.

pandas is imported only when frames are built (``from_payloads``, ``from_rows``, ``empty``, ``merge``): this module
is imported before a run's first conversation, which must not load pandas (``tests/test_startup.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convoeval.errors import ConvoevalError
from convoeval.frames.schemas import FRAME_SCHEMAS

if TYPE_CHECKING:
    import pandas as pd

#: Every frame of a run, in the order results are saved and reports use them: the contracts, then ``calls``.
FRAME_NAMES: tuple[str, ...] = (*FRAME_SCHEMAS, "calls")


class UnknownFrameError(ConvoevalError, KeyError):
    """A frame name that a run does not have (a ``KeyError``, so ``except KeyError`` callers still catch it)."""

    def __str__(self) -> str:  # KeyError's own str() would quote the whole message
        return str(self.args[0])


def _unknown(names: Collection[str], where: str) -> UnknownFrameError:
    return UnknownFrameError(f"{where}: unknown frame name(s) {sorted(names)}; a run's frames are {list(FRAME_NAMES)}")


@dataclass(frozen=True, eq=False)
class RunFrames:
    """The tidy frames of a run, one attribute per frame, each typed by its contract (``FRAME_SCHEMAS``).

    Frozen: a frame is replaced with ``replace(scores=...)``, which returns a new ``RunFrames``. ``eq=False``:
    DataFrames have no single truth value, so two ``RunFrames`` compare by identity.

    Attributes:
        runs: one row per conversation (attempt): how it ended (``RUN_SCHEMA``).
        scores: one row per conversation: the composite score beside its components (``SCORE_SCHEMA``).
        transcripts: one row per message (``TRANSCRIPT_SCHEMA``).
        rubric: one row per conversation × criterion × judge sample (``RUBRIC_SCHEMA``).
        holistic: one row per conversation × judge sample (``HOLISTIC_SCHEMA``).
        turns: one row per scripted turn × judge sample (``TURN_SCHEMA``).
        assertions: one row per database or path assertion (``ASSERTION_SCHEMA``).
        leaks: one row per leak a red-team case found (``LEAK_SCHEMA``; empty in an ordinary run).
        attacks: one row per red-team case: its verdict (``ATTACK_SCHEMA``; empty in an ordinary run).
        calls: one row per LLM call (``convoeval.llm.accounting.CALL_COLUMNS``).

    Example:
        >>> frames = RunFrames.empty()
        >>> len(frames.scores), list(frames.scores.columns)[:3]
        (0, ['run_id', 'scenario', 'agent'])
        >>> [name for name, frame in frames.items()][:3]
        ['runs', 'scores', 'transcripts']
    """

    runs: pd.DataFrame
    scores: pd.DataFrame
    transcripts: pd.DataFrame
    rubric: pd.DataFrame
    holistic: pd.DataFrame
    turns: pd.DataFrame
    assertions: pd.DataFrame
    leaks: pd.DataFrame
    attacks: pd.DataFrame
    calls: pd.DataFrame

    # -- building -------------------------------------------------------------------------------------------------

    @classmethod
    def from_rows(cls, rows: Mapping[str, Iterable[Mapping[str, Any]]], *, call_columns: Sequence[str] = ()
                  ) -> RunFrames:
        """Typed frames from plain rows by frame name; a name missing from ``rows`` gives a typed empty frame.

        Args:
            rows: frame name -> its rows as mappings (a conversation's ``payload()`` holds exactly these).
            call_columns: the columns of an empty ``calls`` frame (``CALL_COLUMNS``; the frames package sits below
                the LLM layer, so the caller that knows them passes them).

        Raises:
            UnknownFrameError: a name that is not one of a run's frames.
            ValueError: a row carries a column its contract does not declare.
        """
        import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)

        from convoeval.frames.typed import typed_frame  # noqa: PLC0415 - imports pandas: only when frames are built

        unknown = set(rows) - set(FRAME_NAMES)
        if unknown:
            raise _unknown(unknown, "RunFrames.from_rows")
        built = {name: typed_frame(rows.get(name) or [], schema) for name, schema in FRAME_SCHEMAS.items()}
        calls = list(rows.get("calls") or [])
        built["calls"] = pd.DataFrame(calls) if calls else pd.DataFrame(columns=list(call_columns))
        return cls(**built)

    @classmethod
    def from_payloads(cls, payloads: Iterable[Mapping[str, Any]], *, call_columns: Sequence[str] = ()) -> RunFrames:
        """Typed frames from conversation payloads (``ConversationResult.payload()``, ``runs/*.json``), each once.

        A payload's keys that are not frame names are ignored (a payload may carry more than rows).
        """
        rows: dict[str, list[Mapping[str, Any]]] = {name: [] for name in FRAME_NAMES}
        for payload in payloads:
            for name, kept in rows.items():
                kept.extend(payload.get(name) or [])
        return cls.from_rows(rows, call_columns=call_columns)

    @classmethod
    def empty(cls, *, call_columns: Sequence[str] = ()) -> RunFrames:
        """A run with no conversation: every frame with its contract's columns and dtypes and no row."""
        return cls.from_rows({}, call_columns=call_columns)

    @classmethod
    def from_frames(cls, frames: Mapping[str, pd.DataFrame], *, call_columns: Sequence[str] = ()) -> RunFrames:
        """``RunFrames`` from frames by name (a notebook's dict, a test's few frames); missing names are empty.

        The frames are kept as given (not re-typed): pass frames built with ``typed_frame`` or read from a run.

        Raises:
            UnknownFrameError: a name that is not one of a run's frames (a typo would otherwise vanish).
        """
        unknown = set(frames) - set(FRAME_NAMES)
        if unknown:
            raise _unknown(unknown, "RunFrames.from_frames")
        empty = cls.empty(call_columns=call_columns)
        return empty.replace(**dict(frames))

    @classmethod
    def merge(cls, parts: Iterable[RunFrames], *, call_columns: Sequence[str] = ()) -> RunFrames:
        """Several runs' frames as one (a sweep, a study over folders), frame by frame, indexes renumbered.

        An empty frame of a part is skipped; a frame no part has rows for comes back typed and empty.
        """
        import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)

        parts = list(parts)
        empty = cls.empty(call_columns=call_columns)
        merged = {}
        for name, blank in empty.items():
            pieces = [part.frame(name) for part in parts if len(part.frame(name))]
            merged[name] = pd.concat(pieces, ignore_index=True) if pieces else blank
        return cls(**merged)

    # -- reading --------------------------------------------------------------------------------------------------

    def frame(self, name: str) -> pd.DataFrame:
        """One frame by a name held in a variable (library code writes ``frames.scores``).

        Raises:
            UnknownFrameError: ``name`` is not one of ``FRAME_NAMES``; the message lists them.
        """
        if name not in FRAME_NAMES:
            raise _unknown({name}, "RunFrames.frame")
        frame: pd.DataFrame = getattr(self, name)
        return frame

    def items(self) -> Iterator[tuple[str, pd.DataFrame]]:
        """``(name, frame)`` for every frame, in ``FRAME_NAMES`` order (to save them, or loop over them)."""
        for name in FRAME_NAMES:
            yield name, getattr(self, name)

    def as_dict(self) -> dict[str, pd.DataFrame]:
        """The frames in a new dict by name (for code that wants one; the frames themselves are not copied)."""
        return dict(self.items())

    # -- deriving -------------------------------------------------------------------------------------------------

    def replace(self, **frames: pd.DataFrame) -> RunFrames:
        """A new ``RunFrames`` with some frames replaced by name.

        Raises:
            UnknownFrameError: a name that is not one of a run's frames.
        """
        unknown = set(frames) - set(FRAME_NAMES)
        if unknown:
            raise _unknown(unknown, "RunFrames.replace")
        return dataclasses.replace(self, **frames)

    def map(self, fn: Callable[[str, pd.DataFrame], pd.DataFrame]) -> RunFrames:
        """A new ``RunFrames`` with ``fn(name, frame)`` applied to every frame."""
        return RunFrames(**{name: fn(name, frame) for name, frame in self.items()})

    def without(self, run_ids: Collection[str]) -> RunFrames:
        """The same frames without these conversations' rows (every frame with a ``run_id``; ``calls`` kept whole).

        Indexes are renumbered, so positional code reads the kept rows as it read the whole run.
        """
        drop = {str(r) for r in run_ids}
        if not drop:
            return self
        return self.map(lambda _, f: f[~f["run_id"].astype(str).isin(drop)].reset_index(drop=True)
                        if "run_id" in f.columns else f)

    def only(self, run_ids: Collection[str]) -> RunFrames:
        """The same frames with these conversations' rows only (every frame with a ``run_id``; ``calls`` kept whole)."""
        keep = {str(r) for r in run_ids}
        return self.map(lambda _, f: f[f["run_id"].astype(str).isin(keep)].reset_index(drop=True)
                        if "run_id" in f.columns else f)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}={len(frame)}" for name, frame in self.items())
        return f"RunFrames({sizes})"
