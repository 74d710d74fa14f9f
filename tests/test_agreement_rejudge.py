"""Re-judging saved transcripts with several judge configurations (convoeval.agreement.rejudge)."""

from __future__ import annotations

import pandas as pd
import pytest
from engine_support import (  # noqa: F401
    CRITERIA,
    conversation,
    holistic,
    isolated_state,
    scenario,
    verdicts,
)

from convoeval import frames as F
from convoeval.agreement.rejudge import judge_label, judged_transcripts, rejudge
from convoeval.stats import binary_agreement, rubric_ratings
from convoeval.testing import FakeChatModel

pytestmark = pytest.mark.usefixtures("isolated_state")


def _frames(*run_ids: str, errored: tuple[str, ...] = ()) -> F.RunFrames:
    transcripts = pd.concat([conversation(r, trial=i + 1) for i, r in enumerate(run_ids)], ignore_index=True)
    runs = F.typed_frame([{"run_id": r, "scenario": "billing-conv-happy-payment", "type": "conversational",
                           "agent": "billing", "status": "error" if r in errored else "completed"}
                          for r in run_ids], F.RUN_SCHEMA)
    return F.RunFrames.from_frames({"runs": runs, "transcripts": transcripts})


def test_each_judge_configuration_judges_every_completed_run_and_is_named():
    frames = _frames("r1", "r2", "r3", errored=("r3",))
    strict = FakeChatModel(model_name="strict", replies=[verdicts(True, False, False), verdicts(True, False, False),
                                                         holistic(goal_completion=3), holistic()])
    lenient = FakeChatModel(model_name="lenient", replies=[verdicts(True, True, True), verdicts(True, True, True),
                                                           holistic(), holistic()])
    out = rejudge(frames, {"strict": strict, "lenient": lenient}, scenarios=[scenario()])
    rubric, scores = out["rubric"], out["holistic"]
    assert set(rubric["run_id"]) == {"r1", "r2"}  # the errored run is not judged again
    assert len(rubric) == 2 * 2 * len(CRITERIA) and len(scores) == 2 * 2
    assert strict.remaining == 0 and lenient.remaining == 0
    assert set(rubric.groupby("judge")["judge_model"].first().items()) == {("strict", "strict"),
                                                                            ("lenient", "lenient")}
    # The two judges disagree on criteria 2 and 3 of both runs (the replies do not depend on which run is judged
    # first): agreement 2/6 overall.
    agreement = binary_agreement(rubric_ratings(rubric, rater="judge"))
    pooled = agreement[(agreement["criterion"] == "(all)") & (agreement["statistic"] == "percent_agreement")]
    assert pooled["value"].item() == pytest.approx(2 / 6)


def test_samples_are_asked_per_judge_and_rubric_or_holistic_can_be_skipped():
    frames = _frames("r1")
    judge = FakeChatModel(model_name="j", replies=[verdicts(True, True, True), verdicts(False, True, True)])
    out = rejudge(frames, [judge], scenarios=[scenario()], samples=2, holistic=False)
    assert sorted(out["rubric"]["sample"].unique().tolist()) == [0, 1]
    assert out["holistic"].empty and "judge" in out["holistic"]
    assert out["rubric"]["judge"].unique().tolist() == ["FakeChatModel"]


def test_bad_judge_lists_are_refused():
    with pytest.raises(ValueError, match="at least one"):
        rejudge(_frames("r1"), {}, scenarios=[scenario()])
    with pytest.raises(ValueError, match="both named 'local'"):
        rejudge(_frames("r1"), [{"provider": "local"}, {"provider": "local"}], scenarios=[scenario()])


def test_judge_labels_and_judged_transcripts():
    assert judge_label({"provider": "local", "structured_method": "json_mode"}) == "local | json_mode"
    assert judge_label({"model": "gpt-5-mini", "temperature": 0.5}) == "gpt-5-mini | temperature=0.5"
    assert judge_label(None) == "default"
    frames = _frames("a", "b", errored=("b",))
    assert set(judged_transcripts(frames)["run_id"]) == {"a"}
