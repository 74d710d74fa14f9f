"""OpenTelemetry export (convoeval/telemetry/): off and free by default; on, every conversation of a run is a trace
whose turns, LLM calls, tool calls, judges and verdicts match the run's frames (spans caught in memory here; a real
Phoenix in tests/test_otel_phoenix.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_otel_support import expected_traces, observed_traces
from test_reliability_support import clean_env, llm_responder

from convoeval import telemetry
from convoeval.pipeline import ConfigError, EvalConfig, run_eval
from convoeval.telemetry import Traces, start_traces, traces_endpoint
from convoeval.telemetry.evaluations import evaluations
from convoeval.telemetry.export import TraceExport
from convoeval.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]


def plain_span(span: Any) -> dict[str, Any]:
    """An SDK ``ReadableSpan`` in ``observed_traces``' shape."""
    attributes = dict(span.attributes or {})
    return {"trace_id": f"{span.context.trace_id:032x}", "span_id": f"{span.context.span_id:016x}",
            "parent_id": f"{span.parent.span_id:016x}" if span.parent else None, "name": span.name,
            "kind": attributes.get("openinference.span.kind"), "attributes": attributes,
            "events": [{"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events]}


# ── when export is on, and where it goes ──

def test_export_is_off_unless_asked_and_follows_the_standard_variables():
    assert traces_endpoint(environ={}) is None
    assert type(start_traces(environ={})) is Traces  # the one that does nothing (and imports nothing)
    assert traces_endpoint(otel=True, environ={}) == "http://localhost:4318/v1/traces"
    assert traces_endpoint(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:6006/"}) == "http://h:6006/v1/traces"
    assert traces_endpoint(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:1",
                                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://c/otlp/t"}) == "https://c/otlp/t"
    assert traces_endpoint(otel=True, environ={"OTEL_SDK_DISABLED": "true",
                                               "OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:1"}) is None
    assert isinstance(start_traces(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}), TraceExport)


@pytest.mark.parametrize(("environ", "says"), [
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT='localhost:4318' is not an"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
     "OTEL_EXPORTER_OTLP_PROTOCOL='grpc': convoeval sends OTLP over HTTP"),
])
def test_an_endpoint_that_cannot_work_is_one_line_before_anything_runs(environ, says, monkeypatch, tmp_path):
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="^" + says.replace("(", r"\(").replace(")", r"\)")) as caught:
        run_eval(EvalConfig.checked(agent="billing", output_dir=str(out)), progress="off")
    assert "\n" not in str(caught.value)
    assert not out.exists()  # refused before the results folder was made


def test_export_without_the_sdk_installed_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "convoeval.telemetry.export", None)  # as if the otel extra were missing
    with pytest.raises(ConfigError, match=r"^--otel traces go to http://localhost:4318/v1/traces, which needs the "
                                          r"OpenTelemetry SDK: pip install 'convoeval\[otel\]'"):
        EvalConfig.checked(otel=True).traces()
    assert type(EvalConfig.checked().traces()) is Traces  # off: nothing needed


def test_the_otel_setting_is_a_flag_and_a_notebook_parameter():
    assert EvalConfig().otel is False and EvalConfig.checked(otel=True).otel is True
    assert "otel" in EvalConfig.parameter_names()
    from convoeval.cli import build_parser
    from convoeval.cli.config_flags import given_settings

    assert given_settings(build_parser().parse_args(["run", "--otel"])) == {"otel": True}
    assert given_settings(build_parser().parse_args(["run", "--no-otel"])) == {"otel": False}
    with pytest.raises(ConfigError, match="otel must be True or False"):
        EvalConfig.checked(otel="maybe")


# ── what a trace holds ──

@pytest.fixture
def caught(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """Export on, into memory: ``EvalConfig.traces`` gets a ``TraceExport`` whose spans stay in this process."""
    memory = InMemorySpanExporter()

    def start(otel: bool = False, environ: Any = None) -> Traces:
        assert otel, "the run asked for export"
        return TraceExport("http://127.0.0.1:9/v1/traces", environ={}, exporter=memory)  # port 9: never reached

    monkeypatch.setattr(telemetry, "start_traces", start)
    return memory


def test_every_conversation_turn_call_tool_judge_and_verdict_is_in_its_trace(fake_llm, caught, tmp_path):
    """The billing agent's 6 scenarios (3 conversational, 3 scripted) on the fake model, against their frames."""
    fake_llm.responder = llm_responder
    run = run_eval(EvalConfig.checked(agent="billing", seed=1, output_dir=str(tmp_path / "out"), otel=True),
                   progress="off", allow_errors=True)
    spans = [plain_span(s) for s in caught.get_finished_spans()]
    expected, observed = expected_traces(run.frames), observed_traces(spans)
    assert len(expected) == 6 and set(observed) == set(expected)  # the trace id is the conversation's run_id
    for run_id, wanted in expected.items():
        assert observed[run_id] == wanted, run_id
    assert sum(w["tools"] for w in expected.values()) > 0 and sum(w["judges"] for w in expected.values()) > 0
    assert any(line.startswith(f"traces: 6 conversation(s), {len(spans)} span(s) sent to http://127.0.0.1:9")
               for line in run.lines), run.lines
    # A verdict's event says what it is, in OpenTelemetry's names: here a failed assertion of the confused patient.
    events = [e["attributes"] for s in spans for e in s["events"]]
    failed = [e for e in events if e["gen_ai.evaluation.name"].startswith("assertion:")
              and e["gen_ai.evaluation.score.label"] == "fail"]
    assert failed and all(e["gen_ai.evaluation.score.value"] == 0.0 and e["gen_ai.evaluation.explanation"]
                          for e in failed)
    # Each LLM call in the GenAI conventions, its turn's or its judge's child.
    llm = [s for s in spans if s["kind"] == "LLM"]
    assert all(s["attributes"]["gen_ai.operation.name"] == "chat" and s["attributes"]["gen_ai.request.model"]
               == "fake-model" and s["name"] == "chat fake-model" for s in llm)
    parents = {s["span_id"]: s for s in spans}
    assert {parents[s["parent_id"]]["kind"] for s in llm} == {"CHAIN", "EVALUATOR"}
    assert all(parents[s["parent_id"]]["name"].startswith("turn ") for s in spans if s["kind"] == "TOOL")


def test_times_nest_each_span_inside_its_conversation(fake_llm, caught, tmp_path):
    fake_llm.responder = llm_responder
    run_eval(EvalConfig.checked(agent="billing", seed=1, scenario="billing-conv-happy-payment",
                                output_dir=str(tmp_path / "out"), otel=True), progress="off", allow_errors=True)
    spans = caught.get_finished_spans()
    root = next(s for s in spans if s.parent is None)
    assert all(root.start_time <= s.start_time <= s.end_time <= root.end_time for s in spans)
    turns = sorted((s for s in spans if s.name.startswith("turn ")), key=lambda s: s.start_time)
    assert [s.name for s in turns] == [f"turn {k}" for k in range(1, len(turns) + 1)]  # in the order they were said
    assert all(a.end_time <= b.start_time for a, b in zip(turns, turns[1:], strict=False))


def test_a_verdict_that_could_not_be_reached_keeps_no_score():
    rows = {"scores": [{"status": "error", "score": float("nan"), "error": "judge: timeout"}],
            "rubric": [{"criterion": "Agent offered Pix", "criterion_index": 0, "passed": None, "sample": 0,
                        "error": "the judge's reply is not JSON"}],
            "assertions": [{"assertion": "paid", "passed": True, "message": "paid: true as expected"}]}
    found = {e.name: e for e in evaluations(rows)}
    assert (found["score"].score, found["score"].label) == (None, "error")
    assert (found["rubric: Agent offered Pix"].score, found["rubric: Agent offered Pix"].label) == (None, "error")
    assert "not JSON" in (found["rubric: Agent offered Pix"].explanation or "")
    assert (found["assertion: paid"].score, found["assertion: paid"].label) == (1.0, "pass")


def test_a_collector_that_is_down_does_not_fail_the_run_and_is_named(fake_llm, tmp_path, monkeypatch):
    fake_llm.responder = llm_responder
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")  # nothing listens (discard port)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    run = run_eval(EvalConfig.checked(agent="billing", seed=1, scenario="billing-scripted-pix-en",
                                      output_dir=str(tmp_path / "out")), progress="off")
    assert run.exit_code == 0
    line = next(line for line in run.lines if line.startswith("traces: "))
    assert "0 span(s) sent to http://127.0.0.1:9/v1/traces" in line and "could not be sent" in line, line


# ── the names, from the conventions' own packages ──

def test_the_attribute_names_are_the_conventions_own():
    from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes, ToolCallAttributes  # noqa: F401
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as G

    from convoeval.telemetry import spans as S

    assert (S.EVAL_NAME, S.EVAL_SCORE, S.EVAL_LABEL, S.EVAL_EXPLANATION) == (
        G.GEN_AI_EVALUATION_NAME, G.GEN_AI_EVALUATION_SCORE_VALUE, G.GEN_AI_EVALUATION_SCORE_LABEL,
        G.GEN_AI_EVALUATION_EXPLANATION)
    assert (S.OPERATION, S.PROVIDER, S.REQUEST_MODEL, S.INPUT_TOKENS, S.OUTPUT_TOKENS, S.FINISH_REASONS,
            S.TOOL_NAME) == (G.GEN_AI_OPERATION_NAME, G.GEN_AI_PROVIDER_NAME, G.GEN_AI_REQUEST_MODEL,
                             G.GEN_AI_USAGE_INPUT_TOKENS, G.GEN_AI_USAGE_OUTPUT_TOKENS, G.GEN_AI_RESPONSE_FINISH_REASONS,
                             G.GEN_AI_TOOL_NAME)
    assert G.GenAiOperationNameValues.CHAT.value == "chat" and G.GenAiOperationNameValues.EXECUTE_TOOL.value == \
        "execute_tool"
    assert (S.SPAN_KIND, S.INPUT, S.OUTPUT, S.MODEL_NAME, S.PROMPT_TOKENS, S.COMPLETION_TOKENS, S.TOTAL_TOKENS,
            S.COST_TOTAL, S.OI_TOOL_NAME, S.TOOL_PARAMETERS) == (
        SpanAttributes.OPENINFERENCE_SPAN_KIND, SpanAttributes.INPUT_VALUE, SpanAttributes.OUTPUT_VALUE,
        SpanAttributes.LLM_MODEL_NAME, SpanAttributes.LLM_TOKEN_COUNT_PROMPT, SpanAttributes.LLM_TOKEN_COUNT_COMPLETION,
        SpanAttributes.LLM_TOKEN_COUNT_TOTAL, SpanAttributes.LLM_COST_TOTAL, SpanAttributes.TOOL_NAME,
        SpanAttributes.TOOL_PARAMETERS)
    assert {"CHAIN", "LLM", "TOOL", "EVALUATOR"} <= {k.value for k in OpenInferenceSpanKindValues}


# ── free when off ──

_PROBE = """
import json, sys
from convoeval.pipeline import EvalConfig, run_eval
run = run_eval(EvalConfig.checked(agent="billing", seed=1, scenario="billing-scripted-pix-en",
                                  output_dir=sys.argv[1]), progress="off")
print(json.dumps({"exit": run.exit_code, "lines": run.lines,
                  "loaded": sorted(m for m in sys.modules if m.startswith(("opentelemetry.exporter",
                                                                           "convoeval.telemetry.")))}))
"""


@pytest.mark.parametrize("on", [False, True])
def test_a_run_without_export_loads_none_of_it(on, tmp_path):
    """Off: a whole run loads neither the OTLP exporter nor convoeval.telemetry's export (only the package's no-op).
    On: it does (the probe sees). The SDK itself is not probed: langsmith imports it wherever it is installed."""
    with FakeOpenAIServer(responder=llm_responder) as server:
        env = clean_env(tmp_path, OPENAI_BASE_URL=server.base_url, CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 's.db'}",
                        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9" if on else None,
                        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=None, OTEL_EXPORTER_OTLP_TIMEOUT="1")
        done = subprocess.run([sys.executable, "-c", _PROBE, str(tmp_path / "out")], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["exit"] == 0
    if on:
        assert "opentelemetry.exporter.otlp.proto.http" in seen["loaded"]
        assert "convoeval.telemetry.export" in seen["loaded"]
        assert any(line.startswith("traces: 1 conversation(s)") for line in seen["lines"])
    else:
        assert seen["loaded"] == [] and not any(line.startswith("traces:") for line in seen["lines"])


def test_an_agent_s_llm_call_sits_in_its_turn_with_its_cost_and_a_failed_call_is_an_error():
    """A synthetic conversation: an LLM agent's call lands in the turn whose reply it made (by time), with the call's
    cost in both conventions; a failed judge call is an ERROR span; tool calls are children of their turn."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from convoeval.telemetry.spans import TraceIds, conversation_trace

    memory, ids = InMemorySpanExporter(), TraceIds()
    provider = TracerProvider(id_generator=ids)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    keys = {"run_id": "ab" * 16, "scenario": "s", "agent": "billing", "seed": 1, "trial": 1}
    rows = {"runs": [{**keys, "type": "conversational", "duration_s": 3.0}],
            "scores": [{**keys, "status": "fail", "score": 4.0}],
            "transcripts": [{**keys, "turn": 1, "role": "patient", "text": "hi", "latency_s": 1.0},
                            {**keys, "turn": 1, "role": "agent", "text": "hello", "latency_s": 1.5,
                             "tool_calls": [{"name": "list_invoices", "arguments": {"cpf": "1"}, "result": "[]"}]}]}
    calls = [{"role": "simulator", "model": "m", "provider": "p", "turn": 0, "extra": "chat", "started_at": 100.0,
              "latency_s": 1.0, "prompt_tokens": 10, "completion_tokens": 2},
             {"role": "agent", "model": "gpt-5-mini", "provider": "openai", "turn": 1, "started_at": 101.2,
              "latency_s": 1.0, "prompt_tokens": 1000, "completion_tokens": 100, "cost_usd": 0.00045},
             {"role": "judge", "model": "m", "provider": "p", "extra": "rubric", "sample": 0, "started_at": 103.0,
              "latency_s": 0.5, "error": "timeout after 3 attempts"}]
    span_id, found = conversation_trace(provider.get_tracer("t"), ids, rows, calls, ended_at=104.0)
    spans = {s.name: s for s in memory.get_finished_spans()}
    root = spans["conversation s"]
    assert f"{root.context.trace_id:032x}" == "ab" * 16 and f"{root.context.span_id:016x}" == span_id
    assert root.start_time == 100 * 10**9 and root.end_time == int(103.5 * 10**9)  # its talk, then its judge
    agent_call = spans["chat gpt-5-mini"]
    assert agent_call.parent.span_id == spans["turn 1"].context.span_id
    assert agent_call.attributes["llm.cost.total"] == 0.00045 == agent_call.attributes["convoeval.cost_usd"]
    assert agent_call.attributes["gen_ai.usage.input_tokens"] == 1000 == agent_call.attributes["llm.token_count.prompt"]
    assert spans["execute_tool list_invoices"].parent.span_id == spans["turn 1"].context.span_id
    assert spans["execute_tool list_invoices"].attributes["input.value"] == '{"cpf": "1"}'
    judge_call = next(s for s in memory.get_finished_spans()
                      if s.name == "chat m" and s.attributes["convoeval.role"] == "judge")
    assert judge_call.status.status_code.name == "ERROR" and judge_call.status.description == "timeout after 3 attempts"
    assert judge_call.parent.span_id == spans["judge rubric"].context.span_id
    assert [(e.name, e.score, e.label) for e in found] == [("score", 4.0, "fail")]


def test_a_conversation_that_cannot_be_traced_is_named_and_the_others_still_are():
    memory = InMemorySpanExporter()
    export = TraceExport("http://127.0.0.1:9/v1/traces", environ={}, exporter=memory)
    assert export.conversation({"runs": []}, []) is None  # no run row: nothing to hang a trace on
    keys = {"run_id": "cd" * 16, "scenario": "s"}
    assert export.conversation({"runs": [{**keys, "duration_s": 1.0}], "scores": [{**keys, "status": "pass",
                                                                                  "score": 9.0}]}, [], ended_at=5.0)
    line = export.close(annotate=False)
    assert line.startswith("traces: 1 conversation(s), 1 span(s) sent to http://127.0.0.1:9/v1/traces")
    assert "; 1 conversation(s) not traced (IndexError: list index out of range)" in line, line
