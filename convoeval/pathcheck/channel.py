"""The WhatsApp channel's assertions, read from the recorded messages and their channel columns (no LLM, no store).

* ``one_reply_per_burst``: a burst of patient messages gets one answer, not one per fragment (no debouncing).
* ``fragments_covered``: the answer to a burst does not ask again for a fact one of its fragments gave (a CPF, a
  date, a time, a payment method): a bot that read only the last fragment does.
* ``no_duplicate_effects``: a message delivered twice (same id) is answered once: nothing sent and no tool called
  for the redelivery (idempotency on the message id).
* ``whatsapp_window``: outside the 24-hour window after the patient's last message, only templates are sent.

Each is a key a scenario sets (``true``, or ``false`` to expect the failure, as ``whatsapp_limits``); the detail
names the turn, the message and what was wrong. Rows come from a run through the channel
(``convoeval.pipeline.channel_talk``); a key set on a conversation that did not go through the channel fails, saying
so (never a silent pass).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from convoeval.channel import PartError, recorded_parts
from convoeval.channel.delivery import WINDOW
from convoeval.store.assertions import AssertionResult
from convoeval.textread.folding import fold

__all__ = ["CHANNEL_KEYS", "check_channel", "fragment_facts"]

Row = Mapping[str, Any]
_PATIENT_DELIVERED = ("delivered", "reordered")

#: A fact a fragment can give: how to find it in the patient's words, and how a question asks for it (folded text).
_FACTS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "cpf": (re.compile(r"\b\d{3}\.?\d{3}\.?\d{3}-?\d{2}\b"), re.compile(r"\bcpf\b")),
    "date": (re.compile(r"\b\d{1,2}/\d{1,2}\b|\b(?:segunda|terca|quarta|quinta|sexta|sabado|domingo|monday|tuesday|"
                        r"wednesday|thursday|friday|saturday|sunday|lunes|martes|miercoles|jueves|viernes|sabado)\b"),
             re.compile(r"\b(?:que dia|qual dia|qual data|which day|what day|what date|preferred day|que fecha|"
                        r"cual dia|dia de preferencia|dia preferido|algun dia|quando|when|cuando)\b")),
    "time": (re.compile(r"\b\d{1,2}(?::\d{2}|h\d{0,2})\b|\b(?:de manha|a tarde|de tarde|morning|afternoon|evening|"
                        r"por la manana|por la tarde)\b"),
             re.compile(r"\b(?:que horas|qual horario|what time|which time|que hora|a que hora|qual periodo|"
                        r"morning or afternoon|manha ou tarde|manana o tarde)\b")),
    "payment": (re.compile(r"\b(?:pix|boleto|cartao|card|tarjeta|transferencia)\b"),
                re.compile(r"\b(?:forma de pagamento|como (?:prefere|quer|deseja) pagar|payment method|how would you "
                           r"like to pay|how do you want to pay|metodo de pago|forma de pago|como (?:prefiere|quiere|"
                           r"desea) pagar)\b")),
}


def fragment_facts(text: str) -> dict[str, str]:
    """The facts a patient message gives, by kind: ``{"cpf": "123.456.789-09", "payment": "pix"}``.

    Example:
        >>> fragment_facts("meu CPF é 123.456.789-09, pago no pix")
        {'cpf': '123.456.789-09', 'payment': 'pix'}
    """
    folded = fold(text)
    return {kind: match.group(0) for kind, (gives, _) in _FACTS.items() if (match := gives.search(folded))}


def _questions(text: str) -> list[str]:
    sentences = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [fold(s) for s in sentences if s.strip().endswith("?") or s.strip().startswith("¿")]


def _by_turn(rows: Iterable[Row]) -> dict[int, list[Row]]:
    turns: dict[int, list[Row]] = {}
    for row in rows:
        turns.setdefault(int(row.get("turn") or 0), []).append(row)
    return turns


def _first_answers(rows: Sequence[Row]) -> tuple[list[Row], list[Row]]:
    """A turn's patient messages as first delivered, and the agent's messages before any redelivery."""
    patients: list[Row] = []
    agents: list[Row] = []
    for row in rows:
        if row.get("role") == "patient" and row.get("delivery") == "redelivered":
            break
        (patients if row.get("role") == "patient" else agents).append(row)
    return patients, agents


def _burst_problems(rows: Sequence[Row]) -> list[str]:
    out = []
    for turn, turn_rows in _by_turn(rows).items():
        patients, agents = _first_answers(turn_rows)
        if len(patients) > 1 and len(agents) > 1:
            out.append(f"turn {turn}: {len(agents)} replies to a burst of {len(patients)} messages")
    return out


def _coverage_problems(rows: Sequence[Row]) -> list[str]:
    out = []
    for turn, turn_rows in _by_turn(rows).items():
        patients, agents = _first_answers(turn_rows)
        if len(patients) < 2:
            continue
        answer = "\n".join(str(r.get("text") or "") for r in agents)
        folded_answer = fold(answer)
        for i, row in enumerate(sorted(patients, key=lambda r: str(r.get("sent_at") or ""))):
            for kind, value in fragment_facts(str(row.get("text") or "")).items():
                asks = _FACTS[kind][1]
                # A question that repeats the exact value is a confirmation ("Is your CPF 123...?"); a method named
                # among the options ("Pix, boleto or card?") is asked again all the same.
                confirming = kind != "payment" and value in folded_answer
                if not confirming and any(asks.search(q) for q in _questions(answer)):
                    out.append(f"turn {turn}: asked again for the {kind} the patient gave in message {i + 1} of "
                               f"{len(patients)} ({value!r})")
    return out


def _duplicate_problems(rows: Sequence[Row]) -> list[str]:
    out = []
    for turn, turn_rows in _by_turn(rows).items():
        again = None
        for row in turn_rows:
            if row.get("role") == "patient" and row.get("delivery") == "redelivered":
                again = again or str(row.get("message_id"))
            elif row.get("role") == "agent" and again is not None:
                tools = list(row.get("tools") or [])
                called = f", called {', '.join(tools)} again" if tools else ""
                out.append(f"turn {turn}: message {again} was delivered twice and answered twice{called}")
    return out


def _sent_at(row: Row) -> dt.datetime | None:
    value = row.get("sent_at")
    try:
        return dt.datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def _window_problems(rows: Sequence[Row]) -> list[str]:
    out, last_patient = [], None
    for row in rows:
        at = _sent_at(row)
        if at is None:
            continue
        if row.get("role") == "patient":
            last_patient = max(at, last_patient) if last_patient else at
            continue
        if last_patient is None or at - last_patient <= WINDOW:
            continue
        try:
            kinds = [p.type for p in recorded_parts(row.get("parts"), row.get("bubbles"), row.get("text"))]
        except PartError as exc:
            out.append(f"turn {row.get('turn')}: its parts cannot be read ({exc})")
            continue
        free = [k for k in kinds if k != "template"]
        if free:
            hours = (at - last_patient).total_seconds() / 3600
            out.append(f"turn {row.get('turn')}: sent {', '.join(free)} {hours:.0f} h after the patient's last "
                       f"message (only templates outside the 24-hour window)")
    return out


#: Assertion key -> (what it reads the rows for, what a pass says).
CHANNEL_KEYS: dict[str, tuple[Callable[[Sequence[Row]], list[str]], str]] = {
    "one_reply_per_burst": (_burst_problems, "every burst got one reply"),
    "fragments_covered": (_coverage_problems, "no reply to a burst asked again for what a fragment said"),
    "no_duplicate_effects": (_duplicate_problems, "no redelivered message was answered or acted on twice"),
    "whatsapp_window": (_window_problems, "only templates outside the 24-hour window"),
}


def check_channel(rows: Iterable[Row], assertions: object) -> list[AssertionResult]:
    """The results of the channel keys a scenario's ``assertions`` set (none for the keys it leaves out).

    Example:
        >>> rows = [{"turn": 1, "role": "patient", "text": "oi", "delivery": "delivered"},
        ...         {"turn": 1, "role": "patient", "text": "quero pagar", "delivery": "delivered"},
        ...         {"turn": 1, "role": "agent", "text": "Olá!"}, {"turn": 1, "role": "agent", "text": "Claro!"}]
        >>> check_channel(rows, {"one_reply_per_burst": True})[0].detail
        'one_reply_per_burst: turn 1: 2 replies to a burst of 2 messages'
    """
    listed = list(rows)
    results = []
    for key, (problems_of, fine) in CHANNEL_KEYS.items():
        expected = assertions.get(key) if isinstance(assertions, Mapping) else getattr(assertions, key, None)
        if expected is None:
            continue
        if not any(r.get("delivery") for r in listed):
            detail = f"{key}: the conversation did not go through the WhatsApp channel (no channel: block or turn)"
            results.append(AssertionResult(key=key, expected=expected, actual=None, passed=False, detail=detail))
            continue
        problems = problems_of(listed)
        ok = not problems
        detail = f"{key}: " + ("; ".join(problems) if problems else fine)
        if not expected and ok:
            detail += " (the failure was expected)"
        results.append(AssertionResult(key=key, expected=expected, actual=ok, passed=ok == expected, detail=detail))
    return results
