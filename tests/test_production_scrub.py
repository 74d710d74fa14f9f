"""`convoeval import --scrub`: names, CPFs, phones, e-mails, dates, addresses and amounts replaced by consistent
stand-ins per conversation (dates by one offset of whole weeks, the message times with them), a scrub report per
folder, the original text only with --keep-original; on by default unless the judge is the local model."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import pytest

from convoeval import load_results
from convoeval.cli import main
from convoeval.production import ImportSettings, format_of
from convoeval.production.messages import ImportedConversation, ImportedMessage
from convoeval.production.scrub import Scrubber, conversation_names

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "production"
sys.path.insert(0, str(REPO / "benchmarks"))


def _conversation(*said: tuple[str, str], locale: str = "pt-BR") -> ImportedConversation:
    messages = tuple(ImportedMessage(role, text, datetime(2026, 11, 6, 9, i), ({"type": "text", "text": text},),
                                     sender="Mariana Lopes" if role == "patient" else None)
                     for i, (role, text) in enumerate(said))
    return ImportedConversation("wa-test", "whatsapp-export", "chat.txt", "chat.txt#1", messages, locale=locale)


def test_the_same_person_keeps_the_same_stand_in_and_dates_move_by_whole_weeks():
    original = _conversation(
        ("patient", "oi, aqui é a Mariana Lopes, cpf 529.982.247-25, nasci em 14/03/1988"),
        ("agent", "Olá, Mariana! Sua consulta é na sexta, 06/11/2026, e a fatura de R$ 180,00 vence em 22/11."),
        ("patient", "minha filha Conceição vai junto; meu email é mariana.lopes@gmail.com, tel (11) 94417-2286"),
        ("agent", "Certo, Mariana. A Conceição também está marcada. Enviei o boleto de R$ 180,00 para o seu e-mail."),
        ("patient", "moro na Rua Augusta, 1420, CEP 01304-001"))
    scrubber = Scrubber()
    scrubbed = scrubber(original)
    texts = [m.text for m in scrubbed.messages]
    everything = " ".join(texts)
    for planted in ("Mariana", "Lopes", "529.982.247-25", "14/03/1988", "Conceição", "mariana.lopes@gmail.com",
                    "94417-2286", "Augusta", "1420", "01304-001", "R$ 180,00", "06/11/2026", "22/11"):
        assert planted not in everything, planted
    first = texts[0].split("aqui é a ")[1].split(",")[0].split()[0]  # the stand-in for Mariana
    assert texts[1].startswith(f"Olá, {first}!") and texts[3].startswith(f"Certo, {first}.")
    kid = texts[2].split("minha filha ")[1].split()[0]
    assert kid in texts[3]  # the daughter keeps her stand-in too
    amounts = [t.split("R$ ")[1][:6] for t in (texts[1], texts[3])]
    assert amounts[0] == amounts[1]  # the same amount, the same stand-in
    # One offset of whole weeks for the conversation: the message times and the text's dates move together.
    offset = scrubbed.messages[0].sent_at - original.messages[0].sent_at
    assert offset.days % 7 == 0 and offset.days != 0
    appointment = datetime(2026, 11, 6) + offset
    assert appointment.strftime("%d/%m/%Y") in texts[1] and "sexta" in texts[1]  # still a Friday
    report = scrubber.report()
    assert report["replaced"]["name"] >= 5 and report["replaced"]["date"] == 3 and report["replaced"]["cpf"] == 1
    assert {"email", "phone", "address", "amount"} <= set(report["replaced"])


def test_the_clinic_s_words_and_its_staff_are_kept():
    scrubbed = Scrubber()(_conversation(
        ("patient", "bom dia"), ("agent", "Bom dia! Sua consulta com a Dra. Paula Reis está confirmada. Até lá!")))
    assert [m.text for m in scrubbed.messages] == ["bom dia",
                                                    "Bom dia! Sua consulta com a Dra. Paula Reis está confirmada. Até lá!"]


def test_names_come_from_senders_first_name_words_and_cues():
    names = conversation_names(_conversation(("patient", "oi"), ("patient", "my son Dwayne and Beatriz Almeida"),
                                             ("agent", "Dr. Reis will call, Sra. Aparecida")))
    assert "Mariana Lopes" in names and "Beatriz Almeida" in names and "Dwayne" in names and "Aparecida" in names
    assert "Reis" not in names


def test_an_import_scrubs_by_default_unless_the_judge_is_local_and_writes_the_report(tmp_path, monkeypatch, capsys):
    source = str(SAMPLES / "whatsapp" / "android-pt-BR.txt")
    monkeypatch.setenv("CONVOEVAL_JUDGE_MODEL", "gpt-5-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    assert main(["import", source, "--agent-name", "Clínica Sorriso", "--out", str(tmp_path / "hosted")]) == 0
    assert "scrubbed: " in capsys.readouterr().out
    folder = tmp_path / "hosted"
    saved = " ".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file() and p.suffix != ".parquet")
    for planted in ("Mariana", "123.456.789-09", "22/11/2026"):
        assert planted not in saved, planted
    record = json.loads((folder / "import.json").read_text())
    assert record["scrub"]["scrubbed"] is True and record["scrub"]["replaced"]["cpf"] == 1
    assert load_results(folder).meta["scrubbed"] is True

    monkeypatch.setenv("CONVOEVAL_JUDGE_MODEL", "local")
    assert main(["import", source, "--agent-name", "Clínica Sorriso", "--out", str(tmp_path / "local")]) == 0
    record = json.loads((tmp_path / "local" / "import.json").read_text())
    assert record["scrub"] == {"scrubbed": False}
    assert "Mariana" in (tmp_path / "local" / "data" / "transcripts.csv").read_text(encoding="utf-8")


def test_the_original_text_is_kept_only_when_asked(tmp_path):
    source = str(SAMPLES / "whatsapp" / "ios-es.txt")
    assert main(["import", source, "--agent-name", "Clínica Sonrisa", "--scrub", "--keep-original",
                 "--out", str(tmp_path / "kept")]) == 0
    payload = json.loads(next((tmp_path / "kept" / "runs").glob("*.json")).read_text())
    assert "Javier" in " ".join(payload["production"]["original_texts"])
    assert payload["production"]["source_file"].endswith("ios-es.txt")
    assert "Javier" not in " ".join(r["text"] for r in payload["transcripts"])


def test_every_sample_scrubs_without_an_error():
    scrubber = Scrubber()
    for path in sorted(SAMPLES.rglob("*")):
        if path.is_file():
            clinic = {"pt-BR": "Clínica Sorriso", "en": "Smile Clinic", "es": "Clínica Sonrisa"}
            name = next((v for k, v in clinic.items() if k in path.name), None)
            for conversation in format_of(path).read(path, ImportSettings(agent_name=name)).conversations:
                assert len(scrubber(conversation).messages) == len(conversation.messages)
    assert scrubber.report()["replaced"]["name"] > 5


@pytest.mark.parametrize("per_locale", [20])
def test_the_planted_corpus_meets_the_targets(per_locale):
    from bench_scrub import measure

    result = measure(per_locale)
    assert result["conversations"] == 3 * per_locale
    assert result["replaced_share"] >= 0.99, result["misses"][:5]
    assert result["clinic_altered_share"] <= 0.01
