"""The ``module:function`` adapter: a Python callable as the agent under test.

The callable is ``fn(message: str, session: AgentSession)``, sync or async, and returns an ``AgentReply``, a ``str``
(one bubble), a ``list[str]`` (bubbles) or a dict ``{"bubbles" | "text" | "parts", "tool_calls"?,
"conversation_id"?}`` (``parts``: WhatsApp messages of any type, ``convoeval.channel.parts``).

Mistakes are caught as early as they can be: a missing module, a missing attribute, something that is not callable
or that cannot take ``(message, session)`` fails when the target is loaded (``ValueError``), before any conversation
starts; a wrongly shaped return value fails the call with an ``AgentError`` naming the target and the field.

Whatever the callable does ends at most its own conversation:

* it has the same deadline as a webhook (``timeout``, default ``$CONVOEVAL_AGENT_TIMEOUT`` or 60 s). An async
  callable is cancelled at the deadline. A sync callable runs in a thread of its own, and a Python thread cannot be
  killed: at the deadline the conversation ends with a timeout error and the thread is abandoned (a daemon thread,
  so it never holds up other conversations or the interpreter's exit; anything it does later is not recorded);
* ``sys.exit()`` and any other ``BaseException`` it raises become an ``AgentError`` for that conversation, never an
  exit of the run. ``KeyboardInterrupt`` (and ``asyncio.CancelledError``) still stop the run, as Ctrl-C does.

An async callable that blocks the event loop (``time.sleep`` inside ``async def``) or swallows the cancellation
cannot be bounded this way: write blocking agents as plain ``def``.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import inspect
import re
import threading
from collections.abc import Callable
from typing import Any

from convoeval.agents.base import AgentError, AgentReply, AgentSession, agent_timeout
from convoeval.agents.replies import coerce_reply

#: ``package.module:function`` or ``package.module:Class.attribute``.
TARGET_RE = re.compile(r"^(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<attr>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")


def _is_async(fn: Callable[..., Any]) -> bool:
    # Callable objects with an ``async def __call__`` count as async too.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


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
    fn: Callable[..., Any] = obj
    if inspect.isasyncgenfunction(fn):
        raise ValueError(f"agent target {target!r} is an async generator; it must return its reply")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn  # some builtins have no signature; the call itself will tell
    try:
        signature.bind("message", "session")
    except TypeError as exc:
        raise ValueError(
            f"agent target {target!r} must accept (message, session) as two positional arguments; "
            f"its signature is {attr_path}{signature} ({exc})"
        ) from exc
    return fn


class PythonCallableAgent:
    """An ``Agent`` wrapping ``fn(message, session)``.

    Sync callables run in a thread of their own so a slow one does not stall the other conversations running on
    the event loop, and so one stuck past its deadline can be abandoned (see the module docstring).

    Example (your own module; inside a coroutine, so not run as a doctest)::

        agent = PythonCallableAgent("my_bot.agent:respond")
        reply = await agent.respond("Oi, quero pagar minha fatura", session)
    """

    def __init__(self, target: str, fn: Callable[..., Any] | None = None, *, timeout: float | None = None):
        """Load the callable named by ``target`` (or wrap ``fn`` under that name).

        Args:
            target: ``module:function``; also the agent's name.
            fn: An already imported callable (tests, notebooks); skips the import.
            timeout: Seconds the callable has to answer one message (default ``$CONVOEVAL_AGENT_TIMEOUT`` or 60).

        Raises:
            ValueError: a target that cannot be loaded, or a timeout that is not a positive number.
        """
        self.name = target
        self.timeout = agent_timeout(timeout)
        self._fn = fn if fn is not None else load_callable(target)
        self._async = _is_async(self._fn)

    def __repr__(self) -> str:
        return f"PythonCallableAgent({self.name!r}, timeout={self.timeout:g})"

    async def respond(self, message: str, session: AgentSession) -> AgentReply:
        """Call the function within the deadline and check what it returned.

        Raises:
            AgentError: the function raised (``sys.exit()`` and other ``BaseException`` s included), did not answer
                within ``timeout``, or returned something the protocol does not allow.
            KeyboardInterrupt: raised by the function; stops the run as Ctrl-C does.
        """
        deadline = asyncio.timeout(self.timeout)
        try:
            async with deadline:
                result = await (self._fn(message, session) if self._async else self._in_thread(message, session))
                # A sync function may still hand back an awaitable (a lambda returning a coroutine).
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError as exc:
            if deadline.expired():
                raise AgentError(self._too_late()) from None
            raise AgentError(f"agent {self.name!r} raised TimeoutError: {exc}") from exc
        except AgentError:
            raise
        except Exception as exc:
            raise AgentError(f"agent {self.name!r} raised {type(exc).__name__}: {exc}") from exc
        except (KeyboardInterrupt, asyncio.CancelledError, GeneratorExit):
            raise  # the user (or the runner) stopping things, not the agent failing
        except SystemExit as exc:
            ended = f"agent {self.name!r} called sys.exit({exc.code!r}); only this conversation ended"
            raise AgentError(ended) from exc
        except BaseException as exc:  # noqa: BLE001 - the agent's own BaseException ends its conversation, not the run
            raise AgentError(f"agent {self.name!r} raised {type(exc).__name__}: {exc}") from exc
        return coerce_reply(self.name, result, waiting=session.inbound is not None)

    def _too_late(self) -> str:
        if self._async:
            return f"agent {self.name!r} did not answer within {self.timeout:g} s (cancelled)"
        return (f"agent {self.name!r} did not answer within {self.timeout:g} s (a synchronous Python agent cannot be "
                "stopped: its thread was abandoned and may still be running)")

    async def _in_thread(self, message: str, session: AgentSession) -> Any:
        """Run the sync callable in a new daemon thread; its result or exception (any ``BaseException``) comes back
        through a future, so awaiting it can time out while the thread is left to finish on its own."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        context = contextvars.copy_context()  # as asyncio.to_thread does: the caller's context variables

        def settle(value: Any, error: BaseException | None) -> None:
            if future.done():  # timed out (cancelled) meanwhile: nobody waits for it any more
                return
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

        def work() -> None:
            value, error = None, None
            try:
                value = context.run(self._fn, message, session)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine, which decides
                error = exc
            try:
                loop.call_soon_threadsafe(settle, value, error)
            except RuntimeError:
                pass  # the loop is closed: the conversation is long over

        threading.Thread(target=work, name=f"convoeval-agent {self.name}", daemon=True).start()
        return await future
