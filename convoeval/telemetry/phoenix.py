"""Phoenix's own view of evaluations: span annotations, sent through its REST API after the spans.

OpenTelemetry's ``gen_ai.evaluation.result`` events travel with the spans and any backend keeps them; Phoenix shows
them among a span's events, but its evaluation columns and filters read *annotations*, which OTLP cannot carry. So
when the OTLP endpoint is a Phoenix (it answers ``GET /arize_phoenix_version``), the same evaluations are posted to
``POST /v1/span_annotations`` on the conversation's span, once the spans are flushed. Phoenix queues them: one whose
span it has not stored yet is retried every 10 s (for 10 minutes), so they show up seconds after the spans. Its
synchronous mode (``sync=true``) took 2.4 s for 405 annotations here, plus the wait for the spans to be stored: more
than the whole 30-conversation run it annotated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.error import HTTPError
from urllib.parse import urlsplit, urlunsplit
from urllib.request import Request, urlopen

from convoeval.telemetry.evaluations import Evaluation

__all__ = ["annotation", "phoenix_base", "send_annotations"]

#: Annotations per request (Phoenix reads a request's body whole).
BATCH = 500


def phoenix_base(endpoint: str) -> str:
    """The server's root from the OTLP traces URL (``http://host:6006/v1/traces`` -> ``http://host:6006``)."""
    parts = urlsplit(endpoint)
    path = parts.path[: -len("/v1/traces")] if parts.path.endswith("/v1/traces") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path.rstrip("/"), "", ""))


def annotation(span_id: str, evaluation: Evaluation) -> dict[str, Any]:
    """One ``SpanAnnotationData`` of Phoenix's REST API."""
    result = {k: v for k, v in (("score", evaluation.score), ("label", evaluation.label),
                                ("explanation", evaluation.explanation)) if v is not None}
    return {"span_id": span_id, "name": evaluation.name, "annotator_kind": evaluation.annotator,
            "result": result or {"label": "unknown"}, "identifier": evaluation.identifier,
            "metadata": {"source": "convoeval"}}


def send_annotations(base: str, annotations: Sequence[Mapping[str, Any]], *, headers: Mapping[str, str],
                     timeout: float = 10.0) -> tuple[bool, str]:
    """Post ``annotations`` when ``base`` is a Phoenix; returns (whether it is one, one line saying what happened).

    A server that does not answer the probe is not taken for a Phoenix (the spans' own line says it was down). The
    standard library's client: two requests per run do not need another HTTP package imported (~0.1 s).
    """
    try:
        with urlopen(Request(f"{base}/arize_phoenix_version", headers=dict(headers)), timeout=timeout) as answer:
            version = answer.read(100).decode("utf-8", "replace").strip()
    except (OSError, ValueError):  # refused, timed out, an HTTP error status (HTTPError is an OSError)
        return False, ""
    try:
        for start in range(0, len(annotations), BATCH):
            body = json.dumps({"data": [dict(a) for a in annotations[start:start + BATCH]]}).encode()
            request = Request(f"{base}/v1/span_annotations", data=body, method="POST",
                              headers={**headers, "Content-Type": "application/json"})
            with urlopen(request, timeout=timeout):
                pass
    except HTTPError as exc:
        return True, f"Phoenix refused the annotations: HTTP {exc.code} {exc.read(120).decode('utf-8', 'replace')}"
    except OSError as exc:
        return True, f"Phoenix annotations not sent: {exc}"[:200]
    return True, f"{len(annotations)} evaluations as Phoenix annotations (Phoenix {version})"
