"""Deprecated home of the fake OpenAI-compatible server: use ``convoeval.testing`` (this alias goes after one release).

``Fault`` and ``FAULTS`` are the old names of ``ServerFault`` and ``SERVER_FAULTS`` (they clashed with the reference
agents' ``convoeval.agents.clinic.Fault`` / ``FAULTS``).
"""

from convoeval.testing.fake_server import (  # noqa: F401 - re-exported for existing imports
    SERVER_FAULTS,
    FakeOpenAIServer,
    ServerFault,
    example_from_schema,
)

Fault = ServerFault
FAULTS = SERVER_FAULTS
