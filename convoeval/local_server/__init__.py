"""What runs inside the embedded model's server process, started by ``convoeval.llm.local`` as ``python -m
convoeval.local_server``: llama-cpp-python's server made deterministic and cancellable (``app``) and its idle clock
(``idle``, whose setting and status line ``convoeval.llm.local`` reads too).

A package of its own rather than a part of ``convoeval.llm.local``: importing ``convoeval.llm`` loads LangChain (~500
modules), which the server process never needs, and ``convoeval.local_server`` is in the command line that running
servers are recognised by (``convoeval.llm.local.server``). This file imports only the standard library through
``app`` (llama.cpp loads inside ``serve``).
"""

from convoeval.local_server.app import GenerationCancelled, PromptCache, patch_llama, serve, wrap_app

__all__ = ["GenerationCancelled", "PromptCache", "patch_llama", "serve", "wrap_app"]
