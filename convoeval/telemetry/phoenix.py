"""Phoenix's own view of evaluations: span annotations, sent through its REST API after the spans.

OpenTelemetry's ``gen_ai.evaluation.result`` events travel with the spans and any backend keeps them; Phoenix shows
them among a span's events, but its evaluation columns and filters read *annotations*, which OTLP cannot carry. So
when the OTLP endpoint is a Phoenix (it answers ``GET /arize_phoenix_version``), the same evaluations are posted to
``POST /v1/span_annotations`` on the conversation's span. Phoenix keeps an annotation whose span has not arrived yet
and retries it, so the order of the two does not matter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

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

    A server that does not answer the probe is not taken for a Phoenix (the spans' own line says it was down).
    """
    with httpx.Client(base_url=base, headers=dict(headers), timeout=timeout) as client:
        try:
            probe = client.get("/arize_phoenix_version")
        except httpx.HTTPError:
            return False, ""
        if probe.status_code != 200:
            return False, ""
        try:
            for start in range(0, len(annotations), BATCH):
                sent = client.post("/v1/span_annotations", json={"data": list(annotations[start:start + BATCH])})
                if sent.status_code >= 300:
                    return True, f"Phoenix refused the annotations: HTTP {sent.status_code} {sent.text[:120]}"
        except httpx.HTTPError as exc:
            return True, f"Phoenix annotations not sent: {type(exc).__name__}: {exc}"[:200]
    return True, f"{len(annotations)} evaluations as Phoenix annotations (Phoenix {probe.text.strip()})"
