"""The judges: rubric (per-criterion pass/fail), holistic (six 0–10 scores), the scripted per-turn checks and
judge, and the composite score. Prompts are versioned constants in ``prompts``; transcripts reach a judge only
through ``render.render_transcript``.
"""

from convoeval.judges._common import JudgeParseError, error_text, is_judge_error
from convoeval.judges.holistic import ajudge_holistic, judge_holistic, parse_holistic_response
from convoeval.judges.rubric import ajudge_rubric, judge_rubric, parse_rubric_response
from convoeval.judges.scoring import ScoreResult, calculate_score, score_frame, score_scripted
from convoeval.judges.turn import ajudge_turn, check_turn, judge_turn

__all__ = [
    "JudgeParseError",
    "ScoreResult",
    "ajudge_holistic",
    "ajudge_rubric",
    "ajudge_turn",
    "calculate_score",
    "check_turn",
    "error_text",
    "is_judge_error",
    "judge_holistic",
    "judge_rubric",
    "judge_turn",
    "parse_holistic_response",
    "parse_rubric_response",
    "score_frame",
    "score_scripted",
]
