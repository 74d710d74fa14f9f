"""run_sync: one background loop for every synchronous verb, usable from scripts and from inside a running loop."""

from __future__ import annotations

import asyncio

import pytest

from convoeval._util.aio import run_sync


async def _loop():
    await asyncio.sleep(0)
    return asyncio.get_running_loop()


def test_successive_calls_share_one_live_loop():
    # Reused chat clients bind their connections to the first loop; a fresh asyncio.run per call would close it.
    first, second = run_sync(_loop()), run_sync(_loop())
    assert first is second
    assert not first.is_closed()


async def test_works_inside_a_running_loop_like_a_notebook_cell():
    here = asyncio.get_running_loop()
    assert run_sync(_loop()) is not here


def test_exceptions_propagate():
    async def boom():
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_sync(boom())


def test_nested_call_on_the_background_loop_is_refused():
    async def nested():
        return run_sync(_loop())

    with pytest.raises(RuntimeError, match="await it"):
        run_sync(nested())


def test_sync_verbs_can_be_called_again_with_the_same_client():
    """A script calling a synchronous verb twice: LangChain's HTTP client per endpoint is bound to one event loop."""
    from convoeval.llm import SampleIdentity, call_model
    from convoeval.llm.models import clear_model_cache, get_model
    from convoeval.testing import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        model = get_model("judge", {"model": server.model, "base_url": server.base_url})
        texts = [call_model(model, [("user", "hi")], identity=SampleIdentity("s", 1, trial, "judge"),
                                 cache="off").text for trial in (1, 2, 3)]
    clear_model_cache()
    assert texts == ["Fake reply 1.", "Fake reply 2.", "Fake reply 3."]  # with asyncio.run, calls 2 and 3 failed


def test_blocking_twin_has_the_coroutine_functions_parameters_and_runs_it():
    import inspect

    from convoeval._util.aio import blocking

    async def ascale(values: list[int], *, factor: int = 2) -> list[int]:
        """Scale values."""
        return [v * factor for v in values]

    scale = blocking(ascale)
    assert scale.__name__ == "scale"
    assert inspect.signature(scale) == inspect.signature(ascale)
    assert not inspect.iscoroutinefunction(scale)
    assert scale([1, 2], factor=3) == [3, 6]
    assert scale.__doc__ == "Scale values."
