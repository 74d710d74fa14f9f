"""One sync/async convention: a public ``verb`` beside a public coroutine function ``averb`` is ``blocking(averb)``.

``_aio.blocking`` gives the twin the coroutine's signature and docstring, so the parameters are declared once; a
hand-written twin that calls ``run_sync`` drifts (it did: ``fork_profile`` and ``afork_profile`` disagree today).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import convoeval

#: Sync verbs not yet ``blocking(a…)``: their coroutine takes ``**options`` while the sync verb spells the options
#: out (issue #26 step 3, "shared options declared once", will make them one declaration). Remove one when it is fixed.
NOT_YET = {"convoeval.forking._run.fork", "convoeval.forking._profile.fork_profile"}


def _pairs() -> list[tuple[str, object, object]]:
    pairs = []
    for info in pkgutil.walk_packages(convoeval.__path__, "convoeval."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, afn in vars(module).items():
            if not (name.startswith("a") and inspect.iscoroutinefunction(afn) and afn.__module__ == info.name):
                continue
            sync = vars(module).get(name[1:])
            if sync is not None and callable(sync) and not name[1:].startswith("_"):
                pairs.append((f"{info.name}.{name[1:]}", sync, afn))
    return pairs


def test_every_sync_twin_is_blocking_of_its_coroutine():
    pairs = _pairs()
    assert len(pairs) >= 10  # the walk found the verbs (simulate, run_conversation, judge_rubric, ...)
    hand_written = {where for where, sync, afn in pairs if getattr(sync, "__wrapped__", None) is not afn}
    assert hand_written - NOT_YET == set(), "write these as blocking(a…):"
    assert NOT_YET - hand_written == set(), "now blocking: remove from NOT_YET"


def test_the_public_twins_share_their_signature():
    from convoeval.simulator.patient import asimulate, simulate

    assert inspect.signature(simulate) == inspect.signature(asimulate)
    assert simulate.__name__ == "simulate" and simulate.__doc__ == asimulate.__doc__
    assert convoeval.simulate is simulate
