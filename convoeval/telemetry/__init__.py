"""OpenTelemetry export: every conversation of a run as a trace, sent over OTLP/HTTP to a collector or Phoenix.

Off by default and free when off: nothing from OpenTelemetry is imported (nor needs installing: the ``otel`` extra)
unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set or the run asks for it
(``EvalConfig.otel``, ``convoeval run --otel``); ``OTEL_SDK_DISABLED=true`` turns it off whatever asks. ``run_eval``
calls ``start_traces`` before the run and the export's ``conversation`` as each conversation is saved: the trace is
built afterwards from the saved rows (``spans.py``), so the conversation engine knows nothing of it.
docs/integrations.md shows it in Phoenix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from convoeval.errors import ConvoevalError

__all__ = ["DEFAULT_ENDPOINT", "TelemetryError", "Traces", "start_traces", "traces_endpoint"]

#: Where OTLP/HTTP goes when ``--otel`` is given and no endpoint is set (the OpenTelemetry default).
DEFAULT_ENDPOINT = "http://localhost:4318"
TRACES_PATH = "/v1/traces"
_PROTOCOLS = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


class TelemetryError(ConvoevalError, ValueError):
    """An export setting that cannot work (one line); the run has not started."""


class Traces:
    """A run's trace export. This one, what ``start_traces`` returns when export is off, does nothing;
    ``convoeval.telemetry.export.TraceExport`` sends."""

    def conversation(self, rows: Mapping[str, Sequence[Mapping[str, Any]]], calls: Sequence[Mapping[str, Any]],
                     *, ended_at: float | None = None) -> str | None:
        """Trace one finished conversation from its rows and LLM calls; returns its span id (here: none)."""
        return None

    def close(self, *, annotate: bool = True) -> str:
        """Send what is left; one line saying what was sent where (here: nothing, ``""``)."""
        return ""


def traces_endpoint(otel: bool = False, environ: Mapping[str, str] | None = None) -> str | None:
    """The OTLP/HTTP traces URL a run sends its conversations to, or ``None`` when export is off.

    The standard variables, read as the OpenTelemetry SDK reads them: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is the
    whole URL, ``OTEL_EXPORTER_OTLP_ENDPOINT`` a base that ``/v1/traces`` is added to.

    Raises:
        TelemetryError: the endpoint is not an http(s) URL, or the protocol asked for is not OTLP/HTTP protobuf.

    Example:
        >>> traces_endpoint(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:6006"})
        'http://127.0.0.1:6006/v1/traces'
        >>> traces_endpoint(otel=False, environ={}) is None, traces_endpoint(otel=True, environ={})
        (True, 'http://localhost:4318/v1/traces')
    """
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    whole, base = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip(), env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if not (otel or whole or base):
        return None
    if whole:
        url, source = whole, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    else:
        url, source = (base or DEFAULT_ENDPOINT).rstrip("/") + TRACES_PATH, "OTEL_EXPORTER_OTLP_ENDPOINT"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TelemetryError(f"{source}={whole or base!r} is not an http(s) URL such as http://localhost:4318")
    for name in _PROTOCOLS:
        protocol = env.get(name, "").strip()
        if protocol and protocol != "http/protobuf":
            raise TelemetryError(f"{name}={protocol!r}: convoeval sends OTLP over HTTP (http/protobuf); unset it or "
                                 "point the endpoint at the collector's HTTP port (4318; Phoenix: 6006)")
        if protocol:
            break
    return url


def start_traces(otel: bool = False, environ: Mapping[str, str] | None = None) -> Traces:
    """A ``TraceExport`` to the endpoint ``traces_endpoint`` finds; when off, a ``Traces`` that does nothing (and
    nothing of OpenTelemetry imported).

    Raises:
        TelemetryError: as ``traces_endpoint``; export asked for without the SDK (``pip install 'convoeval[otel]'``).
    """
    endpoint = traces_endpoint(otel, environ)
    if endpoint is None:
        return Traces()
    try:
        from convoeval.telemetry.export import TraceExport  # noqa: PLC0415 - loads the OpenTelemetry SDK: only when export is on (start-up budget, tests/test_startup.py)
    except ImportError as exc:
        asked = "--otel" if otel else "OTEL_EXPORTER_OTLP_ENDPOINT is set, so"
        raise TelemetryError(f"{asked} traces go to {endpoint}, which needs the OpenTelemetry SDK: pip install "
                             f"'convoeval[otel]' (or unset the variable, or OTEL_SDK_DISABLED=true) [{exc.name}]") from None
    return TraceExport(endpoint, environ=os.environ if environ is None else environ)
