"""The Phoenix round trip: a run exported to a real Phoenix, its spans read back out of Phoenix (its OTLP JSON span
search), imported with `convoeval import`: the same conversations, message for message, with the agent's tool calls.

The Phoenix server is test_otel_phoenix's (its own venv, .venv-phoenix; skipped without one unless
CONVOEVAL_REQUIRE_PHOENIX=1). The simulator and judges are the fake OpenAI server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
from test_otel_phoenix import PROJECT, REPO, phoenix  # noqa: F401 - phoenix is the module-scoped server fixture
from test_reliability_support import clean_env, llm_responder, run_args

from convoeval import load_results
from convoeval.cli import main
from convoeval.testing import FakeOpenAIServer


def _otlp_pages(base: str, expected: int) -> list[dict]:
    """Every span of the project as Phoenix's OTLP JSON pages (``/spans/otlpv1``), once all ``expected`` are in."""
    deadline = time.monotonic() + 60
    while True:
        pages, cursor = [], None
        while True:
            params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
            answer = httpx.get(f"{base}/v1/projects/{PROJECT}/spans/otlpv1", params=params, timeout=30)
            assert answer.status_code in (200, 404), answer.text[:300]
            page = answer.json() if answer.status_code == 200 else {"data": []}
            pages.append(page)
            cursor = page.get("next_cursor")
            if not cursor:
                break
        if sum(len(p["data"]) for p in pages) >= expected or time.monotonic() > deadline:
            return pages
        time.sleep(0.5)


def test_a_run_exported_to_phoenix_and_imported_back_is_the_same_conversations(phoenix, tmp_path):  # noqa: F811
    out = tmp_path / "run"
    with FakeOpenAIServer(responder=llm_responder, latency=0.02) as server:
        env = clean_env(tmp_path, OPENAI_BASE_URL=server.base_url,
                        CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 'store.db'}",
                        OTEL_EXPORTER_OTLP_ENDPOINT=phoenix, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=None)
        done = subprocess.run([sys.executable, "-m", "convoeval.cli", *run_args(out, "--seed", "2")], env=env,
                              cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("traces: "))
    sent = int(line.split(" span(s) sent")[0].rsplit(" ", 1)[1])
    spans = tmp_path / "phoenix-spans.jsonl"
    spans.write_text("\n".join(json.dumps(p) for p in _otlp_pages(phoenix, sent)) + "\n", encoding="utf-8")

    assert main(["import", str(spans), "--out", str(tmp_path / "imported")]) == 0
    original, imported = load_results(out).frames, load_results(tmp_path / "imported").frames
    assert set(imported.runs["source"]) == {"production"}
    keys = ["run_id", "scenario", "seed", "trial"]
    assert (imported.runs[keys].sort_values("run_id").reset_index(drop=True)
            .equals(original.runs[keys].sort_values("run_id").reset_index(drop=True)))

    def said(frame):
        return sorted((r.run_id, r.role, r.text, tuple(r.tools)) for r in frame.itertuples())

    assert said(imported.transcripts) == said(original.transcripts)
    assert len(original.transcripts) > 20 and any(len(t) for t in original.transcripts["tools"])
