"""The ``module:function`` adapter: a Python callable as the agent under test.

The callable is ``fn(message: str, session: AgentSession)``, sync or async, and returns an ``AgentReply``, a ``str``
(one bubble), a ``list[str]`` (bubbles) or a dict ``{"bubbles" | "text", "tool_calls"?, "conversation_id"?}``.

Mistakes are caught as early as they can be: a missing module, a missing attribute, something that is not callable
or that cannot take ``(message, session)`` fails when the target is loaded (``ValueError``), before any conversation
starts; a wrongly shaped return value fails the call with an ``AgentError`` naming the target and the field.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

from convoeval.agents.base import AgentError, AgentReply, AgentSession
from convoeval.agents.replies import coerce_reply

#: ``package.module:function`` or ``package.module:Class.attribute``.
TARGET_RE = re.compile(r"^(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<attr>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")


def _is_async(fn: Callable[..., Any]) -> bool:
    # Callable objects with an ``async def __call__`` count as async too.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))


def load_callable(target: str) -> Callable[..., Any]:
    """Import ``module:function`` and check it can be called as ``fn(message, session)``.

    Args:
        target: ``module:function`` (dotted module and attribute paths allowed).

    Returns:
        The callable.

    Raises:
        ValueError: the target is malformed, the module or attribute is missing, the object is not callable, or
            its signature cannot accept two positional arguments.
    """
    match = TARGET_RE.match(target)
    if not match:
        raise ValueError(f"agent target {target!r} is not of the form 'module:function'")
    module_name, attr_path = match["module"], match["attr"]
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"agent target {target!r}: cannot import module {module_name!r} ({exc})") from exc
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"agent target {target!r}: {module_name!r} has no attribute {attr_path!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"agent target {target!r} is a {type(obj).__name__}, not a callable")
    if inspect.isasyncgenfunction(obj):
        raise ValueError(f"agent target {target!r} is an async generator; it must return its reply")
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return obj  # some builtins have no signature; the call itself will tell
    try:
        signature.bind("message", "session")
    except TypeError as exc:
        raise ValueError(
            f"agent target {target!r} must accept (message, session) as two positional arguments; "
            f"its signature is {attr_path}{signature} ({exc})"
        ) from exc
    return obj


class PythonCallableAgent:
    """An ``Agent`` wrapping ``fn(message, session)``.

    Sync callables run in a worker thread (``asyncio.to_thread``) so a slow one does not stall the other
    conversations running on the event loop.

    Example:
        >>> agent = PythonCallableAgent("my_bot.agent:respond")  # doctest: +SKIP
        >>> reply = await agent.respond("Oi, quero pagar minha fatura", session)  # doctest: +SKIP
    """

    def __init__(self, target: str, fn: Callable[..., Any] | None = None):
        """Load the callable named by ``target`` (or wrap ``fn`` under that name).

        Args:
            target: ``module:function``; also the agent's name.
            fn: An already imported callable (tests, notebooks); skips the import.
        """
        self.name = target
        self._fn = fn if fn is not None else load_callable(target)
        self._async = _is_async(self._fn)

    def __repr__(self) -> str:
        return f"PythonCallableAgent({self.name!r})"

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        """Call the function and check what it returned.

        Raises:
            AgentError: the function raised, or returned something the protocol does not allow.
        """
        try:
            if self._async:
                result = await self._fn(message, session)
            else:
                result = await asyncio.to_thread(self._fn, message, session)
                # A sync function may still hand back an awaitable (a lambda returning a coroutine).
                if inspect.isawaitable(result):
                    result = await result
        except AgentError:
            raise
        except Exception as exc:
            raise AgentError(f"agent {self.name!r} raised {type(exc).__name__}: {exc}") from exc
        return coerce_reply(self.name, result)
