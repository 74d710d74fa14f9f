"""``convoeval compare``: a candidate run now (with replay) or read from a folder, the CI gate, the HTML page, and
one-line usage errors."""

from __future__ import annotations

import pytest
from compare_support import env, fake_models, run_baseline  # noqa: F401 - env is a fixture

from convoeval.cli import main

HAPPY = "billing-conv-happy-payment"


@pytest.fixture
def baseline(env, monkeypatch):  # noqa: F811
    with fake_models(monkeypatch):
        run_baseline(env / "base", n_seeds=8, scenario=HAPPY)
        yield env


def test_a_faulted_candidate_run_now_fails_the_gate_and_names_what_regressed(baseline, monkeypatch, capsys):
    tmp = baseline
    with fake_models(monkeypatch):
        code = main(["compare", str(tmp / "base"), "--candidate-target", "clinic:billing?faults=wrong_amount",
                     "--replay", "--out", str(tmp / "cand"), "--fail-on-regression", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "verdict: REGRESSED" in out
    assert "regressed criterion: Agent identified the pending invoice and mentioned the amount" in out
    assert "replay: 8 of 8 candidate conversation(s) diverged" in out
    assert "regression(s) statistically supported" in err and "criterion Agent identified the pending" in err
    page = (tmp / "cand" / "compare.html").read_text(encoding="utf-8")
    assert "REGRESSED" in page and "data:image/png;base64" in page and "diverged at turn 1" in page

    # The same comparison from the two folders, without the gate: exit 0, same verdict.
    assert main(["compare", str(tmp / "base"), str(tmp / "cand"), "--html", str(tmp / "again.html")]) == 0
    assert "verdict: REGRESSED" in capsys.readouterr().out and (tmp / "again.html").exists()


def test_an_aa_run_passes_the_gate(baseline, monkeypatch, capsys):
    tmp = baseline
    with fake_models(monkeypatch):
        code = main(["compare", str(tmp / "base"), "--aa", "--out", str(tmp / "aa"), "--fail-on-regression",
                     "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "verdict: NO DETECTABLE CHANGE" in out
    assert "candidate: clinic:billing ran 8 conversation(s)" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["compare", "{base}"], "give exactly one candidate"),
    (["compare", "{base}", "{base}", "--aa"], "give exactly one candidate"),
    (["compare", "{base}", "{base}", "--replay"], "--replay needs a candidate run now"),
    (["compare", "{base}/missing", "{base}"], "is not a folder"),
    (["compare", "{base}", "--candidate-target", "nonsense"], "target"),
    (["compare", "{base}", "{base}", "--scenario", "no-such-scenario"], "no conversation"),
])
def test_a_comparison_that_cannot_work_is_one_line_and_exit_2(baseline, capsys, argv, message):
    with pytest.raises(SystemExit) as stop:
        main([a.format(base=baseline / "base") for a in argv])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("convoeval: error:") and message in err and len(err.strip().splitlines()) == 1
