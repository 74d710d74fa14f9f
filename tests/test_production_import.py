"""`convoeval import`: every format's shipped samples in pt-BR, en and es, read into an ordinary results folder; bad
input reported by file and line and skipped; an unrecognised file one line naming the formats; nothing half-written."""

from __future__ import annotations

import json
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from convoeval import load_results
from convoeval.cli import main
from convoeval.production import (
    FORMATS,
    ImportSettingError,
    ImportSettings,
    UnrecognisedFileError,
    format_of,
    import_conversations,
)
from convoeval.production import writing as writing_module
from convoeval.report import render_html

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "production"
CLINIC = {"pt-BR": "Clínica Sorriso", "en": "Smile Clinic", "es": "Clínica Sonrisa"}


def _read(path: Path, **settings: object):
    return format_of(path).read(path, ImportSettings(**settings))  # type: ignore[arg-type]


def _texts(conversation, role: str) -> list[str]:
    return [m.text for m in conversation.messages if m.role == role]


# ── WhatsApp chat exports ──

@pytest.mark.parametrize("platform", ["android", "ios"])
@pytest.mark.parametrize("locale", ["pt-BR", "en", "es"])
def test_every_chat_export_sample_reads_in_its_locale(platform, locale):
    path = SAMPLES / "whatsapp" / f"{platform}-{locale}.txt"
    read = _read(path, agent_name=CLINIC[locale])
    assert format_of(path).name == "whatsapp-export" and read.skipped == []
    first = read.conversations[0]
    assert first.locale == locale
    assert first.messages[0].role == "patient" and any(m.role == "agent" for m in first.messages)
    # System lines (the encryption notice, "this business uses a secure service", "changed their number") are
    # no one's message; the clinic's multi-line messages stay whole.
    everything = " ".join(m.text for c in read.conversations for m in c.messages)
    assert "ponta a ponta" not in everything and "end-to-end" not in everything and "extremo a extremo" not in everything
    assert "mudou de número" not in everything and "Meta" not in everything
    agent = _texts(first, "agent")[0]
    assert "\n" in agent  # three lines of one message
    # A media part for every medium the export mentions (a voice note is audio; iOS says which kind it left out).
    kinds = [p["kind"] for c in read.conversations for m in c.messages for p in m.parts if p["type"] == "media"]
    assert "audio" in kinds or platform == "android" and locale == "en"
    assert all(m.sent_at is not None and m.sent_at.year == 2026 and m.sent_at.month == 11
               for c in read.conversations for m in c.messages)


def test_dates_and_clocks_read_as_each_phone_writes_them():
    en = _read(SAMPLES / "whatsapp" / "android-en.txt", agent_name="Smile Clinic").conversations
    assert en[0].messages[0].sent_at == datetime(2026, 11, 3, 9, 12)  # 11/3/26, 9:12 AM: month first, 12 hours
    assert en[1].messages[0].sent_at == datetime(2026, 11, 14, 16, 2)  # 11/14/26, 4:02 PM (narrow no-break space)
    es = _read(SAMPLES / "whatsapp" / "ios-es.txt", agent_name="Clínica Sonrisa").conversations
    assert es[0].messages[0].sent_at == datetime(2026, 11, 4, 14, 2, 10)  # [4/11/26, 2:02:10 p. m.]: day first
    pt = _read(SAMPLES / "whatsapp" / "android-pt-BR.txt", agent_name="Clínica Sorriso").conversations
    assert pt[0].messages[0].sent_at == datetime(2026, 11, 3, 9, 12)
    # Four days of silence split the chat in two conversations (more than the 24-hour window).
    assert len(pt) == 2 and _texts(pt[1], "patient")[0] == "oi, paguei mas nao chegou a confirmação"


def test_ambiguous_dates_follow_the_clock_or_the_flag(tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("05/06/2026 10:00 - Ana: oi\n05/06/2026 10:01 - Clínica: olá\n", encoding="utf-8")
    day_first = _read(chat, agent_name="Clínica").conversations[0].messages[0].sent_at
    month_first = _read(chat, agent_name="Clínica", date_order="mdy").conversations[0].messages[0].sent_at
    assert (day_first.month, day_first.day) == (6, 5) and (month_first.month, month_first.day) == (5, 6)


def test_media_edits_and_deletions():
    pt = _read(SAMPLES / "whatsapp" / "android-pt-BR.txt", agent_name="Clínica Sorriso").conversations
    patient = [m for m in pt[0].messages if m.role == "patient"]
    assert patient[3].parts[0] == {"type": "media", "kind": "document", "path": "media/omitted-media"}
    assert patient[3].text == "[media omitted]"  # <Mídia oculta>: Android does not say which kind
    assert patient[4].parts[0] == {"type": "media", "kind": "audio", "path": "media/PTT-20261103-WA0003.opus"}
    assert patient[-1].text == "obgd!!"  # "<Mensagem editada>" is not the patient's words
    receipt = [m for m in pt[1].messages if m.parts[0]["type"] == "media"][0]
    assert receipt.parts[0] == {"type": "media", "kind": "image", "path": "media/IMG-20261107-WA0007.jpg",
                                "caption": "comprovante"}
    es = _read(SAMPLES / "whatsapp" / "android-es.txt", agent_name="Clínica Sonrisa").conversations[0]
    assert "Se eliminó este mensaje" not in " ".join(_texts(es, "patient"))  # a deleted message is gone
    ios = _read(SAMPLES / "whatsapp" / "ios-en.txt", agent_name="Smile Clinic").conversations[0]
    assert [p["kind"] for m in ios.messages for p in m.parts if p["type"] == "media"] == ["audio", "image"]


@pytest.mark.parametrize(("name", "clinic", "media"), [("ios-pt-BR.zip", "Clínica Sorriso",
                                                          ["00000011-PHOTO-2026-11-04-14-06-02.jpg"]),
                                                         ("android-es.zip", "Clínica Sonrisa",
                                                          ["PTT-20261103-WA0004.opus"])])
def test_a_zip_export_reads_its_chat_and_names_its_media(name, clinic, media):
    read = _read(SAMPLES / "whatsapp" / name, agent_name=clinic)
    assert read.skipped == [] and read.conversations[0].attributes["media_files"] == media
    paths = [p["path"] for m in read.conversations[0].messages for p in m.parts if p["type"] == "media"]
    assert f"media/{media[0]}" in paths


def test_the_clinic_by_phone_and_a_missing_flag_is_one_line_naming_the_senders(tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("03/11/2026 10:00 - Ana: oi\n03/11/2026 10:01 - +55 11 4000-1234: Olá, Ana!\n", encoding="utf-8")
    roles = [m.role for m in _read(chat, agent_phone="5511 40001234").conversations[0].messages]
    assert roles == ["patient", "agent"]
    with pytest.raises(ImportSettingError, match=r"--agent-name or --agent-phone \(its senders: 'Ana', '\+55 11"):
        _read(chat)
    with pytest.raises(ImportSettingError, match="no sender is 'Clinica X'"):
        _read(chat, agent_name="Clinica X")


# ── Cloud API, OTLP, tables ──

@pytest.mark.parametrize("locale", ["pt-BR", "en", "es"])
def test_cloud_api_webhooks_and_sent_messages(locale):
    read = _read(SAMPLES / "cloud-api" / f"webhooks-{locale}.jsonl")
    assert read.skipped == [] and len(read.conversations) == 2
    first, second = read.conversations
    parts = [p["type"] for c in read.conversations for m in c.messages for p in m.parts]
    assert {"text", "buttons", "reply", "list", "media"} <= set(parts)
    # pt-BR and en: the clinic's reminder template opens the second conversation; es: the patient writes first.
    assert [m.role for m in second.messages][0] == ("patient" if locale == "es" else "agent")
    assert {"read"} <= set(first.statuses.values())
    assert all(m.message_id for c in read.conversations for m in c.messages)


def test_a_redelivered_message_is_kept_as_the_channel_records_it():
    first = _read(SAMPLES / "cloud-api" / "webhooks-pt-BR.jsonl").conversations[0]
    taps = [m for m in first.messages if m.text == "Pix"]
    assert [m.delivery for m in taps] == ["delivered", "redelivered"] and taps[0].message_id == taps[1].message_id
    second = _read(SAMPLES / "cloud-api" / "webhooks-pt-BR.jsonl").conversations[1]
    assert second.messages[0].parts[0]["type"] == "template" and "failed" in second.statuses.values()
    assert second.messages[1].parts[0] == {"type": "media", "kind": "audio", "path": "media/MEDIA5.ogg"}  # a voice note


@pytest.mark.parametrize("locale", ["pt-BR", "en", "es"])
def test_convoeval_traces_as_otlp_json(locale):
    read = _read(SAMPLES / "otlp" / f"convoeval-{locale}.json")
    assert read.skipped == [] and len(read.conversations) == 1
    conversation = read.conversations[0]
    assert conversation.attributes["scenario"].startswith("billing-scripted-")
    assert any(m.tool_calls for m in conversation.messages if m.role == "agent")
    run_id = conversation.attributes["run_id"]
    payload = next(json.loads(p.read_text()) for p in (SAMPLES.parents[1] / "reports" / "example" / "runs").glob("*.json")
                   if json.loads(p.read_text())["runs"][0]["run_id"] == run_id)
    assert [(m.role, m.text) for m in conversation.messages] == [(r["role"], r["text"]) for r in payload["transcripts"]]


def test_other_genai_traces_grouped_by_conversation_id():
    read = _read(SAMPLES / "otlp" / "genai-es.jsonl")
    assert len(read.conversations) == 1  # two traces, one gen_ai.conversation.id
    assert _texts(read.conversations[0], "patient") == ["Hola, quiero cancelar mi cita del viernes", "no gracias"]


@pytest.mark.parametrize("name", ["messages-pt-BR.csv", "messages-en.jsonl", "messages-es.csv"])
def test_tables(name):
    read = _read(SAMPLES / "table" / name)
    assert format_of(SAMPLES / "table" / name).name == "table" and read.skipped == []
    assert all(m.sent_at is not None for c in read.conversations for m in c.messages)
    assert [m.role for m in read.conversations[0].messages][:2] == ["patient", "agent"]


# ── the folder ──

def _import_everything(out: Path) -> None:
    for locale, clinic in CLINIC.items():
        files = [str(p) for p in sorted(SAMPLES.rglob("*")) if p.is_file() and locale in p.name
                 and "whatsapp" not in p.parts] + [str(p) for p in sorted((SAMPLES / "whatsapp").glob(f"*-{locale}.*"))]
        assert main(["import", *files, "--agent-name", clinic, "--agent", "billing",
                     "--out", str(out / locale)]) == 0


def test_every_sample_imports_into_a_folder_load_results_and_the_report_read(tmp_path, capsys):
    _import_everything(tmp_path)
    said = capsys.readouterr().out
    assert "0 line(s) skipped" in said
    for locale in CLINIC:
        result = load_results(tmp_path / locale)
        runs, transcripts = result.frames.runs, result.frames.transcripts
        assert type(result).__name__ == "EvalResult" and len(runs) >= 6
        assert set(runs["source"]) == {"production"} and set(runs["agent"]) <= {"billing"}
        assert set(transcripts["role"]) == {"patient", "agent"} and transcripts["sent_at"].notna().all()
        assert (transcripts.groupby("run_id")["turn"].min() <= 1).all()
        record = json.loads((tmp_path / locale / "import.json").read_text())
        assert record["source"] == "production" and record["skipped"] == [] and set(record["files"]) == set(FORMATS)
        assert "Transcripts" in render_html(result)


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, list[int]]]:
    """A malformed file of each format and the lines that must be reported."""
    chat = tmp_path / "chat.txt"
    chat.write_text("exported by a tool\n03/11/2026 10:00 - Ana: oi\n31/02/2026 10:01 - Ana: ?\n"
                    "03/11/2026 10:02 - Clínica: olá\n", encoding="utf-8")
    hooks = tmp_path / "hooks.jsonl"
    good = (SAMPLES / "cloud-api" / "webhooks-en.jsonl").read_text().splitlines()
    broken = json.loads(good[0])
    broken["entry"][0]["changes"][0]["value"]["messages"][0]["type"] = "hologram"
    hooks.write_text("\n".join([good[0], "{not json", json.dumps(broken), *good[1:]]) + "\n", encoding="utf-8")
    spans = tmp_path / "spans.jsonl"
    spans.write_text((SAMPLES / "otlp" / "genai-es.jsonl").read_text().splitlines()[0] + "\n{\"resourceSpans\": 3\n",
                     encoding="utf-8")
    table = tmp_path / "table.csv"
    table.write_text("conversation_id,role,text,time\nc1,user,oi,2026-11-03T10:00:00\nc1,narrator,hm,\n"
                     "c1,assistant,,\nc1,assistant,olá,yesterday\nc1,assistant,olá!,2026-11-03T10:00:05\n",
                     encoding="utf-8")
    return {"whatsapp-export": (chat, [1, 3]), "cloud-api": (hooks, [2, 3]), "otlp": (spans, [2]),
            "table": (table, [3, 4, 5])}


def test_a_malformed_file_of_each_format_reports_its_lines_and_imports_the_rest(tmp_path, capsys):
    for name, (path, lines) in _bad_files(tmp_path).items():
        out = tmp_path / f"out-{name}"
        assert main(["import", str(path), "--agent-name", "Clínica", "--out", str(out)]) == 0, name
        said = capsys.readouterr().out
        assert f"{len(lines)} line(s) skipped" in said, (name, said)
        for line in lines:
            assert f"skipped {path}:{line}: " in said, (name, line, said)
        assert len(load_results(out).frames.runs) >= 1  # the rest imported
        record = json.loads((out / "import.json").read_text())
        assert [s["line"] for s in record["skipped"]] == lines
        assert record["skipped"][0]["file"] == f"file 1{path.suffix}"  # not its name: a name can name a patient


def test_an_unrecognised_file_is_one_line_naming_the_formats_and_nothing_is_written(tmp_path, capsys):
    odd = tmp_path / "notes.txt"
    odd.write_text("just some notes\nnothing here\n", encoding="utf-8")
    good = SAMPLES / "table" / "messages-en.jsonl"
    with pytest.raises(SystemExit) as stopped:
        main(["import", str(good), str(odd), "--out", str(tmp_path / "out")])
    said = capsys.readouterr().err.strip()
    assert stopped.value.code == 2 and len(said.splitlines()) == 1
    assert said.startswith(f"convoeval: error: {odd}: not a format convoeval imports; it reads a WhatsApp chat export")
    assert "Cloud API" in said and "OTLP JSON" in said and "CSV or JSON Lines" in said
    assert not (tmp_path / "out").exists()
    with pytest.raises(UnrecognisedFileError):
        format_of(odd)


def test_an_interrupted_import_leaves_no_half_written_folder(tmp_path, monkeypatch):
    real = writing_module.write_conversation
    written = []

    def interrupted(folder, key, payload, **kwargs):
        if written:
            raise KeyboardInterrupt  # the second conversation: Ctrl-C
        written.append(key)
        return real(folder, key, payload, **kwargs)

    monkeypatch.setattr(writing_module, "write_conversation", interrupted)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        import_conversations([SAMPLES / "table" / "messages-en.jsonl"], out)
    assert written and not out.exists() and list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_refused_unless_forced(tmp_path, capsys):
    out = tmp_path / "out"
    source = str(SAMPLES / "table" / "messages-es.csv")
    assert main(["import", source, "--out", str(out)]) == 0
    with pytest.raises(SystemExit):
        main(["import", source, "--out", str(out)])
    assert "exists already" in capsys.readouterr().err
    assert main(["import", source, "--out", str(out), "--force"]) == 0


def test_personal_data_in_names_stays_out_of_the_folder_without_keep_original(tmp_path):
    chat = tmp_path / "WhatsApp Chat with Ana Souza.txt"
    chat.write_text("03/11/2026 10:00 - Ana Souza: oi\n03/11/2026 10:01 - Clínica: olá\n", encoding="utf-8")
    import_conversations([chat], tmp_path / "out", ImportSettings(agent_name="Clínica"))
    runs = (tmp_path / "out" / "runs")
    assert "Ana Souza" not in " ".join(p.read_text() for p in runs.glob("*.json")).replace('"text": "oi"', "")
    with zipfile.ZipFile(tmp_path / "x.zip", "w") as archive:
        archive.writestr("media.jpg", b"x")
    with pytest.raises(ImportSettingError, match="without the chat's .txt"):
        import_conversations([tmp_path / "x.zip"], tmp_path / "out2", ImportSettings(agent_name="Clínica"))
    assert not (tmp_path / "out2").exists()
