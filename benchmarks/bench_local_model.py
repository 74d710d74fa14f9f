"""Local model: tokens/s of the embedded local model through convoeval vs the same server driven directly.

The embedded llama.cpp server (``convoeval llm serve``) serves one request at a time and is shared by everything
on the machine, so the benchmark makes only ``--pairs`` pairs of calls, alternating: a raw ``POST
/v1/chat/completions`` (httpx) and ``acall_model`` with the local model (cache off), the same simulator-like prompt,
``max_tokens``, temperature 0 and seed each time. Before each call it waits (up to ``--wait`` seconds) for the
server to be idle, so a call does not time someone else's request. Tokens/s is completion tokens (as the server
reports them) over the call's wall time, prompt processing included.

It uses the machine's shared server, started with ``convoeval llm serve`` if none runs (and then stopped
afterwards); a server that was already running is left alone. ``--private`` starts a server of its own instead
(a temporary ``CONVOEVAL_HOME``, ``CONVOEVAL_LOCAL_MODEL`` pointing at the assembled default weights): nobody waits
for it, but while the shared server is generating, two llama.cpp servers on 2 cores slow each other tenfold.

Usage:
    .venv/bin/python benchmarks/bench_local_model.py [--pairs 3] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import REPO, isolated_env, markdown_table, run, save, temp_folder

PROMPT = [
    ("system", ("You are simulating a real patient writing to a clinic's WhatsApp chatbot. Write short messages "
                "(1-3 sentences). Your goal: pay a pending R$150 invoice using Pix. Locale: pt-BR.")),
    # A long answer, so that generation, not prompt processing, dominates each call's time.
    ("user", "Write a long, detailed message (about 150 words) to the clinic chatbot explaining your situation."),
]


def wait_idle(limit: float) -> float:
    """Seconds waited until the local server reports itself idle (``health == ok``), at most ``limit``."""
    from convoeval.llm.local import server_status

    started = time.perf_counter()
    while time.perf_counter() - started < limit and server_status().get("health") != "ok":
        time.sleep(0.5)
    return time.perf_counter() - started


async def direct(base_url: str, model: str, max_tokens: int, seed: int) -> tuple[float, int]:
    """One raw HTTP call: (wall seconds, completion tokens)."""
    import httpx

    body = {"model": model, "messages": [{"role": r, "content": t} for r, t in PROMPT], "max_tokens": max_tokens,
            "temperature": 0, "seed": seed}
    async with httpx.AsyncClient(base_url=base_url, timeout=600) as client:
        started = time.perf_counter()
        response = await client.post("/chat/completions", json=body)
        wall = time.perf_counter() - started
    response.raise_for_status()
    return wall, int(response.json()["usage"]["completion_tokens"])


async def through_convoeval(max_tokens: int, seed: int, trial: int) -> tuple[float, int]:
    """One ``acall_model`` with the local model, cache off: (wall seconds, completion tokens)."""
    from convoeval.llm import SampleIdentity, acall_model
    from convoeval.llm.models import get_model

    model = get_model("simulator", "local")
    identity = SampleIdentity(scenario="bench-local", seed=seed, trial=trial, role="simulator", turn=0)
    started = time.perf_counter()
    result = await acall_model(model, PROMPT, identity=identity, seed=seed, temperature=0, max_tokens=max_tokens,
                              cache="off")
    return time.perf_counter() - started, int(result.completion_tokens or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="pairs of calls, direct then convoeval (default 3)")
    parser.add_argument("--max-tokens", type=int, default=48, help="output tokens per call (default 48)")
    parser.add_argument("--wait", type=float, default=300.0, help="most seconds to wait for an idle server")
    parser.add_argument("--shared", action="store_true", help="the machine's shared server (the default)")
    parser.add_argument("--private", action="store_true",
                        help="a private server on the same GGUF (slow while the shared one is generating)")
    parser.add_argument("--save", default="local_model", help="name of the results file (benchmarks/results/)")
    args = parser.parse_args(argv)

    if not args.private:
        return measure(args, private=False)
    from convoeval._util.paths import state_dir
    from convoeval.llm.local import DEFAULT_WEIGHTS

    weights = state_dir() / "models" / DEFAULT_WEIGHTS.filename  # the user's assembled weights, read only
    overrides = {"CONVOEVAL_LOCAL_MODEL": str(weights)} if weights.is_file() else {}
    with temp_folder("local-model") as folder, isolated_env(folder, **overrides):
        return measure(args, private=True)


def measure(args: argparse.Namespace, *, private: bool) -> int:
    """Alternate direct and ``acall_model`` calls on the local server (started here, and then stopped, if needed)."""
    from convoeval.llm.local import server_status

    convoeval_cli = str(REPO / ".venv" / "bin" / "convoeval")
    started_here = not server_status().get("running")
    if started_here:
        subprocess.run([convoeval_cli, "llm", "serve"], check=True, timeout=900, env=dict(os.environ))
    try:
        status = server_status()
        base_url, name = status["base_url"], status["model_name"]
        samples: dict[str, list[tuple[float, int, float]]] = {"direct HTTP": [], "acall_model": []}
        wait_idle(args.wait)
        run(direct(base_url, name, 8, 999))  # warm-up: the first request loads the weights into the page cache
        for pair in range(args.pairs):
            seed = 1000 + pair  # a fresh seed per pair; both calls of a pair ask the same thing
            waited = wait_idle(args.wait)
            wall, tokens = run(direct(base_url, name, args.max_tokens, seed))
            samples["direct HTTP"].append((wall, tokens, waited))
            waited = wait_idle(args.wait)
            wall, tokens = run(through_convoeval(args.max_tokens, seed, pair))
            samples["acall_model"].append((wall, tokens, waited))
    finally:
        if started_here:
            subprocess.run([convoeval_cli, "llm", "stop"], check=False, timeout=60, env=dict(os.environ))
    rows = [_row(way, calls) for way, calls in samples.items()]
    print(markdown_table(rows))
    server = {k: status.get(k) for k in ("model_name", "n_ctx", "n_threads")}
    save(args.save, {"settings": vars(args), "server": {**server, "private": private},
                     "server_started_by_benchmark": started_here, "rows": rows,
                     "samples": {k: [[round(w, 2), t, round(x, 1)] for w, t, x in v] for k, v in samples.items()}})
    return 0


def _row(way: str, calls: list[tuple[float, int, float]]) -> dict[str, Any]:
    rates = [tokens / wall for wall, tokens, _ in calls if wall > 0]
    return {
        "way": way,
        "calls": len(calls),
        "completion_tokens": sum(t for _, t, _ in calls),
        "median_wall_s": round(statistics.median(w for w, _, _ in calls), 2),
        "median_tokens_per_s": round(statistics.median(rates), 1),
        "tokens_per_s_each": ", ".join(f"{r:.1f}" for r in rates),
        "waited_for_idle_s": round(sum(x for _, _, x in calls), 1),
    }


if __name__ == "__main__":
    sys.exit(main())
