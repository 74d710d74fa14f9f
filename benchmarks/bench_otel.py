"""OpenTelemetry export's cost (issue #38): the same `convoeval run` with export off and on, side by side, and the
export's own work measured directly.

1. **Side by side**: `convoeval run --agent billing` over ``--seeds`` (6 scenarios each) on the fake OpenAI server
   (``--latency`` s per call), alternately without and with ``OTEL_EXPORTER_OTLP_ENDPOINT``, ``--pairs`` times; wall
   and CPU (user + system) of each run process, the machine's load when it started. The collector is a do-nothing
   OTLP/HTTP sink in this process (200 to every POST), so its own work is not counted; ``--endpoint`` sends to a real
   one instead (e.g. a local Phoenix, whose ingestion then shares the machine's cores).
2. **The export alone**: the saved conversations of the last "on" run traced again in one process against the sink:
   CPU (``time.process_time``, every thread) of starting the export, building the traces, and flushing at the end.

Usage:
    .venv/bin/python benchmarks/bench_otel.py [--seeds 1,2,3,4,5] [--pairs 5] [--latency 0.02] [--endpoint URL]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from test_reliability_support import clean_env, llm_responder, run_args  # noqa: E402

from convoeval.testing import FakeOpenAIServer  # noqa: E402


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802 - not a Phoenix: no annotations are posted
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def sink() -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}"


def side_by_side(seeds: str, pairs: int, latency: float, endpoint: str, work: Path) -> list[dict]:
    rows = []
    with FakeOpenAIServer(responder=llm_responder, latency=latency) as server:
        for i in range(pairs):
            for mode in ("off", "on"):
                tmp = work / f"{mode}{i}"
                env = clean_env(tmp, OPENAI_BASE_URL=server.base_url, CONVOEVAL_STORE_URL=f"sqlite:///{tmp / 's.db'}",
                                OTEL_EXPORTER_OTLP_ENDPOINT=endpoint if mode == "on" else None,
                                OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=None)
                load, before, start = os.getloadavg()[0], os.times(), time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "convoeval.cli", *run_args(tmp / "out", "--seed", seeds)],
                                      env=env, capture_output=True, text=True, cwd=REPO)
                wall, after = time.perf_counter() - start, os.times()
                cpu = after.children_user - before.children_user + after.children_system - before.children_system
                assert done.returncode in (0, 1), done.stderr[-2000:]
                rows.append({"mode": mode, "wall": wall, "cpu": cpu, "load": load})
                print(f"{mode:3} wall {wall:6.2f} s  cpu {cpu:6.2f} s  load {load:4.1f}", flush=True)
    return rows


def the_export_alone(folder: Path, endpoint: str) -> dict:
    from convoeval.telemetry import start_traces

    payloads = [json.loads(Path(f).read_text()) for f in sorted(glob.glob(str(folder / "runs" / "*.json")))]
    c0 = time.process_time()
    export = start_traces(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
    c1 = time.process_time()
    for p in payloads:
        export.conversation({k: v for k, v in p.items() if k != "settings"}, p["calls"])
    c2 = time.process_time()
    export.close()
    c3 = time.process_time()
    return {"conversations": len(payloads), "start": c1 - c0, "build": c2 - c1, "close": c3 - c2, "total": c3 - c0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--endpoint", default=None)
    args = parser.parse_args()
    endpoint = args.endpoint or sink()
    with tempfile.TemporaryDirectory() as tmp:
        rows = side_by_side(args.seeds, args.pairs, args.latency, endpoint, Path(tmp))
        for key in ("wall", "cpu"):
            off = statistics.median(r[key] for r in rows if r["mode"] == "off")
            on = statistics.median(r[key] for r in rows if r["mode"] == "on")
            print(f"median {key}: off {off:.2f} s, on {on:.2f} s, {100 * (on - off) / off:+.1f} %")
        alone = the_export_alone(Path(tmp) / f"on{args.pairs - 1}" / "out", sink())
    print("the export alone (CPU s): " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                                 for k, v in alone.items()))


if __name__ == "__main__":
    main()
