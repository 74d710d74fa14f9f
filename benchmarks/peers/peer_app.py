"""The agent under test of the peer comparison: plain, deterministic Python, no LLM call, no state.

The same reply function serves both tools through each one's own calling convention:

* convoeval: ``--target peer_app:respond`` (``fn(message, session)``; ``async`` so convoeval awaits
  it on its loop, as it would any async agent, instead of hopping to a worker thread);
* openevals: ``app(inputs, *, thread_id, **kwargs)`` returning an OpenAI-style assistant message.

It answers the stub's patient (``benchmarks/fake_llm.PATIENT_LINES``) like a billing assistant would. This module
imports nothing from convoeval, so the peers' virtualenv can load it too.
"""

from __future__ import annotations

from typing import Any

_STOP = "[GOAL_COMPLETE]"

#: What the agent says to each of the patient's lines; anything else gets the fallback.
REPLIES = {
    "Oi, quero pagar minha fatura": "Olá! Encontrei uma fatura pendente de R$ 150,00 com vencimento em 20/02. "
                                    "Prefere pagar por Pix ou boleto?",
    "Pix, por favor": "Certo, posso gerar o link de pagamento por Pix agora?",
    "Sim, pode gerar": "Pronto: https://pagamentos.example/pix/eval-inv-10",
    "Qual o valor mesmo?": "O valor é R$ 150,00.",
    "Certo, e o vencimento?": "O vencimento é 20/02/2026.",
}
FALLBACK = "Posso ajudar em algo mais?"


def reply_to(message: str) -> str:
    """The agent's answer to one patient message."""
    return REPLIES.get(message.replace(_STOP, "").strip(), FALLBACK)


async def respond(message: str, session: Any) -> str:
    """convoeval's ``module:function`` target: one bubble of text."""
    return reply_to(message)


def openevals_app(inputs: dict[str, Any], **kwargs: Any) -> dict[str, str]:
    """openevals' app: the latest user message in, an assistant message out."""
    return {"role": "assistant", "content": reply_to(str(inputs.get("content") or ""))}


async def openevals_app_async(inputs: dict[str, Any], **kwargs: Any) -> dict[str, str]:
    """The same app for ``run_multiturn_simulation_async``."""
    return openevals_app(inputs, **kwargs)
