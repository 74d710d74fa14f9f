"""One finished conversation as an OpenTelemetry trace, built afterwards from its rows with explicit times.

The trace (its id is the conversation's ``run_id``, so the frames find it and it finds the frames)::

    conversation <scenario>             CHAIN  scenario, agent, target, seed, trial, status, score; every verdict
    ├── turn 1                          CHAIN  the patient's message in, the agent's reply out    as an event
    │   ├── chat <simulator model>      LLM    gen_ai.* and llm.* tokens, model, cost
    │   └── execute_tool <tool>         TOOL   the agent's tool call: arguments in, result out
    ├── turn 2 …
    ├── judge rubric                    EVALUATOR  (one per judge and sample, per turn for scripted runs)
    │   └── chat <judge model>          LLM
    └── judge holistic …

Times: an LLM call has its own (``started_at``, ``latency_s``); a message starts where its simulator call started, or
where the previous message ended, and lasts its ``latency_s``; the conversation starts ``duration_s`` before its
judges (or its end). A tool call's own time is not recorded: its span starts with the agent's reply and takes no time.
Attribute names: OpenTelemetry's GenAI conventions (``gen_ai.*``) and OpenInference's (``openinference.span.kind``,
``llm.*``, ``input.value``, ...) that Phoenix reads; ``tests/test_otel.py`` holds them to both packages' constants.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

from convoeval.telemetry.evaluations import Evaluation, evaluations

__all__ = ["EVALUATION_EVENT", "TraceIds", "conversation_trace"]

#: OpenTelemetry's GenAI evaluation event and its attributes.
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVAL_NAME, EVAL_SCORE, EVAL_LABEL, EVAL_EXPLANATION = (
    "gen_ai.evaluation.name", "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label",
    "gen_ai.evaluation.explanation")
ERROR_TYPE = "error.type"
#: GenAI span attributes.
OPERATION, PROVIDER, REQUEST_MODEL, INPUT_TOKENS, OUTPUT_TOKENS, FINISH_REASONS, TOOL_NAME = (
    "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens", "gen_ai.response.finish_reasons", "gen_ai.tool.name")
#: OpenInference span attributes (Phoenix's kinds, token counts, cost, inputs and outputs).
SPAN_KIND, INPUT, OUTPUT, MODEL_NAME, PROMPT_TOKENS, COMPLETION_TOKENS, TOTAL_TOKENS, COST_TOTAL = (
    "openinference.span.kind", "input.value", "output.value", "llm.model_name", "llm.token_count.prompt",
    "llm.token_count.completion", "llm.token_count.total", "llm.cost.total")
OI_TOOL_NAME, TOOL_PARAMETERS = "tool.name", "tool.parameters"

_NS = 1_000_000_000
#: A call that starts this close outside a turn's interval still belongs to it (clock rounding).
_SLACK_S = 0.002


class TraceIds(IdGenerator):
    """An OpenTelemetry ``IdGenerator`` whose next trace id is the conversation's ``run_id`` (32 hex digits).

    ``conversation_trace`` sets ``next_trace_id`` right before it starts a conversation's root span, on the one
    thread that builds traces (``TraceExport`` holds a lock); other ids are random, as the SDK's own generator makes
    them. Imported only when export is on (``convoeval.telemetry.start_traces``), like the rest of this module.
    """

    def __init__(self) -> None:
        self._random = RandomIdGenerator()
        self.next_trace_id: int | None = None

    def generate_span_id(self) -> int:
        return self._random.generate_span_id()

    def generate_trace_id(self) -> int:
        chosen, self.next_trace_id = self.next_trace_id, None
        return chosen if chosen else self._random.generate_trace_id()


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _attrs(values: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes OpenTelemetry accepts: no missing values; lists of plain values; anything else as JSON."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if not _present(value):
            continue
        if isinstance(value, (str, bool, int, float)):
            out[key] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            out[key] = list(value)
        else:
            out[key] = json.dumps(value, ensure_ascii=False, default=str)
    return out


def _ns(seconds: float) -> int:
    return int(seconds * _NS)


def _end(call: Mapping[str, Any]) -> float:
    return float(call["started_at"]) + float(call.get("latency_s") or 0.0)


def _row_times(transcript: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]], start: float
               ) -> list[tuple[float, float]]:
    """Each message's (start, end): from its simulator call when it has one, else after the previous message."""
    voiced = {int(c["turn"]) + 1: c for c in calls if _voices(c)}
    cursor, times = start, []
    for row in transcript:
        call = voiced.get(int(row.get("turn") or 0)) if row.get("role") == "patient" else None
        begin = float(call["started_at"]) if call is not None else cursor
        finish = begin + float(row.get("latency_s") or 0.0) if _present(row.get("latency_s")) else begin
        times.append((begin, finish))
        cursor = finish
    # A message's latency counts more than its model call (the gate's checks, retries): a message ends, at the
    # latest, where the next one's call started, so turns never overlap.
    for i in range(len(times) - 2, -1, -1):
        end = min(times[i][1], times[i + 1][0])
        times[i] = (min(times[i][0], end), end)
    return times


def conversation_trace(tracer: trace.Tracer, ids: TraceIds | None, rows: Mapping[str, Sequence[Mapping[str, Any]]],
                       calls: Sequence[Mapping[str, Any]], *, ended_at: float) -> tuple[str, list[Evaluation]]:
    """Start and end every span of one conversation (its kept attempt) on ``tracer``.

    Args:
        tracer: an OpenTelemetry SDK tracer.
        ids: the tracer provider's ``TraceIds`` (the trace id becomes the ``run_id``), or ``None``.
        rows: the conversation's rows by frame (``ConversationResult.rows``).
        calls: its LLM call records (``ConversationResult.calls``).
        ended_at: when it ended (Unix seconds): the end of a conversation none of whose parts has a time.

    Returns:
        The conversation span's id (16 hex digits) and the evaluations recorded on it as events.
    """
    run = rows["runs"][0]
    run_id = str(run["run_id"])
    mine = {name: [r for r in found if r.get("run_id", run_id) == run_id] for name, found in rows.items()
            if isinstance(found, list)}
    score = (mine.get("scores") or [{}])[0]
    transcript = mine.get("transcripts") or []
    judge_calls = [c for c in calls if c.get("role") == "judge"]
    talk_end = min((float(c["started_at"]) for c in judge_calls), default=ended_at)
    start = min([talk_end - float(run.get("duration_s") or 0.0), *(float(c["started_at"]) for c in calls)])
    times = _row_times(transcript, calls, start)
    end = max([start, *(t[1] for t in times), *(_end(c) for c in calls)])

    if ids is not None and len(run_id) == 32:
        try:
            ids.next_trace_id = int(run_id, 16) or None
        except ValueError:
            ids.next_trace_id = None
    patient = [r for r in transcript if r.get("role") == "patient"]
    agent = [r for r in transcript if r.get("role") == "agent"]
    root = tracer.start_span(f"conversation {run.get('scenario')}", start_time=_ns(start), attributes=_attrs({
        SPAN_KIND: "CHAIN", "convoeval.run_id": run_id, "convoeval.scenario": run.get("scenario"),
        "convoeval.type": run.get("type"), "convoeval.agent": run.get("agent"), "convoeval.target": run.get("target"),
        "convoeval.seed": run.get("seed"), "convoeval.trial": run.get("trial"), "convoeval.status": score.get("status"),
        "convoeval.score": score.get("score"), "convoeval.stop_reason": run.get("stop_reason"),
        "convoeval.goal_completed": run.get("goal_completed"), "convoeval.rubric_passed": score.get("rubric_passed"),
        "convoeval.rubric_total": score.get("rubric_total"), "convoeval.holistic_overall": score.get("holistic_overall"),
        "convoeval.assertion_failures": score.get("assertion_failures"), "convoeval.error": score.get("error"),
        INPUT: patient[0].get("text") if patient else None, OUTPUT: agent[-1].get("text") if agent else None}))
    if score.get("status") == "error":
        root.set_status(trace.Status(trace.StatusCode.ERROR, str(score.get("error") or "error")))
    context = trace.set_span_in_context(root)

    turns = _turn_spans(tracer, context, transcript, times)
    placed = _judge_spans(tracer, context, judge_calls)
    for call in calls:
        if call.get("role") == "judge":
            continue
        parent = _turn_for(call, turns)
        _llm_span(tracer, trace.set_span_in_context(parent) if parent is not None else context, call)
    for span, _, finish in turns.values():
        span.end(end_time=_ns(finish))  # ended after its calls were placed in it
    found = evaluations(mine)
    for evaluation in found:
        root.add_event(EVALUATION_EVENT, _evaluation_attrs(evaluation), timestamp=_ns(end))
    for judge, finish in placed:
        judge.end(end_time=_ns(finish))
    root.end(end_time=_ns(end))
    return f"{root.get_span_context().span_id:016x}", found


def _turn_spans(tracer: Any, context: Any, transcript: Sequence[Mapping[str, Any]],
                times: Sequence[tuple[float, float]]) -> dict[int, tuple[Any, float, float]]:
    """A span per turn (its messages' interval; still open) with a span per tool call of the agent's reply."""
    by_turn: dict[int, list[int]] = {}
    for i, row in enumerate(transcript):
        by_turn.setdefault(int(row.get("turn") or 0), []).append(i)
    turns: dict[int, tuple[Any, float, float]] = {}
    for number, indexes in sorted(by_turn.items()):
        begin, finish = min(times[i][0] for i in indexes), max(times[i][1] for i in indexes)
        said = {transcript[i].get("role"): transcript[i] for i in indexes}
        patient, agent = said.get("patient") or {}, said.get("agent") or {}
        span = tracer.start_span(f"turn {number}", context=context, start_time=_ns(begin), attributes=_attrs({
            SPAN_KIND: "CHAIN", "convoeval.turn": number, INPUT: patient.get("text"), OUTPUT: agent.get("text"),
            "convoeval.signal": patient.get("signal"), "convoeval.agent_latency_s": agent.get("latency_s"),
            "convoeval.tools": list(agent.get("tools") or [])}))
        inner = trace.set_span_in_context(span)
        tool_start = next((times[i][0] for i in indexes if transcript[i].get("role") == "agent"), begin)
        for tool in agent.get("tool_calls") or []:
            name = str(tool.get("name"))
            arguments = json.dumps(tool.get("arguments"), ensure_ascii=False, default=str)
            tool_span = tracer.start_span(f"execute_tool {name}", context=inner, start_time=_ns(tool_start),
                                          attributes=_attrs({SPAN_KIND: "TOOL", OPERATION: "execute_tool",
                                                             TOOL_NAME: name, OI_TOOL_NAME: name,
                                                             TOOL_PARAMETERS: arguments, INPUT: arguments,
                                                             OUTPUT: tool.get("result")}))
            tool_span.end(end_time=_ns(tool_start))
        turns[number] = (span, begin, finish)
    return turns


def _turn_for(call: Mapping[str, Any], turns: Mapping[int, tuple[Any, float, float]]) -> Any:
    """The turn span a call belongs to: a patient message's by its number, any other by when it started; else
    ``None`` (the conversation's)."""
    if _voices(call):
        found = turns.get(int(call["turn"]) + 1)
        if found is not None:
            return found[0]
    started = float(call["started_at"])
    for span, begin, finish in turns.values():
        if begin - _SLACK_S <= started <= finish + _SLACK_S:
            return span
    return None


def _voices(call: Mapping[str, Any]) -> bool:
    """Whether ``call`` wrote a patient message: its ``turn`` is then the message's 0-based index (the LLM patient's
    and the agenda patient's voice; not the agenda's reading of the agent, ``agenda-classify``)."""
    return (call.get("role") == "simulator" and _present(call.get("turn"))
            and "classify" not in str(call.get("extra") or ""))


def _judge_spans(tracer: Any, context: Any, calls: Iterable[Mapping[str, Any]]) -> list[tuple[Any, float]]:
    """A span per judge (rubric, holistic, per turn; per sample) over its LLM calls, with its end (still open)."""
    groups: dict[tuple[str, Any, int], list[Mapping[str, Any]]] = {}
    for call in calls:
        groups.setdefault((str(call.get("extra") or "judge"), call.get("turn"), int(call.get("sample") or 0)),
                          []).append(call)
    spans = []
    for (kind, turn, sample), group in groups.items():
        name = f"judge {kind}" + (f" turn {turn}" if _present(turn) else "") + (f" sample {sample}" if sample else "")
        begin, finish = min(float(c["started_at"]) for c in group), max(_end(c) for c in group)
        span = tracer.start_span(name, context=context, start_time=_ns(begin), attributes=_attrs({
            SPAN_KIND: "EVALUATOR", "convoeval.judge": kind, "convoeval.turn": turn, "convoeval.sample": sample,
            MODEL_NAME: group[0].get("model")}))
        for call in group:
            _llm_span(tracer, trace.set_span_in_context(span), call)
        spans.append((span, finish))
    return spans


def _llm_span(tracer: Any, context: Any, call: Mapping[str, Any]) -> None:
    prompt, completion = call.get("prompt_tokens"), call.get("completion_tokens")
    total = (prompt or 0) + (completion or 0) if _present(prompt) or _present(completion) else None
    span = tracer.start_span(f"chat {call.get('model')}", context=context, start_time=_ns(float(call["started_at"])),
                             kind=trace.SpanKind.CLIENT, attributes=_attrs({
        SPAN_KIND: "LLM", OPERATION: "chat", PROVIDER: call.get("provider"), REQUEST_MODEL: call.get("model"),
        MODEL_NAME: call.get("model"), INPUT_TOKENS: prompt, OUTPUT_TOKENS: completion, PROMPT_TOKENS: prompt,
        COMPLETION_TOKENS: completion, TOTAL_TOKENS: total, COST_TOTAL: call.get("cost_usd"),
        FINISH_REASONS: [call["finish_reason"]] if call.get("finish_reason") else None,
        "convoeval.role": call.get("role"), "convoeval.call": call.get("extra"), "convoeval.turn": call.get("turn"),
        "convoeval.sample": call.get("sample"), "convoeval.cache_hit": call.get("cache_hit"),
        "convoeval.attempts": call.get("attempts"), "convoeval.cost_usd": call.get("cost_usd")}))
    if call.get("error"):
        span.set_status(trace.Status(trace.StatusCode.ERROR, str(call["error"])))
        span.set_attribute(ERROR_TYPE, "llm_error")
    span.end(end_time=_ns(_end(call)))


def _evaluation_attrs(evaluation: Evaluation) -> dict[str, Any]:
    return _attrs({EVAL_NAME: evaluation.name, EVAL_SCORE: evaluation.score, EVAL_LABEL: evaluation.label,
                   EVAL_EXPLANATION: evaluation.explanation, ERROR_TYPE: "evaluation_error" if evaluation.error else None,
                   "convoeval.evaluator": evaluation.annotator, "convoeval.sample": evaluation.identifier or None})
