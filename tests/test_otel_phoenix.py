"""A run exported to a real Phoenix (`phoenix serve` on loopback, its embedded SQLite in a temporary folder) and read
back through Phoenix's REST API: every conversation, turn, LLM call, tool call, judge and evaluation is there, with the
tokens and scores of the run's frames, and every verdict is a Phoenix annotation on its conversation's span.

Phoenix lives in its own venv (.venv-phoenix, made by `make setup` from requirements/phoenix.txt; requirements/phoenix.in
says why); CONVOEVAL_PHOENIX names another `phoenix` executable. Without one the tests skip, saying so, unless
CONVOEVAL_REQUIRE_PHOENIX=1 (then they fail). The simulator and the judges are the fake OpenAI server.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_otel_support import expected_traces, observed_traces
from test_reliability_support import clean_env, llm_responder, run_args

from convoeval import load_results
from convoeval.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]
PROJECT = "convoeval"
START_S = 300  # Phoenix's first start migrates its database: over a minute on a loaded 2-core machine


def _phoenix() -> str | None:
    named = os.environ.get("CONVOEVAL_PHOENIX")
    if named:
        return named
    own = REPO / ".venv-phoenix" / "bin" / "phoenix"
    return str(own) if own.exists() else shutil.which("phoenix")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server on 127.0.0.1 with an empty SQLite database; yields its base URL."""
    binary = _phoenix()
    if binary is None:
        if os.environ.get("CONVOEVAL_REQUIRE_PHOENIX") == "1":
            pytest.fail("CONVOEVAL_REQUIRE_PHOENIX=1 but no Phoenix: run make setup (.venv-phoenix)")
        pytest.skip("Phoenix is not installed: make setup puts it in .venv-phoenix (or set CONVOEVAL_PHOENIX)")
    home = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(PHOENIX_WORKING_DIR=str(home), PHOENIX_HOST="127.0.0.1", PHOENIX_PORT=str(port),
               PHOENIX_GRPC_PORT=str(_free_port()), PHOENIX_TELEMETRY_ENABLED="false")
    log = (home / "phoenix.log").open("w")
    server = subprocess.Popen([binary, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=home)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                if httpx.get(f"{base}/arize_phoenix_version", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                tail = (home / "phoenix.log").read_text(errors="replace")[-3000:]
                pytest.fail(f"phoenix serve did not come up within {START_S} s (exit {server.poll()}):\n{tail}")
            time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def _get(base: str, path: str, **params: Any) -> Any:
    answer = httpx.get(f"{base}/v1{path}", params=params, timeout=30)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    return answer.json()


def phoenix_spans(base: str) -> list[dict[str, Any]]:
    """Every span of the project, in ``observed_traces``' shape (Phoenix's REST API, page by page)."""
    spans, cursor = [], None
    while True:
        params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        answer = httpx.get(f"{base}/v1/projects/{PROJECT}/spans", params=params, timeout=30)
        if answer.status_code == 404 and not spans:
            return []  # the project appears with its first stored span
        assert answer.status_code == 200, (answer.status_code, answer.text[:300])
        page = answer.json()
        spans += [{"trace_id": s["context"]["trace_id"], "span_id": s["context"]["span_id"],
                   "parent_id": s["parent_id"], "name": s["name"], "kind": s["span_kind"],
                   "attributes": s["attributes"], "events": s["events"]} for s in page["data"]]
        cursor = page.get("next_cursor")
        if not cursor:
            return spans


@pytest.fixture(scope="module")
def exported(phoenix: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`convoeval run` of the billing agent's 6 scenarios (3 conversational, 3 scripted) with export on."""
    tmp = tmp_path_factory.mktemp("run")
    out = tmp / "out"
    with FakeOpenAIServer(responder=llm_responder, latency=0.02) as server:
        env = clean_env(tmp, OPENAI_BASE_URL=server.base_url, CONVOEVAL_STORE_URL=f"sqlite:///{tmp / 'store.db'}",
                        OTEL_EXPORTER_OTLP_ENDPOINT=phoenix, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=None)
        done = subprocess.run([sys.executable, "-m", "convoeval.cli", *run_args(out, "--seed", "1")], env=env,
                              cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: the confused patient's run fails an assertion
    line = next(x for x in done.stdout.splitlines() if x.startswith("traces: "))
    sent = int(line.split(" span(s) sent")[0].rsplit(" ", 1)[1])
    # Phoenix stores what it receives in the background: wait until every span sent is there.
    deadline = time.monotonic() + 60
    while len(spans := phoenix_spans(phoenix)) < sent and time.monotonic() < deadline:
        time.sleep(0.5)
    return {"frames": load_results(out).frames, "spans": spans, "line": line, "sent": sent}


def test_every_conversation_turn_call_and_evaluation_is_in_phoenix(exported):
    assert " 6 conversation(s)" in exported["line"] and "could not be sent" not in exported["line"], exported["line"]
    assert len(exported["spans"]) == exported["sent"]
    expected, observed = expected_traces(exported["frames"]), observed_traces(exported["spans"])
    assert len(expected) == 6 and set(observed) == set(expected)  # one trace per conversation, its id the run_id
    for run_id, wanted in expected.items():
        assert observed[run_id] == wanted, run_id  # turns, LLM calls, tokens, tools, judges, scores, evaluations
    assert {k for w in expected.values() for k in ("tools", "judges") if w[k]} == {"tools", "judges"}


def test_every_verdict_is_a_phoenix_annotation_with_the_frames_score(phoenix, exported):
    assert "evaluations as Phoenix annotations" in exported["line"], exported["line"]
    roots = {s["span_id"]: s for s in exported["spans"] if not s["parent_id"]}
    wanted_count = sum(e["name"] == "gen_ai.evaluation.result" for s in roots.values() for e in s["events"])
    # Phoenix queues annotations and retries those whose span it had not stored yet every 10 s.
    deadline = time.monotonic() + 90
    while True:
        found = _get(phoenix, f"/projects/{PROJECT}/span_annotations", span_ids=list(roots), limit=10000)["data"]
        if len(found) >= wanted_count or time.monotonic() > deadline:
            break
        time.sleep(1)
    for span_id, root in roots.items():
        mine = [a for a in found if a["span_id"] == span_id]
        events = [e["attributes"] for e in root["events"] if e["name"] == "gen_ai.evaluation.result"]
        assert len(mine) == len(events) > 0, root["name"]
        assert Counter((a["name"], a["result"]["score"]) for a in mine) == Counter(
            (e["gen_ai.evaluation.name"], e.get("gen_ai.evaluation.score.value")) for e in events)
        score = next(a for a in mine if a["name"] == "score")
        scores = exported["frames"].scores
        wanted = scores[scores["run_id"] == root["trace_id"]].iloc[0]
        assert (score["result"]["score"], score["result"]["label"]) == (wanted["score"], wanted["status"])
    failed = [a for a in found if a["name"].startswith("assertion:") and a["result"]["label"] == "fail"]
    assert failed and all(a["annotator_kind"] == "CODE" and a["result"]["explanation"] for a in failed)


def _chromium() -> str | None:
    wanted = os.environ.get("CONVOEVAL_CHROMIUM")
    for name in ([wanted] if wanted else ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.browser
def test_phoenix_shows_a_conversation_as_a_trace_with_its_evaluations(phoenix, exported, tmp_path):
    """Phoenix's own trace view in headless Chromium: the turns, the tool calls, the judges and the verdicts as
    annotations. The screenshot goes to CONVOEVAL_PHOENIX_SCREENSHOT when set (docs/img/phoenix-trace.png is one)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed (make setup installs the dev extra)")
    executable = _chromium()
    if executable is None:
        if os.environ.get("CONVOEVAL_REQUIRE_BROWSER"):
            pytest.fail("CONVOEVAL_REQUIRE_BROWSER is set but no Chromium found")
        pytest.skip("no Chromium found (apt-get install chromium, or set CONVOEVAL_CHROMIUM)")
    project = next(p["id"] for p in _get(phoenix, "/projects")["data"] if p["name"] == PROJECT)
    runs = exported["frames"].runs
    trace_id = runs[runs["scenario"] == "billing-conv-confused-patient"]["run_id"].iloc[0]
    shot = Path(os.environ.get("CONVOEVAL_PHOENIX_SCREENSHOT") or tmp_path / "phoenix-trace.png")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{phoenix}/projects/{project}/traces/{trace_id}", timeout=120_000)
        page.get_by_text("judge holistic").first.wait_for(timeout=120_000)
        page.locator("text=/^Annotations/ >> visible=true").first.click()  # the conversation span's, unfolded
        page.locator("text=/^score$/ >> visible=true").first.wait_for(timeout=30_000)
        text = page.inner_text("body")
        page.screenshot(path=str(shot))
        browser.close()
    for shown in ("conversation billing-conv-confused-patient", "turn 1", "execute_tool list_invoices",
                  "execute_tool create_payment_link", "judge rubric", "chat fake-model", "holistic"):
        assert shown in text, shown
    assert shot.stat().st_size > 50_000  # a rendered page, not a blank one
