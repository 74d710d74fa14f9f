"""Shared by the production tests and scripts/make-production-samples.py: a run's conversations as OTLP JSON."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from convoeval.pipeline.results import read_payloads
from convoeval.telemetry.spans import TraceIds, conversation_trace


def _hex_ids(value: Any) -> Any:
    """OTLP/JSON writes trace and span ids in hex (protobuf's JSON mapping would write base64)."""
    if isinstance(value, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def otlp_json(folder: Path | str, keys: list[str] | None = None) -> dict[str, Any]:
    """The traces convoeval exports for a results folder's conversations, as one OTLP JSON document."""
    memory, ids = InMemorySpanExporter(), TraceIds()
    provider = TracerProvider(id_generator=ids)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("convoeval")
    for payload in read_payloads(folder, keys):
        conversation_trace(tracer, ids, payload, payload.get("calls") or [], ended_at=1_800_000_000.0)
    return _hex_ids(MessageToDict(encode_spans(memory.get_finished_spans())))


def write_otlp_json(folder: Path | str, out: Path, keys: list[str] | None = None) -> Path:
    out.write_text(json.dumps(otlp_json(folder, keys), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return out
