"""Retrying a call: which failures are transient, how long to wait (Retry-After, backoff), and errors told without secrets."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import ValidationError

from convoeval.llm.structured import _short_validation_error
from convoeval.llm.types import LLMCallError, LLMError, ModelInfo, RetryPolicy, _default_policy


class _BadReply(Exception):
    """A reply that arrived but cannot be a structured answer (e.g. cut off at max_tokens)."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


async def _invoke_with_retries(
    model: Any, msgs: list[BaseMessage], kwargs: dict[str, Any], info: ModelInfo, policy: RetryPolicy | None
) -> tuple[AIMessage, int]:
    """One model call; transient failures retried with backoff (honouring Retry-After), others raised at once.

    A plain loop, not tenacity's ``AsyncRetrying``: building and driving one per call cost 28 us of CPU (1 us now)
    for a loop whose first attempt almost always succeeds. The policy is the one tenacity applied
    (``stop_after_attempt``, full-jitter exponential backoff, ``Retry-After`` capped).
    """
    import openai  # noqa: PLC0415 - openai loads on first use (start-up budget, tests/test_startup.py)

    policy = policy or _default_policy()
    sleep = policy.sleep or asyncio.sleep
    attempts = 0
    try:
        while True:
            attempts += 1
            try:
                message = await model.ainvoke(msgs, **kwargs)
                break
            except Exception as exc:
                if attempts >= max(1, policy.attempts) or not _is_transient(exc):
                    raise
                await sleep(_wait_s(policy, attempts, exc))
    except LLMError:
        raise
    except AssertionError:
        raise  # a broken test script (e.g. FakeChatModel ran out), never an LLM failure
    except Exception as exc:
        bad = _bad_reply_reason(exc)
        if bad is not None:
            raise _BadReply(bad, attempts) from exc
        reason = describe_error(exc)
        if info.provider == "local" and isinstance(exc, openai.APIConnectionError) and not isinstance(
                exc, openai.APITimeoutError):  # a timeout is a connection error to openai, not a server that is down
            reason += "; is the local model server running? (convoeval llm status)"
        what = f"after {attempts} attempts" if _is_transient(exc) else "(not retryable)"
        error = LLMCallError(f"{info.provider}/{info.model} ({info.role}) call failed {what}: {reason}")
        error.attempts = attempts  # type: ignore[attr-defined]
        raise error from exc
    return message, attempts


def _wait_s(policy: RetryPolicy, attempt: int, exc: BaseException) -> float:
    """Seconds before the attempt after ``attempt``: the server's ``Retry-After`` (capped) when it sent one, else
    exponential backoff with full jitter (uniform between 0 and ``initial_wait × 2^(attempt-1)``, at most
    ``max_wait``), as tenacity's ``wait_random_exponential`` computed it."""
    after = retry_after_seconds(exc)
    if after is not None:
        return min(after, policy.retry_after_cap)
    try:
        high = policy.initial_wait * 2 ** (attempt - 1)
    except OverflowError:
        high = policy.max_wait
    return random.uniform(0.0, max(0.0, min(high, policy.max_wait)))


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """The ``Retry-After`` of an HTTP error, in seconds (``retry-after-ms`` too), or ``None``."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        if headers.get("retry-after"):
            return max(0.0, float(headers["retry-after"]))
    except ValueError:
        return None  # an HTTP date; rare from LLM APIs, so fall back to our own backoff
    return None


_TRANSIENT_STATUS = {408, 409, 425, 429}


def _is_transient(exc: BaseException) -> bool:
    """Timeouts, 429, 5xx, dropped connections and garbled bodies: worth another attempt."""
    import httpx  # noqa: PLC0415 - httpx loads on first use (start-up budget, tests/test_startup.py)
    import openai  # noqa: PLC0415 - openai loads on first use (start-up budget, tests/test_startup.py)

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, asyncio.TimeoutError, httpx.TransportError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _TRANSIENT_STATUS or exc.status_code >= 500
    if isinstance(exc, ValidationError):
        return False  # a structured reply that does not validate: handled as a bad reply, not retried here
    if isinstance(exc, (openai.APIResponseValidationError, json.JSONDecodeError)):
        return True
    # langchain-openai raises plain KeyError/TypeError/ValueError for a 200 whose body is not a chat completion
    # (no "choices", null choices, an "error" field): a garbled reply from a struggling server.
    return _raised_by_client(exc) and isinstance(exc, (KeyError, TypeError, ValueError))


def _raised_by_client(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return module.startswith(("langchain_openai", "openai", "httpx"))


def _bad_reply_reason(exc: BaseException) -> str | None:
    """Why a reply that did arrive cannot be a structured answer, or ``None`` if ``exc`` is not about the reply."""
    import openai  # noqa: PLC0415 - openai loads on first use (start-up budget, tests/test_startup.py)

    if isinstance(exc, openai.LengthFinishReasonError):
        return "the reply hit max_tokens before the structured answer was complete"
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return "the reply was stopped by the provider's content filter"
    if isinstance(exc, ValidationError):  # the OpenAI SDK validates json_schema replies itself
        return _short_validation_error(exc)
    return None


_SECRETISH = re.compile(r"(sk-[A-Za-z0-9_\-\*]{6,}|Bearer\s+\S+|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-\.]+)")


def describe_error(exc: BaseException) -> str:
    """A one-line, secret-free description of a failed call: HTTP status and a short reason."""
    import openai  # noqa: PLC0415 - openai loads on first use (start-up budget, tests/test_startup.py)

    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APITimeoutError):
        text = "timed out"
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        text = f"connection error ({type(cause).__name__ if cause else 'no response'})"
    elif isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = body.get("message") or (body.get("error") or {}).get("message") if body else None
        text = f"HTTP {status} {type(exc).__name__}" + (f": {detail}" if detail else "")
    else:
        text = f"{type(exc).__name__}: {exc}"
    return redact(" ".join(text.split()))[:300]


def redact(text: str) -> str:
    """Remove API keys from a text: every secret-looking environment value, and key/bearer patterns."""
    for name, value in os.environ.items():
        if value and len(value) >= 8 and name.upper().endswith(("KEY", "TOKEN", "SECRET", "PASSWORD")):
            text = text.replace(value, "***")
    return _SECRETISH.sub("***", text)
