"""Shared helpers of the engine tests (simulator, judges, scoring): small transcripts, a call recorder, isolation."""

from __future__ import annotations

from typing import Any

import pytest

from convoeval.frames import transcript_frame
from convoeval.scenarios import parse_scenario

CRITERIA = [
    "Agent identified the pending invoice and mentioned the amount",
    "Agent offered Pix and boleto as payment options",
    "Agent generated a payment link",
]


@pytest.fixture
def isolated_state(tmp_path, monkeypatch):
    """Keep any response cache or state the LLM layer writes inside the test's temporary folder."""
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def conversation(run_id: str = "run-1", scenario: str = "billing-conv-happy-payment", *, seed: int | None = 42,
                 trial: int = 1, messages: list[tuple[str, str]] | None = None, **extra: Any):
    """A transcript frame of one short conversation (patient first, alternating)."""
    messages = messages or [
        ("patient", "Oi, quero pagar minha fatura"),
        ("agent", "Olá! Sua fatura de R$ 150,00 vence dia 20. Prefere Pix ou boleto?"),
        ("patient", "Pix, por favor"),
        ("agent", "Pronto! Segue o link: https://pay.example/abc"),
    ]
    entries = [{"role": r, "text": t} for r, t in messages]
    return transcript_frame(entries, run_id=run_id, scenario=scenario, agent="billing", seed=seed, trial=trial,
                            **extra)


def scenario(**overrides: Any):
    raw = {
        "type": "conversational",
        "id": "billing-conv-happy-payment",
        "agent": "billing",
        "locale": "pt-BR",
        "description": "Neutral patient pays a pending invoice",
        "persona": {"name": "Lucia Ferreira", "phone": "11987650020", "cpf": "11122233344",
                    "traits": ["educada", "objetiva"]},
        "goal": "Patient pays a pending R$150 invoice using Pix",
        "max_turns": 15,
        "rubric": list(CRITERIA),
        **overrides,
    }
    return parse_scenario(raw)


def verdicts(*passed: bool, order: list[int] | None = None) -> dict[str, Any]:
    """A structured rubric answer: ``criterion_K`` keys, optionally written in another order."""
    items = [
        (f"criterion_{i}", {"evidence": f"Turn {i}: agent said something", "reasoning": "because", "passed": p})
        for i, p in enumerate(passed, 1)
    ]
    if order is not None:
        items = [items[i] for i in order]
    return dict(items)


def holistic(**scores: float) -> dict[str, Any]:
    base = {"correctness": 8, "helpfulness": 9, "tone": 9, "safety": 10, "conciseness": 7, "goal_completion": 9}
    base.update(scores)
    return {"issues": ["Turn 2: a bit long"], "scores": base, "suggestion": "Be more concise"}


class CallRecorder:
    """Wraps ``acall_model`` where a module imported it, recording each call's keyword arguments."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
        self.calls: list[dict[str, Any]] = []
        real = module.acall_model

        async def recording(model, messages, **kwargs):
            self.calls.append({"messages": list(messages), **kwargs})
            return await real(model, messages, **kwargs)

        monkeypatch.setattr(module, "acall_model", recording)

    @property
    def identities(self) -> list[Any]:
        return [c["identity"] for c in self.calls]
