"""``convoeval run --format markdown`` and ``convoeval compare --format markdown``: the verdict first, what failed
with its evidence, the link to the report; nothing but Markdown on stdout. Models: compare_support's fakes (a
scripted patient and a judge that reads the transcript's symptoms)."""

from __future__ import annotations

import pytest
from compare_support import env, fake_models, run_baseline, seeds  # noqa: F401 - env is a fixture

from convoeval.cli import main
from convoeval.report.markdown import cell

FAULTY = "clinic:billing?faults=invented_payment_url"


def run_markdown_cli(tmp, capsys, *extra: str) -> tuple[int, str]:
    code = main(["run", "--agent", "billing", "--seed", "1000", "--out", str(tmp), "--no-progress",
                 "--format", "markdown", *extra])
    return code, capsys.readouterr().out


def test_a_healthy_run_headlines_pass_and_prints_only_markdown(env, monkeypatch, capsys):  # noqa: F811
    with fake_models(monkeypatch):
        code, out = run_markdown_cli(env / "ok", capsys, "--type", "scripted", "--report-url", "https://ci.example/1")
    assert code == 0
    assert out.startswith("## ✅ convoeval run: PASS\n")
    assert "**3 conversation(s)** against `clinic:billing`: 3 pass, 0 warn, 0 fail, 0 error; mean score 9.0" in out
    assert "did not pass" not in out and "STATUS" not in out  # no table of failures, no console summary
    assert out.rstrip().endswith("📄 [Full report](https://ci.example/1)")


def test_a_faulty_run_lists_what_failed_with_the_assertions_and_the_judges_evidence(env, monkeypatch, capsys):  # noqa: F811
    with fake_models(monkeypatch):
        code, out = run_markdown_cli(env / "bad", capsys, "--target", FAULTY)
    assert code == 0  # no --fail-threshold: the run itself did not fail
    assert out.startswith("## ❌ convoeval run: FAIL\n")
    assert "| FAIL | billing-scripted-pix-en | 1000 | 1 | 0.0 | payment_link_created: expected true, got false |" in out
    assert "- **billing-conv-happy-payment** (seed 1000, trial 1)" in out
    assert "  - assertion `payment_link_created`: expected true, got false" in out
    assert "  - criterion “Agent generated a payment link” — judge's evidence: Turn 1" in out
    assert "| PASS | billing-scripted-human-pt |" in out  # in the folded table of every conversation
    assert f"📄 Full report: `{env / 'bad'}`" in out


def test_a_comparison_headlines_regressed_with_the_candidates_judge_evidence(env, monkeypatch, capsys):  # noqa: F811
    with fake_models(monkeypatch):
        run_baseline(env / "base", n_seeds=8, scenario="billing-conv-happy-payment")
        run_baseline(env / "cand", n_seeds=8, scenario="billing-conv-happy-payment",
                     target="clinic:billing?faults=wrong_amount")
    capsys.readouterr()
    code = main(["compare", str(env / "base"), str(env / "cand"), "--format", "markdown", "--fail-on-regression",
                 "--report-url", "https://ci.example/7"])
    out, err = capsys.readouterr()
    assert code == 1 and "regression(s) statistically supported" in err
    assert out.startswith("## 🔴 convoeval compare: REGRESSED\n\n**")
    assert "| **score** | " in out
    assert "### Regressed" in out and "| criterion | Agent identified the pending invoice and mentioned the amount |" in out
    assert ("- criterion “Agent identified the pending invoice and mentioned the amount” failed in "
            "billing-conv-happy-payment; the judge's evidence: Turn 1") in out
    assert "verdict:" not in out  # not the console lines
    assert out.rstrip().endswith("📄 [Full report](https://ci.example/7)")

    # The same folder on both sides: nothing changed, said first.
    assert main(["compare", str(env / "base"), str(env / "base"), "--format", "markdown"]) == 0
    assert capsys.readouterr().out.startswith("## ⚪ convoeval compare: NO DETECTABLE CHANGE\n")


@pytest.mark.parametrize(("value", "shown"), [
    ("a | b", "a \\| b"), ("two\nlines", "two lines"), (None, "–"), (float("nan"), "–"), ("x" * 300, "x" * 199 + "…"),
])
def test_a_cell_stays_one_cell(value, shown):
    assert cell(value) == shown
