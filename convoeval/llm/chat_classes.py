"""The chat model classes convoeval builds: ``ChatOpenAI`` with leaner requests, ``max_tokens`` for OpenAI-compatible
servers, and a client that starts the embedded local model on its first request.

Each class is made on first use (``langchain_openai`` is imported then) and once per process.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first use at run time (start-up budget); the checker needs the class
    from langchain_openai import ChatOpenAI


@functools.lru_cache(maxsize=1)
def _lean_chat_class() -> type[ChatOpenAI]:
    """``ChatOpenAI`` whose requests skip the openai SDK's walk over the messages it already built.

    ``AsyncCompletions.create`` passes every argument through ``async_maybe_transform``, which walks the messages
    (and tools) recursively against their TypedDicts to rename aliased keys and encode files: ~0.8 ms of CPU per
    call with a judge's transcript, two thirds of LangChain's whole path (py-spy, ``benchmarks/profile_peers.py``).
    LangChain's messages are plain JSON with none of those keys, so they go in ``extra_body``, which the SDK sends
    as given and which takes precedence over the (empty) ``messages`` argument on the wire: the request body is
    the same byte for byte. Tools stay where they are when a ``response_format`` asks the SDK to parse the reply.
    """
    from langchain_openai import ChatOpenAI  # noqa: PLC0415 - langchain_openai loads on first use (start-up budget, tests/test_startup.py)

    class LeanChatOpenAI(ChatOpenAI):
        def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
            payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
            moved = ("messages",) if "response_format" in payload else ("messages", "tools")
            if "messages" not in payload:
                return payload
            passed = {key: payload.pop(key) for key in moved if key in payload}
            payload["extra_body"] = {**(payload.get("extra_body") or {}), **passed}
            payload["messages"] = []  # required by create(); the body's messages come from extra_body
            return payload

    return LeanChatOpenAI


@functools.lru_cache(maxsize=1)
def _compatible_chat_class() -> type[ChatOpenAI]:
    """``ChatOpenAI`` that sends the output limit as ``max_tokens``, for every endpoint but OpenAI's own.

    ``ChatOpenAI`` renames ``max_tokens`` to ``max_completion_tokens`` (OpenAI's newer name), which llama.cpp's
    server (the embedded local model) does not know and silently ignores: a call capped at 48 tokens generated 330
    (benchmarks/RESULTS.md, local model), and every cap in convoeval (simulator, judges, the local provider's 768)
    did nothing. vLLM, Ollama and LM Studio all read ``max_tokens``. Only the request changes: the model's
    parameters, and so the response cache's keys, stay as they were.
    """
    class CompatibleChatOpenAI(_lean_chat_class()):  # type: ignore[misc]
        def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
            payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
            if "max_completion_tokens" in payload:
                payload["max_tokens"] = payload.pop("max_completion_tokens")
            return payload

    return CompatibleChatOpenAI


# Where a local model's client points until its first request: the discard port, so a request that bypassed
# ``LocalChatOpenAI`` would fail at once instead of reaching some other server.
_LOCAL_PLACEHOLDER = "http://127.0.0.1:9/v1"


@functools.lru_cache(maxsize=1)
def _local_chat_class() -> type[ChatOpenAI]:
    """The embedded model's client: it starts the local server on its first request, not when it is built.

    A run replayed from the response cache (nbval, a re-run of a finished notebook) builds its models but never
    calls them; starting a server for it cost a model load and left a process behind. Each request asks
    ``ensure_server()`` for the current URL (no HTTP once the server runs) and follows the server to its new port
    after a restart, so one client serves every start of the server.
    """

    base = _compatible_chat_class()

    class LocalChatOpenAI(base):  # type: ignore[valid-type, misc]
        def _follow(self, url: str) -> None:
            _point_at(self, url)

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            from convoeval.llm.local import ensure_server  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

            self._follow(ensure_server())
            return super()._generate(*args, **kwargs)

        async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
            from convoeval.llm.local import ensure_server  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

            self._follow(await asyncio.to_thread(ensure_server))  # the first start can take a minute
            return await super()._agenerate(*args, **kwargs)

        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            from convoeval.llm.local import ensure_server  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

            self._follow(ensure_server())
            yield from super()._stream(*args, **kwargs)

        async def _astream(self, *args: Any, **kwargs: Any) -> Any:
            from convoeval.llm.local import ensure_server  # noqa: PLC0415 - `convoeval --help` does not load it (start-up budget, tests/test_startup.py)

            self._follow(await asyncio.to_thread(ensure_server))
            async for chunk in super()._astream(*args, **kwargs):
                yield chunk

    return LocalChatOpenAI


def _point_at(model: ChatOpenAI, url: str) -> None:
    """Send ``model``'s requests to ``url`` from now on (its clients are built once, with the URL of their day)."""
    if model.openai_api_base != url:
        for client in (model.root_client, model.root_async_client):
            if client is not None:
                client.base_url = url
        model.openai_api_base = url
