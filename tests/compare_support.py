"""Fake models for the comparison tests: a scripted patient per billing scenario and a judge that reads symptoms.

The judge is not an LLM: it decides each billing criterion from what the transcript shows (the amount quoted, the
tools called, URLs sent without the payment-link tool), so a known fault makes exactly the criteria it breaks fail
and a healthy agent passes them. That is what a good judge would do; the tests measure the comparison, not a judge.
``noisy=True`` adds seeded random verdicts and holistic scores (an A/A comparison then has noise to be fooled by).
"""

from __future__ import annotations

import importlib
import random
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from convoeval.testing import FakeChatModel

#: Seeds are multiples of 1000: the simulator is called with ``seed + turn index``, so ``seed % 1000`` is the turn.
SEED_STEP = 1000
#: The patient's lines per scenario (by persona name), by turn; ``alternatives`` vary with the seed.
LINES = {
    "Lucia Ferreira": ["Oi, quero pagar minha fatura", "Pix", "Sim", "Obrigada! [GOAL_COMPLETE]"],
    "Dona Aparecida": ["Oi, quero pagar minha conta", "Boleto", "Sim", "Obrigada! [GOAL_COMPLETE]"],
    "Ricardo Santos": ["Quero pagar a fatura, rápido", "Pix", "Sim", "Ok. [GOAL_COMPLETE]"],
}
#: The invoices' true amounts (the scenarios' fixtures), as the agent writes them.
AMOUNTS = ("150,00", "180,00", "250,00")
HOLISTIC = {"issues": [], "suggestion": "ok", "scores": {"correctness": 9, "helpfulness": 9, "tone": 9, "safety": 10,
                                                          "conciseness": 8, "goal_completion": 9}}
_TURN = re.compile(r"\[Turn (\d+)\] Agent: (\".*?\")(?: tools: \[(.*?)\])?$", re.M)


def patient(messages: list[Any], kwargs: dict[str, Any]) -> str:
    text = "\n".join(str(m.content) for m in messages[:1])  # the system prompt names the persona
    lines = next(lines for name, lines in LINES.items() if name in text)
    line = lines[min(int(kwargs["seed"]) % SEED_STEP, len(lines) - 1)]
    # The patient ends once it has a link; an agent that never sends one (never_finishes) is confirmed until
    # max_turns, as a real patient would. Ending anyway would be a premature [GOAL_COMPLETE], the simulator's
    # failure (the gate's premature_goal), and the fault would go unscored.
    if line.endswith("[GOAL_COMPLETE]") and "https://" not in "\n".join(str(m.content) for m in messages):
        return "Sim"
    return line


def agent_turns(prompt: str) -> list[tuple[str, list[str]]]:
    """(text, tools) of each agent message of a rendered transcript."""
    return [(m.group(2), re.findall(r'"([^"]+)"', m.group(3) or "")) for m in _TURN.finditer(prompt)]


def criterion_holds(criterion: str, turns: list[tuple[str, list[str]]]) -> bool:
    """What the transcript shows about one billing criterion (True for criteria no fault here touches)."""
    said = " ".join(t for t, _ in turns)
    tools = [name for _, names in turns for name in names]
    if "mentioned the amount" in criterion:
        return any(a in said for a in AMOUNTS)
    if "generated a" in criterion and "payment link" in criterion:
        return "create_payment_link" in tools
    if "fabricate" in criterion:
        # A URL first sent in a message that did not create a link was made up.
        sent: set[str] = set()
        for text, names in turns:
            for url in re.findall(r"https?://\S+", text):
                if url not in sent and "create_payment_link" not in names:
                    return False
                sent.add(url)
        return True
    return True


def make_judge(*, noisy: bool = False, seed: int = 0) -> Any:
    rng = random.Random(seed)

    def judge(messages: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        keys = kwargs["tools"][0]["function"]["parameters"]["properties"]
        prompt = str(messages[-1].content)
        if "criterion_1" not in keys:
            if not noisy:
                return HOLISTIC
            return {**HOLISTIC, "scores": {k: rng.choice([6, 7, 8, 9, 10]) for k in HOLISTIC["scores"]}}
        criteria = re.findall(r"^\d+\. (.+)$", prompt.split("Conversation:")[0], re.M)
        turns = agent_turns(prompt)
        out = {}
        for i, key in enumerate(sorted(keys, key=lambda k: int(k.split("_")[1]))):
            passed = criterion_holds(criteria[i], turns) if i < len(criteria) else True
            if noisy and rng.random() < 0.3:
                passed = rng.random() < 0.5
            out[key] = {"evidence": "Turn 1", "reasoning": "read", "passed": passed}
        return out

    return judge


@contextmanager
def fake_models(monkeypatch: pytest.MonkeyPatch, *, noisy: bool = False, seed: int = 0
                ) -> Iterator[tuple[FakeChatModel, FakeChatModel]]:
    """Every model a run builds is one of these two fakes (``get_model`` by role)."""
    simulator = FakeChatModel(responder=patient)
    judge = FakeChatModel(responder=make_judge(noisy=noisy, seed=seed))
    models = {"simulator": simulator, "judge": judge}
    patch_get_model(monkeypatch, lambda role, spec=None: models[role])
    yield simulator, judge


#: The modules that import ``get_model`` at their top (each holds its own reference to it).
GET_MODEL_USERS = ("convoeval.llm.models", "convoeval.pipeline.execute", "convoeval.pipeline.distributed",
                   "convoeval.simulator.patient", "convoeval.agreement.rejudge", "convoeval.agreement.study",
                   "convoeval.agents.openai_chat")


def patch_get_model(monkeypatch: pytest.MonkeyPatch, fake: Any) -> None:
    """Replace ``get_model`` in its module and in every convoeval module that imported it."""
    original = importlib.import_module("convoeval.llm.models").get_model
    for name in GET_MODEL_USERS:
        importlib.import_module(name)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("convoeval") and getattr(module, "get_model", None) is original:
            monkeypatch.setattr(module, "get_model", fake)


def seeds(n: int, start: int = 1) -> list[int]:
    """``n`` seeds on the ``SEED_STEP`` grid."""
    return [SEED_STEP * (start + i) for i in range(n)]


@pytest.fixture
def env(tmp_path, monkeypatch):
    """State, store and cache in tmp_path (the cache off: a replayed judge answer would hide the judge's noise)."""
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    monkeypatch.setenv("CONVOEVAL_STORE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    return tmp_path


def run_baseline(out, *, n_seeds: int, target: str | None = None, trials: int = 1, scenario: str | None = None):
    """The billing conversational scenarios, ``n_seeds`` seeds, into ``out`` (models: whatever is patched in)."""
    from convoeval.pipeline import EvalConfig, run_eval

    settings = {"scenario": scenario} if scenario else {"agent": "billing", "type": "conversational"}
    config = EvalConfig.checked(settings, seed=seeds(n_seeds), trials=trials, target=target, output_dir=str(out))
    return run_eval(config, progress="off")
