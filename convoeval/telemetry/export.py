"""A run's trace export: the OpenTelemetry SDK's tracer provider of its own, a batch processor and the OTLP/HTTP
exporter; one trace per conversation as it is saved, flushed at the end with one line saying what was sent.

Imported only when export is on (``convoeval.telemetry.start_traces``). The provider is private to the run: an
application's global OpenTelemetry set-up is neither used nor changed. A collector that is down never fails the
run: the SDK drops what it cannot send after its retries, and the closing line says how many spans failed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.util.re import parse_env_headers

from convoeval import __version__
from convoeval.telemetry import Traces
from convoeval.telemetry.phoenix import annotation, phoenix_base, send_annotations
from convoeval.telemetry.spans import TraceIds, conversation_trace

__all__ = ["TraceExport"]


class _Counting(SpanExporter):
    """The OTLP exporter, counting the spans it sent and those it could not."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner, self.sent, self.failed = inner, 0, 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        result = self.inner.export(spans)
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans)
        else:
            self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class TraceExport(Traces):
    """Send each conversation of one run as a trace to ``endpoint`` (an OTLP/HTTP traces URL).

    Args:
        endpoint: the traces URL (``convoeval.telemetry.traces_endpoint``).
        environ: where the standard headers variables are read (``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS``).
        exporter: the span exporter to use instead of OTLP/HTTP (tests pass an in-memory one).
    """

    def __init__(self, endpoint: str, *, environ: Mapping[str, str] | None = None,
                 exporter: SpanExporter | None = None) -> None:
        env = os.environ if environ is None else environ
        self.endpoint = endpoint
        raw = env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or env.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
        self.headers = dict(parse_env_headers(raw, liberal=True))
        self.ids = TraceIds()
        # Phoenix files traces under this project; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES still apply.
        attributes = {"openinference.project.name": env.get("PHOENIX_PROJECT_NAME") or "convoeval"}
        if not env.get("OTEL_SERVICE_NAME"):
            attributes["service.name"] = "convoeval"
        self.provider = TracerProvider(resource=Resource.create(attributes), id_generator=self.ids,
                                       shutdown_on_exit=False)
        self.exporter = _Counting(exporter or OTLPSpanExporter(endpoint=endpoint, headers=self.headers or None))
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("convoeval", __version__)
        self.conversations = 0
        self.annotations: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()  # the trace id handed to the next root span is the provider's one slot

    def conversation(self, rows: Mapping[str, Sequence[Mapping[str, Any]]], calls: Sequence[Mapping[str, Any]],
                     *, ended_at: float | None = None) -> str | None:
        """Build and queue one conversation's trace; returns its conversation span's id (``None`` if it failed).

        A conversation whose trace cannot be built (a row this module does not understand, a bug here) is counted
        and named in the closing line with its error; the evaluation run it is part of goes on.
        """
        try:
            with self._lock:
                span_id, found = conversation_trace(self.tracer, self.ids, rows, calls,
                                                    ended_at=time.time() if ended_at is None else ended_at)
        except Exception as exc:  # noqa: BLE001 - tracing must not end an evaluation; the closing line names it
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return None
        self.conversations += 1
        self.annotations.extend(annotation(span_id, e) for e in found)
        return span_id

    def close(self, *, annotate: bool = True) -> str:
        """Send what is left, stop the exporter and say in one line what went where."""
        self.provider.force_flush()
        self.provider.shutdown()
        line = (f"traces: {self.conversations} conversation(s), {self.exporter.sent} span(s) sent to "
                f"{self.endpoint}")
        if self.exporter.failed:
            line += f"; {self.exporter.failed} span(s) could not be sent (is the collector up?)"
        if self.errors:
            line += f"; {len(self.errors)} conversation(s) not traced ({self.errors[0]})"
        if annotate and self.annotations and not self.exporter.failed:
            _, said = send_annotations(phoenix_base(self.endpoint), self.annotations, headers=self.headers)
            if said:
                line += f"; {said}"
        return line
