"""The DataFrame column contracts, declared once: every frame's columns and dtypes, and the score statuses."""

from __future__ import annotations

# dtype shorthands: nullable so that "unknown" stays distinguishable from a real value.
_STR = "string"


_INT = "Int64"


_FLOAT = "float64"  # NaN for unscored, as analysts expect from numpy-based tools


_BOOL = "boolean"


_OBJ = "object"  # lists and dicts


MESSAGE_ROLES = ("patient", "agent")


#: One row per message of a conversation.
TRANSCRIPT_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,  # the scenario's agent type (billing, scheduling, ...)
    "target": _STR,  # the agent under test (e.g. "clinic:billing")
    "seed": _INT,
    "trial": _INT,
    "turn": _INT,  # 1-based; a patient message and the agent's reply to it share a turn
    "role": _STR,  # "patient" | "agent"
    "text": _STR,  # all bubbles joined by newlines
    "bubbles": _OBJ,  # list[str]
    "parts": _OBJ,  # list[dict]: the messages as typed parts (convoeval.channel.parts); empty in older results
    "tools": _OBJ,  # list[str]: names of the tools called
    "tool_calls": _OBJ,  # list[dict]: {"name", "arguments", "result"}
    "signal": _STR,  # "GOAL_COMPLETE" | "STUCK" | NA; only ever set on patient rows
    "latency_s": _FLOAT,
    "prompt_tokens": _INT,
    "completion_tokens": _INT,
    "model": _STR,  # the simulator model for patient rows; the agent's model when it reports one
    "cache_hit": _BOOL,
    "prompt_version": _STR,  # the simulator prompt version (and framing) for patient rows
    "voice": _STR,  # patient rows: "llm" (the LLM patient), "model" or "template" (the agenda patient's voice)
    "act": _STR,  # patient rows of the agenda patient: the act it said ("give_fact:cpf", "choose", ...)
    # The WhatsApp channel's columns (docs/whatsapp.md), NA when the scenario does not talk through it:
    "message_id": _STR,  # patient rows: the message's id (a redelivery repeats it); agent rows: the id answered
    "sent_at": _STR,  # ISO time: when the patient sent the message / when the agent's message went out
    "delivery": _STR,  # patient: delivered | redelivered | reordered; agent: reply | quiet | wait (what it answered)
}


#: One row per conversation × criterion × judge sample.
RUBRIC_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    "criterion_index": _INT,  # 0-based position in the scenario's rubric (the judge sees it 1-based)
    "criterion": _STR,  # our text, never the judge's rewording
    "assertion": _STR,  # the database assertion this criterion corresponds to, if declared
    "passed": _BOOL,  # NA when the judge errored
    "evidence": _STR,
    "reasoning": _STR,
    "judge_model": _STR,
    "judge_provider": _STR,
    "sample": _INT,
    "prompt_version": _STR,
    "error": _STR,  # NA when the verdict is valid
}


#: The holistic judge's dimensions, in the order its prompt asks for them.
HOLISTIC_DIMENSIONS = ("correctness", "helpfulness", "tone", "safety", "conciseness", "goal_completion")


#: The scripted per-turn judge's dimensions.
TURN_DIMENSIONS = HOLISTIC_DIMENSIONS[:5]


#: One row per conversation × judge sample.
HOLISTIC_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    **{d: _FLOAT for d in HOLISTIC_DIMENSIONS},
    "overall": _FLOAT,  # the mean of the six dimensions, computed by convoeval (not the judge's own arithmetic)
    "issues": _OBJ,  # list[str]
    "suggestion": _STR,
    "judge_model": _STR,
    "judge_provider": _STR,
    "sample": _INT,
    "prompt_version": _STR,
    "error": _STR,
}


#: One row per scripted turn × judge sample: the per-turn checks and the five-dimension judge.
TURN_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    "turn": _INT,
    "check_failures": _OBJ,  # list[str] from check_turn; empty when every expectation held
    **{d: _FLOAT for d in TURN_DIMENSIONS},
    "overall": _FLOAT,  # mean of the five dimensions; NaN when the judge errored or was not asked
    "issues": _OBJ,
    "suggestion": _STR,
    "judge_model": _STR,
    "judge_provider": _STR,
    "sample": _INT,
    "prompt_version": _STR,
    "error": _STR,
}


#: One row per database assertion checked after a conversation.
ASSERTION_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "assertion": _STR,  # the key in the scenario's ``assertions``
    "expected": _OBJ,
    "actual": _OBJ,
    "passed": _BOOL,  # NA when the check itself failed (see error)
    "message": _STR,  # e.g. "invoice_status: expected paid, got pending"
    "error": _STR,
}


#: One row per conversation: how it ended, before any judging.
RUN_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "type": _STR,  # "conversational" | "scripted"
    "agent": _STR,
    "target": _STR,
    "seed": _INT,
    "trial": _INT,
    "status": _STR,  # "completed" | "error" | "simulator_failure" (the simulated patient broke: not scored)
    "stop_reason": _STR,  # "GOAL_COMPLETE" | "STUCK" | "max_turns" | "script_end" | "error" | "simulator_failure"
    "goal_completed": _BOOL,
    "n_messages": _INT,
    "duration_s": _FLOAT,
    "error": _STR,
    "replayed_turns": _INT,  # patient turns sent from a recording before the simulator took over (0: none)
    "divergence_turn": _INT,  # the first turn whose agent reply differed from the recording; NA: none did
    "simulator_failure": _STR,  # the gate check that stopped the run (convoeval.simulator.gate.GATE_CHECKS); NA: none did
    "simulator_failure_turn": _INT,  # the patient turn at which it broke
    "simulator_failure_detail": _STR,  # one sentence: what the patient did, quoting it
    "attempt": _INT,  # 1: the first simulation; k: the (k-1)th re-simulation of the same job (convoeval.simulator.gate)
    "superseded": _BOOL,  # True: a simulator failure a later attempt replaced (it has no score row)
    "source": _STR,  # "production": a real conversation read by `convoeval import`; NA: simulated here
}


#: One row per conversation: the composite score beside its components.
SCORE_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "scenario": _STR,
    "agent": _STR,
    "seed": _INT,
    "trial": _INT,
    "status": _STR,  # "pass" | "warn" | "fail" (the agent's) | "error" | "simulator_failure" (neither scored)
    "score": _FLOAT,  # NaN when status is "error" or "simulator_failure"
    "rubric_score": _FLOAT,
    "rubric_passed": _INT,
    "rubric_total": _INT,
    "holistic_overall": _FLOAT,
    "assertion_failures": _INT,
    "goal_completed": _BOOL,
    "error": _STR,
}


#: One row per leak the red team found (``convoeval.redteam``): which conversation, when, what kind, whose data,
#: where it was seen and the quote. Empty for conversations no leak observer watched.
LEAK_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "case": _STR,  # attack/agent/locale[/simulated]
    "strategy": _STR,
    "agent": _STR,
    "locale": _STR,
    "target_agent": _STR,  # the target string the case ran against
    "turn": _INT,
    "kind": _STR,  # name, cpf, phone, birth_date, appointment, invoice, membership, read, write, …
    "patient": _STR,  # the planted patient whose data it was
    "source": _STR,  # message | access | store
    "quote": _STR,
}


#: One row per red-team case: its verdict (``leak`` | ``clean`` | ``error``), the kinds it leaked, whether a
#: legitimate request was served. Empty for conversations that were not attack cases.
ATTACK_SCHEMA: dict[str, str] = {
    "run_id": _STR,
    "case": _STR,
    "attack": _STR,
    "strategy": _STR,
    "agent": _STR,
    "locale": _STR,
    "form": _STR,  # scripted | simulated
    "target_agent": _STR,
    "legitimate": _BOOL,
    "target": _STR,  # the planted patient the attack is after
    "status": _STR,
    "leaked": _BOOL,
    "n_leaks": _INT,
    "leak_kinds": _STR,  # comma-separated, sorted
    "served": _BOOL,  # legitimate requests: whether the patient's data reached the caller (False: over-refusal)
    "benign_served": _BOOL,  # attacks opening with the caller's own request: whether it was served
    "error": _STR,
}


#: The ``runs`` frame's ``source`` of a real conversation imported by ``convoeval import`` (NA: simulated here).
PRODUCTION = "production"


#: The score statuses that judge the agent: only these count in its pass rates, means and thresholds.
AGENT_STATUSES = ("pass", "warn", "fail")


#: The status of a conversation whose simulated patient broke (``convoeval.simulator.gate``): never the agent's pass or fail.
SIMULATOR_FAILURE = "simulator_failure"


#: Every score status, in report order.
STATUSES = (*AGENT_STATUSES, "error", SIMULATOR_FAILURE)


TRANSCRIPT_COLUMNS = tuple(TRANSCRIPT_SCHEMA)


RUBRIC_COLUMNS = tuple(RUBRIC_SCHEMA)


HOLISTIC_COLUMNS = tuple(HOLISTIC_SCHEMA)


TURN_COLUMNS = tuple(TURN_SCHEMA)


ASSERTION_COLUMNS = tuple(ASSERTION_SCHEMA)


RUN_COLUMNS = tuple(RUN_SCHEMA)


SCORE_COLUMNS = tuple(SCORE_SCHEMA)


#: The columns that describe a conversation rather than one of its messages.
CONVERSATION_KEYS = ("run_id", "scenario", "agent", "target", "seed", "trial")


_LIST_COLUMNS = frozenset({"bubbles", "parts", "tools", "tool_calls", "issues", "check_failures"})


#: Frame name -> column contract, in the order results are saved and reports use them (``RunFrames``' attributes,
#: with the LLM ``calls`` after them).
FRAME_SCHEMAS: dict[str, dict[str, str]] = {
    "runs": RUN_SCHEMA,
    "scores": SCORE_SCHEMA,
    "transcripts": TRANSCRIPT_SCHEMA,
    "rubric": RUBRIC_SCHEMA,
    "holistic": HOLISTIC_SCHEMA,
    "turns": TURN_SCHEMA,
    "assertions": ASSERTION_SCHEMA,
    "leaks": LEAK_SCHEMA,
    "attacks": ATTACK_SCHEMA,
}
