"""The labelling page in a real headless Chromium (the system's package, driven by Playwright): keyboard only.

Skipped with a reason when Playwright or Chromium is missing here; CI sets ``CONVOEVAL_REQUIRE_BROWSER=1`` (and
``.ci/run`` installs Chromium), so there a missing browser fails instead.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from convoeval.labelling import (
    check_labels,
    choose_conversations,
    import_labels,
    load_folder,
    page_data,
    write_label_page,
)
from tests.label_support import XSS, labelled_run

pytestmark = pytest.mark.browser

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")


def _chromium() -> str | None:
    wanted = os.environ.get("CONVOEVAL_CHROMIUM")
    for name in ([wanted] if wanted else CANDIDATES):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser():
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright, reason = None, "Playwright is not installed (make setup installs the dev extra)"
    executable = _chromium()
    if reason is None and executable is None:
        reason = "no Chromium found (apt-get install chromium, or set CONVOEVAL_CHROMIUM)"
    if reason:
        if os.environ.get("CONVOEVAL_REQUIRE_BROWSER"):
            pytest.fail(f"CONVOEVAL_REQUIRE_BROWSER is set but {reason}")
        pytest.skip(reason)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=executable)
        yield chromium
        chromium.close()


@pytest.fixture
def page_of(browser, tmp_path):
    contexts = []

    def open_page(html: Path, context=None):
        if context is None:
            context = browser.new_context(accept_downloads=True, viewport={"width": 1366, "height": 850})
            contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto(html.as_uri())
        page.errors = errors
        return page

    yield open_page
    for context in contexts:
        context.close()


def _make_page(folder: Path, out: Path, *, n: int = 2, **kwargs) -> tuple[Path, dict]:
    run = labelled_run(folder, n=n, **kwargs)
    frames = load_folder(run)
    write_label_page(page_data(frames, choose_conversations(frames, sample=n), source="clinic-run"), out)
    return run, frames


def _press(page, keys: str) -> None:
    for key in keys:
        page.keyboard.press(key)


def test_label_a_10_criterion_conversation_by_keyboard_reload_export_import(page_of, tmp_path):
    run, frames = _make_page(tmp_path / "run", tmp_path / "page.html", n=2)
    page = page_of(tmp_path / "page.html")
    assert page.is_visible("#ask")  # the name is asked once, first
    page.keyboard.type("Dra. Ana")
    page.keyboard.press("Enter")
    assert page.is_hidden("#ask")

    _press(page, "pfupp")                    # criteria 1-5; each label moves to the next criterion
    _press(page, "kk")                       # from criterion 6 back to 4
    page.keyboard.press("ArrowDown")         # ... and down to 5
    page.keyboard.press("f")                 # criterion 5 becomes fail; on to 6
    page.keyboard.press("n")                 # a note on criterion 6, with a comma and quotes
    page.keyboard.type('said "R$ 150,00" twice')
    page.keyboard.press("Enter")
    _press(page, "pjk")                      # criterion 6 pass -> 7; j -> 8; k -> 7
    _press(page, "ufpp")                     # criteria 7-10
    assert page.inner_text(".phead .count") == "10 of 10 labelled"
    page.keyboard.press("]")                 # the second conversation
    page.keyboard.press("u")
    page.keyboard.press("[")
    assert "Conversation 1 of 2" in page.inner_text(".convnav")

    page.reload()                            # progress lives in the browser
    assert page.is_hidden("#ask") and page.input_value("#rater") == "Dra. Ana"
    assert page.inner_text(".progress .ptext") == "11 of 20 criteria labelled"
    assert page.locator(".crit.is-fail").count() == 3 and page.locator(".crit.is-unsure").count() == 2
    assert page.input_value("#crit-5 textarea") == 'said "R$ 150,00" twice'

    with page.expect_download() as download:
        page.keyboard.press("e")
    saved = tmp_path / "exported.csv"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "labels-clinic-run-Dra.-Ana.csv"
    rows = list(csv.DictReader(saved.open(encoding="utf-8")))
    first, second = choose_conversations(frames, sample=2)["run_id"]  # the page's order
    assert [r["label"] for r in rows if r["conversation"] == first] == \
        ["pass", "fail", "unsure", "pass", "fail", "pass", "unsure", "fail", "pass", "pass"]
    assert [(r["conversation"], r["label"]) for r in rows[10:]] == [(second, "unsure")]
    assert {r["rater"] for r in rows} == {"Dra. Ana"}
    assert rows[5]["note"] == 'said "R$ 150,00" twice'
    assert rows[0]["criterion"] == 'Criterion 0: the agent said "R$ 150,00" <b>0</b>'

    check = check_labels(saved, frames)     # the import path: 0 errors
    assert check.errors == [] and len(check.ratings) == 8
    _, target = import_labels(saved, run, dest=tmp_path / "labels")
    assert target.exists()
    assert page.errors == []


def test_a_script_in_the_transcript_is_shown_as_text(page_of, tmp_path):
    _make_page(tmp_path / "run", tmp_path / "page.html", n=1, agent_text=XSS + " pay *R$ 150,00* by _Pix_ to a_b_c")
    page = page_of(tmp_path / "page.html")
    assert page.evaluate("window.__pwned") is None
    bubble = page.locator(".msg.agent .bubble").first
    assert bubble.inner_text() == XSS + " pay R$ 150,00 by Pix to a_b_c"  # WhatsApp's *bold* and _italic_ only
    assert bubble.locator("strong").inner_text() == "R$ 150,00" and bubble.locator("em").inner_text() == "Pix"
    assert page.locator(".chat img, .chat script").count() == 0
    assert page.locator(".crit .ctext").first.inner_text().endswith("<b>0</b>")  # criterion markup is text too


def test_two_pages_keep_separate_progress(browser, page_of, tmp_path):
    _make_page(tmp_path / "a", tmp_path / "a.html", n=2)
    _make_page(tmp_path / "b", tmp_path / "b.html", n=3)
    first = page_of(tmp_path / "a.html")
    first.keyboard.type("ana")
    first.keyboard.press("Enter")
    _press(first, "ppp")
    second = page_of(tmp_path / "b.html", context=first.context)  # same browser profile, same file:// origin
    assert second.is_visible("#ask") and second.inner_text(".progress .ptext") == "0 of 30 criteria labelled"
    first.reload()
    assert first.inner_text(".progress .ptext") == "3 of 20 criteria labelled"


def test_tools_and_help_open_with_the_keyboard(page_of, tmp_path):
    _make_page(tmp_path / "run", tmp_path / "page.html", n=1)
    page = page_of(tmp_path / "page.html")
    page.keyboard.type("ana")
    page.keyboard.press("Enter")
    assert not page.is_visible(".tool pre")
    page.keyboard.press("t")                 # the tools' arguments and results
    assert '"status": "all"' in page.locator(".tool pre").first.inner_text()
    page.keyboard.press("?")
    assert page.is_visible("#help") and "next conversation" in page.inner_text("#help")
    page.keyboard.press("p")                 # shortcuts are off while help is open
    page.keyboard.press("Escape")
    assert page.is_hidden("#help") and page.inner_text(".phead .count") == "0 of 10 labelled"


def _parroting_page(tmp_path: Path, **kwargs) -> tuple[Path, object]:
    """A page of two conversations; in conversation run-01 the simulated patient repeats the agent word for word."""
    echo = "Sua fatura de cento e cinquenta reais vence amanhã, prefere Pix ou boleto?"
    run = labelled_run(tmp_path / "run", n=2, agent_text=echo, **kwargs)
    saved = run / "runs" / "run-01.json"
    payload = json.loads(saved.read_text(encoding="utf-8"))
    for message in payload["transcripts"]:
        if message["role"] == "patient" and message["turn"] == 2:
            message["text"], message["bubbles"] = echo, [echo]
    saved.write_text(json.dumps(payload), encoding="utf-8")
    frames = load_folder(run)
    write_label_page(page_data(frames, choose_conversations(frames, sample=2), source="clinic-run"),
                     tmp_path / "page.html")
    return run, frames


def test_a_note_typed_before_its_verdict_is_never_dropped_silently(page_of, tmp_path):
    run, frames = _parroting_page(tmp_path)
    page = page_of(tmp_path / "page.html")
    page.keyboard.type("ana")
    page.keyboard.press("Enter")
    page.keyboard.press("n")                  # a note on criterion 1, before any verdict
    page.keyboard.type("=HYPERLINK(\"http://x\") the agent quoted this")
    page.keyboard.press("Escape")
    assert page.inner_text("#crit-0 .pending") == "note, no verdict yet"
    page.keyboard.press("e")                  # export: held, the note is named
    assert page.is_visible("#pending") and "conversation 1, criterion 1: =HYPERLINK" in page.inner_text("#pending")
    page.keyboard.press("Enter")              # give it a verdict: back on that criterion
    assert page.is_hidden("#pending") and "current" in page.get_attribute("#crit-0", "class")
    page.keyboard.press("u")
    page.keyboard.press("n")                  # a note on criterion 2, then a click on its verdict at once
    page.keyboard.type("-1 is what it said")
    page.click("#crit-1 button.choice.fail")
    with page.expect_download() as download:
        page.keyboard.press("e")              # nothing pending: exported at once
    saved = tmp_path / "labels.csv"
    download.value.save_as(saved)
    rows = list(csv.DictReader(saved.open(encoding="utf-8")))
    assert [(r["label"], r["note"]) for r in rows] == [
        ("unsure", "'=HYPERLINK(\"http://x\") the agent quoted this"),  # no formula for a spreadsheet to run
        ("fail", "'-1 is what it said")]
    assert check_labels(saved, frames).errors == []
    page.keyboard.press("j")
    page.keyboard.press("n")
    page.keyboard.type("left without a verdict")
    page.keyboard.press("Escape")
    page.keyboard.press("e")
    with page.expect_download():
        page.click("#export-anyway")          # the labeller's choice, said in the status line
    assert "1 note(s) without a verdict left out" in page.inner_text("#status")
    assert page.errors == []


def test_the_page_says_when_the_simulated_patient_broke_and_needs_no_emoji_font(page_of, tmp_path):
    run, frames = _parroting_page(tmp_path)
    page = page_of(tmp_path / "page.html")
    page.keyboard.type("ana")
    page.keyboard.press("Enter")
    order = list(choose_conversations(frames, sample=2)["run_id"])
    parrot = order.index("run-01") + 1
    if parrot != 1:
        page.keyboard.press("]")
    warning = page.inner_text(".patientwarn")
    assert "The simulated patient broke in this conversation" in warning and "parroting: turn 2" in warning
    other = 2 if parrot == 1 else 1
    page.keyboard.press("]" if other == 2 else "[")
    assert page.locator(".patientwarn").count() == 0  # the faithful patient's conversation has no warning
    text = page.evaluate("document.body.innerText")
    assert not {ch for ch in text if ord(ch) > 0x2193 and ch not in "↔−≥≤"}, "a glyph an ordinary font lacks"
    assert page.errors == []
