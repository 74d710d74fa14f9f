"""Accounting of LLM calls: one ``CallRecord`` per call (cache hits and failures included), token usage, cost.

Token counts come from the usage the server returns with each reply, never from a local tokenizer (tiktoken
downloads its encodings, which these machines cannot). Cost is an estimate from ``PRICES`` (USD per million
tokens), overridable with a JSON file named by ``CONVOEVAL_PRICES``::

    {"gpt-5-mini": {"input": 0.25, "output": 2.0, "cached_input": 0.025}, "my-vllm-model": {"input": 0, "output": 0}}

Collect the records of a block of code with ``record_calls()``; stream every record somewhere (a runner writing
them to disk) with ``add_sink()``; turn records into a DataFrame with ``calls_frame()``.

Example (``acall_model`` in a coroutine is recorded the same way):
    >>> from convoeval.llm import SampleIdentity, call_model
    >>> from convoeval.testing import FakeChatModel
    >>> identity = SampleIdentity(scenario="billing-happy", seed=42, trial=1, role="simulator", turn=1)
    >>> with record_calls() as calls:
    ...     _ = call_model(FakeChatModel(replies=["Olá!"]), [("user", "Oi")], identity=identity, cache="off")
    >>> calls_frame(calls)[["role", "model", "prompt_tokens", "cost_usd"]]
            role      model  prompt_tokens  cost_usd
    0  simulator  fake-chat              1       0.0
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CALL_COLUMNS",
    "PRICES",
    "CallRecord",
    "Price",
    "add_sink",
    "calls_frame",
    "emit",
    "estimate_cost",
    "price_table",
    "record_calls",
    "remove_sink",
    "usage_summary",
]


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None


#: USD per 1M tokens, from OpenAI's published price list (2025). Prices change: check the provider's page and
#: override with ``CONVOEVAL_PRICES``. A model missing here gets ``cost_usd = NaN`` (unknown), never 0.
PRICES: dict[str, Price] = {
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "o3": Price(2.00, 8.00, 0.50),
}

#: Providers whose calls cost nothing: the embedded local model and the scripted fake.
FREE_PROVIDERS = frozenset({"local", "fake"})


@dataclass
class CallRecord:
    """One LLM call as accounted: who asked, which model answered, what it used, what it cost.

    ``cost_usd`` is 0 for cache hits and free providers, ``None`` when the model has no price. ``error`` holds the
    one-line reason of a failed call (its tokens are then ``None``). ``started_at`` is when the call started (Unix
    seconds), ``latency_s`` how long it took.
    """

    role: str
    provider: str
    model: str
    scenario: str = ""
    seed: int | None = None
    trial: int = 0
    turn: int | None = None
    sample: int = 0
    extra: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_prompt_tokens: int | None = None
    latency_s: float = 0.0
    cache_hit: bool = False
    cost_usd: float | None = None
    attempts: int = 0
    finish_reason: str | None = None
    is_local_demo: bool = False
    error: str | None = None
    started_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        # Every field is a plain value: a comprehension costs a fifth of ``asdict``'s deep copy, per LLM call.
        return {name: getattr(self, name) for name in CALL_COLUMNS}


#: The columns of ``calls_frame``, declared once.
CALL_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CallRecord))


# -- prices -------------------------------------------------------------------------------------------------------

_LOADED: dict[tuple[str, float], dict[str, Price]] = {}


def price_table() -> dict[str, Price]:
    """``PRICES`` with the ``CONVOEVAL_PRICES`` JSON file applied (re-read when the file changes)."""
    override = os.environ.get("CONVOEVAL_PRICES")
    if not override:
        return PRICES
    path = Path(override).expanduser()
    try:
        key = (str(path), path.stat().st_mtime)
    except OSError:
        raise ValueError(f"CONVOEVAL_PRICES points at {path}, which cannot be read") from None
    table = _LOADED.get(key)
    if table is None:
        try:
            raw = json.loads(path.read_text())
            table = {**PRICES, **{name: Price(**value) for name, value in raw.items()}}
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"CONVOEVAL_PRICES file {path} must map model names to "
                f'{{"input": usd_per_1m, "output": usd_per_1m}}: {exc}'
            ) from None
        _LOADED.clear()
        _LOADED[key] = table
    return table


def estimate_cost(
    provider: str,
    model: str,
    prompt_tokens: int | None,
    completion_tokens: int | None,
    cached_prompt_tokens: int | None = None,
) -> float | None:
    """Estimated USD cost of one call, or ``None`` when the model has no price or usage is unknown.

    A dated model name (``gpt-5-mini-2025-08-07``) uses the price of its longest listed prefix.
    """
    if provider in FREE_PROVIDERS:
        return 0.0
    if prompt_tokens is None or completion_tokens is None:
        return None
    price = _price_for(model, price_table())
    if price is None:
        return None
    cached = min(cached_prompt_tokens or 0, prompt_tokens)
    cached_rate = price.cached_input if price.cached_input is not None else price.input
    return ((prompt_tokens - cached) * price.input + cached * cached_rate + completion_tokens * price.output) / 1e6


def _price_for(model: str, table: dict[str, Price]) -> Price | None:
    if model in table:
        return table[model]
    prefixes = [name for name in table if model.startswith(name + "-")]
    return table[max(prefixes, key=len)] if prefixes else None


# -- collection ---------------------------------------------------------------------------------------------------

_COLLECTORS: contextvars.ContextVar[tuple[list[CallRecord], ...]] = contextvars.ContextVar(
    "convoeval_call_collectors", default=()
)
_SINKS: list[Callable[[CallRecord], Any]] = []


@contextlib.contextmanager
def record_calls() -> Iterator[list[CallRecord]]:
    """Collect the ``CallRecord`` of every call made inside the block (tasks it starts included).

    Nested blocks each get every record of their own scope. When the block ends the records are in the order
    their calls started: calls made side by side (the rubric and holistic judges) finish in whichever order the
    server answers, and a conversation's calls must read the same in every run of the same seeds.
    """
    records: list[CallRecord] = []
    token = _COLLECTORS.set((*_COLLECTORS.get(), records))
    try:
        yield records
    finally:
        _COLLECTORS.reset(token)
        records.sort(key=lambda record: record.started_at)  # stable: records of one instant keep their order


def add_sink(sink: Callable[[CallRecord], Any]) -> Callable[[CallRecord], Any]:
    """Send every future record to ``sink`` (process-wide), e.g. a runner appending them to a parquet/JSONL file.

    A sink must be quick and must not raise; an exception from it is swallowed so accounting never fails a call.
    Returns the sink, for ``remove_sink``.
    """
    _SINKS.append(sink)
    return sink


def remove_sink(sink: Callable[[CallRecord], Any]) -> None:
    """Stop sending records to ``sink`` (a sink that is not registered is ignored)."""
    with contextlib.suppress(ValueError):
        _SINKS.remove(sink)


def emit(record: CallRecord) -> None:
    """Hand a record to the active collectors and sinks (called by ``acall_model``)."""
    for records in _COLLECTORS.get():
        records.append(record)
    for sink in list(_SINKS):
        with contextlib.suppress(Exception):
            sink(record)


def calls_frame(records: Iterable[CallRecord]) -> pd.DataFrame:
    """The records as a DataFrame with ``CALL_COLUMNS`` (an empty frame keeps the columns)."""
    import pandas as pd  # noqa: PLC0415 - pandas loads when frames are built (tests/test_startup.py)

    return pd.DataFrame([r.to_dict() for r in records], columns=list(CALL_COLUMNS))


def usage_summary(records: Iterable[CallRecord]) -> pd.DataFrame:
    """Calls, cache hits, errors, tokens and cost per role and model, as a DataFrame."""
    frame = calls_frame(records)
    grouped = frame.groupby(["role", "provider", "model"], dropna=False)
    return grouped.agg(
        calls=("role", "size"),
        cache_hits=("cache_hit", "sum"),
        errors=("error", lambda s: int(s.notna().sum())),
        prompt_tokens=("prompt_tokens", "sum"),
        completion_tokens=("completion_tokens", "sum"),
        cost_usd=("cost_usd", lambda s: s.sum(min_count=1)),
        mean_latency_s=("latency_s", "mean"),
    ).reset_index()
