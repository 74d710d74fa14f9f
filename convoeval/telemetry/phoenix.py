"""Phoenix's own view of evaluations: span annotations, sent through its REST API after the spans.

OpenTelemetry's ``gen_ai.evaluation.result`` events travel with the spans and any backend keeps them; Phoenix shows
them among a span's events, but its evaluation columns and filters read *annotations*, which OTLP cannot carry. So
when the OTLP endpoint is a Phoenix (it answers ``GET /arize_phoenix_version``), the same evaluations are posted to
``POST /v1/span_annotations`` on the conversation's span, once the spans are flushed (and again while Phoenix has not
stored them yet).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from convoeval.telemetry.evaluations import Evaluation

__all__ = ["annotation", "phoenix_base", "send_annotations"]

#: Annotations per request (Phoenix reads a request's body whole).
BATCH = 500
#: How long to wait for Phoenix to have stored the spans the annotations are on (it stores what it receives in the
#: background; on a loaded 2-core machine, seconds).
WAIT_S = 30.0


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
                sent = _post(client, [dict(a) for a in annotations[start:start + BATCH]])
                if sent.status_code >= 300:
                    return True, f"Phoenix refused the annotations: HTTP {sent.status_code} {sent.text[:120]}"
        except httpx.HTTPError as exc:
            return True, f"Phoenix annotations not sent: {type(exc).__name__}: {exc}"[:200]
    return True, f"{len(annotations)} evaluations as Phoenix annotations (Phoenix {probe.text.strip()})"


def _post(client: httpx.Client, batch: list[dict[str, Any]]) -> httpx.Response:
    """Post one batch synchronously (``sync=true``: Phoenix says what it refused instead of dropping it quietly, as
    its queued path did here), again while it answers 404 for spans it has not stored yet."""
    deadline = time.monotonic() + WAIT_S
    while True:
        sent = client.post("/v1/span_annotations", params={"sync": "true"}, json={"data": batch})
        if sent.status_code != 404 or time.monotonic() > deadline:
            return sent
        time.sleep(0.25)
