"""The chat drawn from the WhatsApp channel's columns (convoeval/report/chat_channel.py, chat.py, transcripts.py).

A conversation that ran through the channel shows each bubble's time, a burst as consecutive bubbles, a redelivered
or reordered message marked, an agent's follow-up after a silence, and the patient's tap as a tapped button. One
without the channel's columns is drawn byte for byte as before the channel existed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from convoeval import load_results, run_conversation
from convoeval.frames import RunFrames
from convoeval.pipeline.results import EvalResult
from convoeval.report.transcripts import transcript_html, transcripts
from convoeval.scenarios import parse_scenario
from convoeval.testing import FakeChatModel

RUN_ID = "r1"
KEYS = {"run_id": RUN_ID, "scenario": "billing-whatsapp", "agent": "billing", "target": "clinic:billing", "seed": 1,
        "trial": 1}


def _row(turn: int, role: str, text: str, *, delivery: str | None = None, sent_at: str | None = None,
         message_id: str | None = None, parts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {**KEYS, "turn": turn, "role": role, "text": text, "bubbles": [text],
            "parts": parts if parts is not None else [{"type": "text", "text": text}],
            "delivery": delivery, "sent_at": sent_at, "message_id": message_id}


def _at(clock: str, day: int = 2) -> str:
    return f"2026-03-{day:02d}T{clock}+00:00"


#: A channel conversation: a burst whose second fragment overtook the first, an answer after the quiet, a tap, the
#: tap's answer, the tap delivered again (same id), and a follow-up 26 hours after the last message.
CHANNEL_ROWS = [
    _row(1, "patient", "quanto está?", delivery="reordered", sent_at=_at("09:00:23"), message_id="wamid.1.1"),
    _row(1, "patient", "Oi, queria pagar minha fatura", delivery="delivered", sent_at=_at("09:00:20"),
         message_id="wamid.1.0"),
    _row(1, "agent", "Sua fatura é de R$ 150,00.", delivery="quiet", sent_at=_at("09:00:33")),
    _row(2, "patient", "Pix", delivery="delivered", sent_at=_at("09:07:53"), message_id="wamid.2.0",
         parts=[{"type": "reply", "id": "pix", "title": "Pix"}]),
    _row(2, "agent", "Posso gerar o link?", delivery="reply", sent_at=_at("09:08:01"), message_id="wamid.2.0"),
    _row(2, "patient", "Pix", delivery="redelivered", sent_at=_at("09:07:53"), message_id="wamid.2.0",
         parts=[{"type": "reply", "id": "pix", "title": "Pix"}]),
    _row(3, "agent", "[template retomar_atendimento: Mariana]", delivery="wait", sent_at=_at("11:08:01", day=3),
         parts=[{"type": "template", "name": "retomar_atendimento", "parameters": ["Mariana"]}]),
]


def _html(rows: list[dict[str, Any]], tmp_path: Path, **frames: list[dict[str, Any]]) -> str:
    run = EvalResult(out_dir=tmp_path, frames=RunFrames.from_rows({"transcripts": rows, **frames}))
    return transcript_html(run, RUN_ID, open=True)


def _bubbles(html: str) -> list[str]:
    """The chat's messages in order: the HTML of each message's column (label, bubbles, what is below)."""
    return re.split(r'(?=<div style="display:flex;flex-direction:column;align-items:flex-(?:start|end)">)', html)[1:]


def _message(html: str, text: str, nth: int = 0) -> str:
    found = [m for m in _bubbles(html) if text in m]
    assert len(found) > nth, f"no message {nth} with {text!r}"
    return found[nth]


def test_a_redelivered_or_reordered_message_is_marked_and_no_other(tmp_path) -> None:
    html = _html(CHANNEL_ROWS, tmp_path)
    reordered, first = _message(html, "quanto está?"), _message(html, "Oi, queria pagar")
    tap, again = _message(html, "tapped pix"), _message(html, "tapped pix", 1)
    assert "arrived out of order" in reordered and "redelivered" not in reordered
    assert "redelivered · same id" in again and 'title="message id wamid.2.0"' in again
    assert "opacity:0.6" in again  # drawn faded: the agent should not answer it again
    for unmarked in (first, tap, _message(html, "Sua fatura"), _message(html, "Posso gerar")):
        assert "arrived out of order" not in unmarked and "redelivered" not in unmarked
        assert "opacity" not in unmarked
    assert html.count("arrived out of order") == 1 and html.count("redelivered · same id") == 1


def test_every_bubble_shows_its_time_and_the_day_changes_are_dated(tmp_path) -> None:
    html = _html(CHANNEL_ROWS, tmp_path)
    for text, clock in (("quanto está?", "09:00"), ("Oi, queria pagar", "09:00"), ("Sua fatura", "09:00"),
                        ("Posso gerar", "09:08"), ("retomar_atendimento", "11:08")):
        assert re.search(rf'title="sent [0-9-]+ {clock}:\d\d"[^>]*>{clock}</span>', _message(html, text)), text
    # The reordered fragment's tooltip keeps the second it was sent: the order the patient typed in shows.
    assert 'title="sent 2026-03-02 09:00:23"' in _message(html, "quanto está?")
    assert html.count("Mon 2 Mar 2026") == 1 and html.count("Tue 3 Mar 2026") == 1
    assert html.index("Tue 3 Mar 2026") < html.index("retomar_atendimento")


def test_a_burst_is_consecutive_bubbles_under_one_label(tmp_path) -> None:
    html = _html(CHANNEL_ROWS, tmp_path)
    assert html.count("Patient · turn 1") == 1
    assert "Patient · turn" not in _message(html, "Oi, queria pagar")  # the burst's second fragment: no label
    # A patient message after the agent's answer starts a new label, even within the same turn.
    assert "Patient · turn 2" in _message(html, "tapped pix", 1)


def test_an_agent_answering_a_quiet_moment_or_a_silence_carries_a_note(tmp_path) -> None:
    html = _html(CHANNEL_ROWS, tmp_path)
    assert "after the patient stopped typing" in _message(html, "Sua fatura")
    assert "follow-up after 26 h" in _message(html, "retomar_atendimento")
    assert "after the patient" not in _message(html, "Posso gerar") and "follow-up" not in _message(html, "Posso")


def test_the_tap_is_drawn_as_the_button_tapped_with_its_title(tmp_path) -> None:
    html = _html(CHANNEL_ROWS, tmp_path)
    tap = _message(html, "tapped pix")
    # The title inside a button-like pill, after the reply arrow (an inline SVG).
    assert re.search(r'<span style="[^"]*border-radius:14px[^"]*"><svg[^>]*>.*?</svg>&#8201;Pix</span>', tap)
    untitled = [{**CHANNEL_ROWS[3], "parts": [{"type": "reply", "id": "boleto"}]}]
    assert re.search(r"</svg>&#8201;boleto</span>", _html(untitled, tmp_path))  # no title: its id


def test_a_turns_failed_checks_sit_under_its_last_agent_message_only(tmp_path) -> None:
    rows = [_row(1, "patient", "Oi", delivery="delivered", sent_at=_at("09:00:20"), message_id="m1"),
            _row(1, "agent", "Olá!", delivery="reply", sent_at=_at("09:00:20"), message_id="m1"),
            _row(1, "patient", "quanto está?", delivery="delivered", sent_at=_at("09:00:23"), message_id="m2"),
            _row(1, "agent", "R$ 150,00", delivery="reply", sent_at=_at("09:00:23"), message_id="m2")]
    turns = [{"run_id": RUN_ID, "turn": 1, "sample": 0, "check_failures": ["one_reply_per_burst: 2 replies"]}]
    html = _html(rows, tmp_path, turns=turns)
    assert html.count("one_reply_per_burst: 2 replies") == 1
    assert "one_reply_per_burst" in _message(html, "R$ 150,00") and "one_reply" not in _message(html, "Olá!")


def test_unreadable_channel_cells_draw_the_message_without_them(tmp_path) -> None:
    rows = [_row(1, "patient", "Oi", delivery="lost", sent_at="yesterday-ish", message_id="m1"),
            _row(1, "agent", "Olá!", delivery="wait", sent_at="also not a time")]
    html = _html(rows, tmp_path)
    assert "Oi" in html and "Olá!" in html and "title=\"sent" not in html
    assert "follow-up after a silence" in html  # the note without the silence it cannot measure
    assert "arrived out of order" not in html and "redelivered" not in html


# ── Without the channel: byte for byte as before ──

#: sha256 of ``str(transcripts(load_results("reports/example"), open=True))``, made with the code before the channel's
#: drawing existed (commit 26b6f96). A conversation without the channel's columns must still draw exactly so; if you
#: changed the report's drawing on purpose, write the new digest here and say so in the commit.
EXAMPLE_DIGEST = "5e6e35ac45cc30be5d320ae39e1a53bb4e13a86f9ffdc4127ed61d96b55a32b6"


@pytest.fixture(scope="module")
def example() -> EvalResult:
    run = load_results("reports/example")
    assert isinstance(run, EvalResult)
    return run


def test_a_run_without_the_channel_draws_exactly_as_before(example) -> None:
    t = example.frames.transcripts
    assert t["sent_at"].isna().all() and t["delivery"].isna().all()  # what makes it a run without the channel
    html = str(transcripts(example, open=True))
    assert hashlib.sha256(html.encode()).hexdigest() == EXAMPLE_DIGEST
    assert "opacity" not in html and 'title="sent' not in html


def test_a_frame_saved_before_the_channel_columns_existed_draws_the_same(example, tmp_path) -> None:
    frames = example.frames
    old = frames.replace(transcripts=frames.transcripts.drop(columns=["message_id", "sent_at", "delivery"]))
    before = EvalResult(out_dir=tmp_path, frames=old)
    for run_id in example.scores["run_id"]:
        assert transcript_html(before, run_id) == transcript_html(example, run_id)


def test_whatsapp_styles_are_drawn_in_a_channel_conversation_and_only_there(tmp_path) -> None:
    said = "Sua fatura é de *R$ 150,00*, vence _hoje_ <b>sim</b>"
    channel = [_row(1, "agent", said, delivery="reply", sent_at=_at("09:00:20"))]
    html = _html(channel, tmp_path)
    assert "<b>R$ 150,00</b>, vence <i>hoje</i> &lt;b&gt;sim&lt;/b&gt;" in html  # still escaped
    plain = [{**channel[0], "delivery": None, "sent_at": None}]
    assert "*R$ 150,00*, vence _hoje_" in _html(plain, tmp_path)  # without the channel: as before


def test_a_real_channel_run_draws_its_redelivery_burst_and_follow_up(tmp_path) -> None:
    scenario = parse_scenario({
        "id": "billing-whatsapp-chat", "agent": "billing", "locale": "pt-BR", "description": "chat drawing",
        "persona": {"name": "Mariana Costa", "phone": "11987650033"},
        "turns": [{"user": ["Oi, queria pagar minha fatura", "quanto está?"], "judge": False},
                  {"user": "Pix", "judge": False}, {"user": "Sim", "redeliver": True, "judge": False},
                  {"after": "26h", "judge": False}],
        "fixtures": {"invoices": [{"id": "inv-1", "amount_cents": 15000, "due_date": "2026-02-20",
                                   "status": "pending", "description": "Consulta"}]}})
    result = run_conversation(scenario, agent="clinic:billing?faults=not_idempotent", seed=1,
                              judge_model=FakeChatModel(replies=[]))
    run = EvalResult(out_dir=tmp_path, frames=result.frames())
    html = transcript_html(run, result.run_id)
    assert html.count("redelivered · same id") == 1 and "follow-up after 26 h" in html
    assert html.count("Patient · turn 1") == 1 and "Oi, queria pagar minha fatura" in html
    assert re.search(r">09:0\d</span>", html)


def test_an_image_the_project_holds_is_a_thumbnail_and_a_missing_one_only_its_chip() -> None:
    from convoeval.report.chat import message_html  # noqa: PLC0415

    shown = message_html("Patient", ["receipt"], patient=True, parts=[
        {"type": "media", "kind": "image", "path": "evals/media/comprovante-pix.png", "caption": "paguei"}])
    assert '<img src="data:image/png;base64,' in shown and "image · comprovante-pix.png" in shown
    missing = message_html("Patient", ["receipt"], patient=True, parts=[
        {"type": "media", "kind": "image", "path": "evals/media/no-such.png", "caption": "paguei"}])
    assert "<img" not in missing and "image · no-such.png" in missing
    audio = message_html("Patient", ["note"], patient=True, parts=[
        {"type": "media", "kind": "audio", "path": "evals/media/nota-de-voz.wav", "transcript": "oi"}])
    assert "<img" not in audio and "transcript" in audio
