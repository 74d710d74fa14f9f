"""The persistent LLM response cache: a SQLite file that makes re-running a finished notebook an exact replay.

The key is the sha256 of a canonical JSON of everything that decides a reply: provider, model, endpoint (never a
key), every generation parameter, the messages, the output schema, and the ``SampleIdentity`` (scenario, seed,
trial, role, turn, sample). The identity is what keeps trial 2 a fresh sample rather than a replay of trial 1.
Ids minted fresh for every run (uuid4 hex and dashed UUIDs: run ids, payment-link tokens) are masked in the
messages, so a re-run of a finished run replays even after its agent quoted such an id.

Modes (``CONVOEVAL_CACHE`` or the ``cache=`` argument of ``acall_model``):
    ``rw``      read-write, the default: hits are replayed, misses are called and stored;
    ``replay``  replay-only, for CI and nbval: a miss raises ``CacheMissError`` naming the call;
    ``off``     no reads, no writes.

Path: ``CONVOEVAL_CACHE_PATH`` or ``<state_dir>/cache.sqlite``. Several processes may write at once (WAL journal,
busy timeout, ``INSERT OR IGNORE``: the first writer of a key wins and later ones are no-ops).

Writes are group commits (``aput``): the replies that arrive in one turn of the event loop are committed in one
transaction, and each call gets its reply back only once that transaction is committed. A process killed at any
moment has therefore lost at most the calls in flight (asked, not yet handed back), as with a commit per call,
while a sweep with hundreds of calls in flight pays one commit per batch instead of one per call.

What is stored: the reply text, the validated JSON of a structured reply, token usage, finish reason, and for
inspection the provider, model, endpoint and identity. Never API keys or request headers: they are not inputs of
the key and not part of the response.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from convoeval._util.paths import state_dir
from convoeval.llm.types import CacheMissError, ModelInfo, SampleIdentity

__all__ = ["MODES", "ResponseCache", "cache_key", "default_cache", "resolve_cache", "use_cache"]

MODES = ("rw", "replay", "off")
_ALIASES = {
    "rw": "rw", "read-write": "rw", "readwrite": "rw", "on": "rw", "1": "rw", "true": "rw",
    "replay": "replay", "replay-only": "replay", "ro": "replay", "read-only": "replay",
    "off": "off", "0": "off", "false": "off", "none": "off",
}  # fmt: skip
_KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    base_url TEXT,
    role TEXT,
    scenario TEXT,
    seed INTEGER,
    trial INTEGER,
    turn INTEGER,
    schema_name TEXT,
    response TEXT NOT NULL
)
"""


_INSERT = (
    "INSERT OR IGNORE INTO responses (key, created_at, provider, model, base_url, role, scenario, seed, trial, turn,"
    " schema_name, response) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _row(key: str, response: dict[str, Any], info: ModelInfo, identity: SampleIdentity,
         schema_name: str | None) -> tuple[Any, ...]:
    """The ``responses`` row of one reply (``_INSERT``'s columns, in order)."""
    return (
        key, time.time(), info.provider, info.model, _stable_base_url(info), identity.role, identity.scenario,
        identity.seed, identity.trial, identity.turn, schema_name, json.dumps(response, ensure_ascii=False),
    )  # fmt: skip


def normalize_mode(mode: str) -> str:
    """``rw`` / ``replay`` / ``off`` from any accepted spelling; raises ``ValueError`` otherwise."""
    try:
        return _ALIASES[str(mode).strip().lower()]
    except KeyError:
        raise ValueError(f"unknown cache mode {mode!r}; expected one of {MODES}") from None


class ResponseCache:
    """One SQLite cache file, opened lazily and shared by every call in the process.

    Args:
        path: The SQLite file; default ``CONVOEVAL_CACHE_PATH`` or ``<state_dir>/cache.sqlite``.
        mode: ``rw``, ``replay`` or ``off``; default ``CONVOEVAL_CACHE`` or ``rw``.

    Example:
        >>> import tempfile
        >>> from convoeval.llm import call_model
        >>> from convoeval.testing import FakeChatModel
        >>> cache = ResponseCache(Path(tempfile.mkdtemp()) / "cache.sqlite", mode="rw")
        >>> identity = SampleIdentity(scenario="billing-happy", seed=42, trial=1, role="simulator", turn=1)
        >>> call_model(FakeChatModel(replies=["Olá!"]), [("user", "Oi")], identity=identity, cache=cache).cache_hit
        False
        >>> again = call_model(FakeChatModel(replies=[]), [("user", "Oi")], identity=identity, cache=cache)
        >>> again.text, again.cache_hit   # the same call again: answered from the file, the model is not asked
        ('Olá!', True)
    """

    def __init__(self, path: str | Path | None = None, mode: str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.mode = normalize_mode(mode or os.environ.get("CONVOEVAL_CACHE") or "rw")
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        # Rows waiting for their group commit, per event loop (a notebook's loop, convoeval's background loop and
        # Dask worker threads' loops may share one cache), with the future their callers await.
        self._batches: dict[asyncio.AbstractEventLoop, tuple[list[tuple[Any, ...]], asyncio.Future[None]]] = {}

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, mode={self.mode!r})"

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One connection guarded by a lock: calls come from one event loop, sometimes from worker threads.
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute(_SCHEMA)
            self._conn = conn
        return self._conn

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key``, or ``None``."""
        if not self.enabled:
            return None
        with self._lock:
            row = self._connection().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, response: dict[str, Any], info: ModelInfo, identity: SampleIdentity,
            schema_name: str | None = None) -> None:
        """Store ``response`` under ``key`` now, in a transaction of its own (first writer wins).

        Code on an event loop uses ``aput``, which shares the commit with the other replies of the same moment.
        """
        if self.mode != "rw":
            return
        self._write([_row(key, response, info, identity, schema_name)])

    async def aput(self, key: str, response: dict[str, Any], info: ModelInfo, identity: SampleIdentity,
                   schema_name: str | None = None) -> None:
        """Store ``response`` under ``key`` (first writer wins); returns once it is committed.

        Every ``aput`` of one turn of the event loop joins one transaction, committed by a callback that runs after
        the callbacks already queued (the other replies that arrived with this one). The caller waits for that
        commit, so a reply is never handed on before it is durable; a failed commit raises in every caller.
        """
        if self.mode != "rw":
            return
        loop = asyncio.get_running_loop()
        batch = self._batches.get(loop)
        if batch is None:
            batch = self._batches[loop] = ([], loop.create_future())
            loop.call_soon(self._commit_batch, loop)
        batch[0].append(_row(key, response, info, identity, schema_name))
        await asyncio.shield(batch[1])  # a cancelled caller must not cancel the others' commit

    def _commit_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        rows, done = self._batches.pop(loop)
        try:
            self._write(rows)
        except Exception as exc:  # noqa: BLE001 - handed to every caller of the batch, as put() would raise it
            done.set_exception(exc)
            done.exception()  # marked retrieved: a batch whose callers were all cancelled must not log an error
        else:
            done.set_result(None)

    def _write(self, rows: list[tuple[Any, ...]]) -> None:
        """``rows`` in one transaction: one WAL commit whatever their number."""
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(_INSERT, rows)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def miss(self, info: ModelInfo, identity: SampleIdentity) -> CacheMissError:
        """The error for a miss in replay mode: which call, and how to record it."""
        return CacheMissError(
            f"replay-only cache has no recorded response for this {identity.role} call "
            f"(scenario={identity.scenario!r}, seed={identity.seed}, trial={identity.trial}, turn={identity.turn}, "
            f"sample={identity.sample}, model={info.provider}/{info.model}) in {self.path}; "
            "to re-record, run once with CONVOEVAL_CACHE=rw"
        )

    def __len__(self) -> int:
        with self._lock:
            count: int = self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            return count

    def clear(self) -> None:
        """Delete every stored response."""
        with self._lock:
            self._connection().execute("DELETE FROM responses")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def default_cache_path() -> Path:
    """``CONVOEVAL_CACHE_PATH`` or ``<state_dir>/cache.sqlite``."""
    override = os.environ.get("CONVOEVAL_CACHE_PATH")
    return Path(override).expanduser() if override else state_dir() / "cache.sqlite"


_DEFAULTS: dict[tuple[str, str], ResponseCache] = {}
_CURRENT: contextvars.ContextVar[ResponseCache | None] = contextvars.ContextVar("convoeval_cache", default=None)


_BY_ENVIRONMENT: dict[tuple[str | None, ...], ResponseCache] = {}
#: What the default cache's path and mode are made from (``default_cache_path``, ``paths.state_dir``).
_CACHE_ENV = ("CONVOEVAL_CACHE_PATH", "CONVOEVAL_HOME", "XDG_STATE_HOME", "HOME", "CONVOEVAL_CACHE")


def default_cache() -> ResponseCache:
    """The process-wide cache for the current ``CONVOEVAL_CACHE_PATH`` and ``CONVOEVAL_CACHE``."""
    # Asked once per LLM call: looked up by the variables it depends on, so the path (a mkdir) is made once.
    inputs = tuple(os.environ.get(name) for name in _CACHE_ENV)
    cache = _BY_ENVIRONMENT.get(inputs)
    if cache is None:
        key = (str(default_cache_path()), normalize_mode(os.environ.get("CONVOEVAL_CACHE") or "rw"))
        cache = _DEFAULTS.get(key)
        if cache is None:
            cache = _DEFAULTS[key] = ResponseCache(key[0], key[1])
        _BY_ENVIRONMENT[inputs] = cache
    return cache


@contextlib.contextmanager
def use_cache(cache: ResponseCache | str | Path) -> Iterator[ResponseCache]:
    """Make ``cache`` (a ``ResponseCache``, a mode, or a path) the cache of every call in this context.

    Example:
        >>> from convoeval.llm import SampleIdentity, call_model
        >>> from convoeval.testing import FakeChatModel
        >>> identity = SampleIdentity(scenario="billing-happy", seed=42, trial=1, role="simulator", turn=1)
        >>> with use_cache("off"):   # "replay" in a notebook: every call must come from the cache
        ...     call_model(FakeChatModel(replies=["Olá!"]), [("user", "Oi")], identity=identity).cache_hit
        False
    """
    if isinstance(cache, str) and cache.strip().lower() in _ALIASES:
        cache = ResponseCache(default_cache_path(), cache)
    elif not isinstance(cache, ResponseCache):
        cache = ResponseCache(cache)
    token = _CURRENT.set(cache)
    try:
        yield cache
    finally:
        _CURRENT.reset(token)


def resolve_cache(cache: ResponseCache | str | None, info: ModelInfo) -> ResponseCache | None:
    """The cache a call uses: the argument, else ``use_cache``'s, else the default; ``None`` when off.

    A fake model is never cached by default: a scripted test must see its script consumed, whatever an earlier run
    left in the user's cache. Pass a cache explicitly to test caching with a fake.
    """
    if isinstance(cache, str):
        chosen: ResponseCache | None = ResponseCache(default_cache_path(), cache)
    else:
        chosen = cache if cache is not None else _CURRENT.get()  # not `or`: an empty cache has len() == 0
        if chosen is None and info.provider != "fake":
            chosen = default_cache()
    return chosen if chosen is not None and chosen.enabled else None


def cache_key(
    info: ModelInfo,
    model_params: dict[str, Any],
    call_params: dict[str, Any],
    messages: Sequence[BaseMessage],
    identity: SampleIdentity,
    schema_json: str | None,
) -> str:
    """sha256 of the canonical JSON of everything that decides the reply (see the module docstring)."""
    material = {
        "v": _KEY_VERSION,
        "provider": info.provider,
        "model": info.model,
        "base_url": _stable_base_url(info),
        "params": {**model_params, **call_params},
        "structured": info.structured_method if schema_json else None,
        "schema": schema_json,
        "messages": [_canonical_message(m) for m in messages],
        # Its fields are scalars: a plain dict gives the same JSON as dataclasses.asdict, without its deep copy
        # (a third of the key's CPU).
        "identity": {name: getattr(identity, name) for name in _IDENTITY_FIELDS},
    }
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


_IDENTITY_FIELDS = tuple(f.name for f in fields(SampleIdentity))


def _stable_base_url(info: ModelInfo) -> str | None:
    # The embedded server gets a new free port on every start; its identity is the model it serves, not the port.
    return "local" if info.provider == "local" else info.base_url


#: Ids minted fresh for every run: uuid4 hex (run ids, seeded rows, payment-link tokens) and dashed UUIDs.
_RUN_IDS = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
#: The judges' transcript tag: a hash of the transcript (``convoeval.judges.render``), so it changes with any id in
#: it. Masked only in a text that held an id (the transcript itself stays in the key, so nothing is lost), which
#: leaves the keys of id-free prompts, and the caches recorded with them, as they were.
_TRANSCRIPT_TAG = re.compile(r"(?<=<transcript-)[0-9a-f]{12}(?=>)|(?<=</transcript-)[0-9a-f]{12}(?=>)")


def _mask_ids(value: Any) -> Any:
    """``value`` with every run-minted id replaced by ``<id>`` (strings inside lists and dicts too).

    A re-run mints new ids (the reference billing agent's payment link carries one), so a key that kept them would
    miss from that turn on and a finished run could not be replayed (benchmarks/RESULTS.md, replay). Everything
    else in the text still counts, and the sample identity still separates trials.
    """
    if isinstance(value, str):
        return value if len(value) < 32 else _mask_text(value)
    if isinstance(value, list):
        return [_mask_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _mask_ids(v) for k, v in value.items()}
    return value


@functools.lru_cache(maxsize=8192)
def _mask_text(text: str) -> str:
    # Memoised: a conversation's messages come back in every later call's key (the patient's history, the judges'
    # transcript), so each text is scanned once instead of once per call that repeats it.
    masked, found = _RUN_IDS.subn("<id>", text)
    return _TRANSCRIPT_TAG.sub("<tag>", masked) if found else text


def _canonical_message(message: BaseMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.type, "content": _mask_ids(message.content)}
    # Only AI messages carry tool calls; asking any other message goes through pydantic's failing __getattr__.
    tool_calls = message.tool_calls if isinstance(message, AIMessage) else None
    if tool_calls:
        out["tool_calls"] = [{"name": c["name"], "args": _mask_ids(c["args"])} for c in tool_calls]
    # Tool-call ids are left out on purpose: servers mint random ones, and they only pair a result with its call.
    name = getattr(message, "name", None)
    if name:
        out["name"] = name
    return out
