"""Test doubles for the LLM: a scripted in-process chat model and a local OpenAI-compatible server.

``FakeChatModel`` (``fake_model``) answers from a queue of replies and records every call; ``FakeOpenAIServer``
(``fake_server``) serves the OpenAI chat API on 127.0.0.1 and misbehaves on demand (``ServerFault``). Unit tests and
examples use them; nothing here touches the network beyond 127.0.0.1.

Example:
    >>> from convoeval.testing import FakeChatModel
    >>> FakeChatModel(replies=["hi"]).invoke("hello").content
    'hi'
"""

from convoeval.testing.fake_model import FakeCall, FakeChatModel, ScriptExhaustedError
from convoeval.testing.fake_server import SERVER_FAULTS, FakeOpenAIServer, ServerFault, example_from_schema

__all__ = [
    "SERVER_FAULTS",
    "FakeCall",
    "FakeChatModel",
    "FakeOpenAIServer",
    "ScriptExhaustedError",
    "ServerFault",
    "example_from_schema",
]
