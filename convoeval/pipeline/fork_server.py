"""The fork server local Dask workers start from: it imports convoeval and LangChain once, workers fork from it.

Spawned workers each import convoeval, LangChain and the openai SDK afresh, ~2.5 s of CPU apiece before their first
conversation, on the cores they are meant to share out. Forked from one server that imported them once, they start
with the modules in memory. (Forking the client itself is not safe: it runs threads.)

The server is started for one run and stopped after it, because workers inherit the server's environment, which
must be the run's (a notebook may have changed ``OPENAI_BASE_URL`` since the last run). ``start`` can be called
early — the command line does it before importing the pipeline — so the server imports while this process does.
This module imports nothing heavy: it is used before the rest of convoeval is loaded.
"""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing import forkserver

__all__ = ["PRELOAD", "available", "start", "stop"]

#: What the server imports for its workers (``convoeval.pipeline.worker_imports`` lists the heavy modules).
PRELOAD = ("distributed", "convoeval.pipeline.worker_imports")

_started_with: dict[str, str] | None = None  # the environment the running server was started with


def available() -> bool:
    """Whether this platform can fork from a server (not on Windows, where Dask spawns its workers)."""
    return "forkserver" in multiprocessing.get_all_start_methods()


def start() -> None:
    """Start the fork server now (it imports in the background) unless one runs with this same environment."""
    global _started_with
    if not available() or _started_with == dict(os.environ):
        return

    stop()
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(PRELOAD))
    forkserver.ensure_running()
    _started_with = dict(os.environ)


def stop() -> None:
    """Stop the fork server if one runs (the next ``start`` makes a new one with the current environment)."""
    global _started_with

    _started_with = None
    halt = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)  # private since 3.4, kept through 3.13
    if callable(halt):
        halt()
