"""`convoeval import` speed and peak memory on 10,000 generated conversations, side by side with whatstk.

The conversations are written as WhatsApp Android chat exports (pt-BR: 100 chats of 100 conversations each, split
by silences of two days; 4-12 messages each, some over several lines, media placeholders, attachments, system
lines), and as one CSV table. Each import runs in a fresh process (`convoeval import … --no-scrub` and `--scrub`),
timed from outside (wall) and by its own CPU, with its peak resident memory (`ru_maxrss` of the child). The peer is
whatstk 0.9.1's `df_from_whatsapp` on the same export files (in its own venv, `--whatstk PYTHON`; GPL-3.0, never a
dependency of convoeval): it parses the headers into a DataFrame and nothing more (no roles, media parts, turns,
frames or files written), so it bounds what parsing alone costs.

    .venv/bin/python benchmarks/bench_import.py [--whatstk /tmp/venv-whatstk/bin/python] [--out benchmarks/results/import.json]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PATIENT = ["oi bom dia", "queria saber da minha fatura", "pode mandar o boleto?", "pix pfv", "obrigada!!",
           "qual o horário da consulta?", "consigo remarcar pra semana que vem?", "ok", "<Mídia oculta>",
           "PTT-20261103-WA0003.opus (arquivo anexado)", "to sem o cpf aqui agora\nmando depois"]
AGENT = ["Olá! Sou o assistente financeiro da Clínica Sorriso. 😊\nEncontrei uma fatura em aberto de *R$ 180,00*.\n"
         "Você pode pagar por *Pix*, *boleto* ou *cartão*.", "Pronto! Aqui está o seu código Pix.",
         "Sua consulta é na segunda, 10/11, às 15:30, com a Dra. Paula Reis.", "Remarcado! Até lá.",
         "Recebi seu áudio, mas ainda não consigo ouvir áudios por aqui. Pode me escrever?"]


def write_corpus(folder: Path, conversations: int = 10_000, per_chat: int = 100, seed: int = 7) -> tuple[list[Path], Path]:
    rng = random.Random(seed)
    chats, rows = [], ["conversation_id,role,text,time"]
    for c in range(conversations // per_chat):
        lines = ["01/01/2026 08:00 - As mensagens e as chamadas são protegidas com a criptografia de ponta a ponta."]
        when = datetime(2026, 1, 1, 9)
        for k in range(per_chat):
            when += timedelta(days=2)
            for _ in range(rng.randrange(2, 7)):
                said = [("Paciente %d" % c, rng.choice(PATIENT))] + [("Clínica Sorriso", rng.choice(AGENT))]
                for sender, text in said:
                    when += timedelta(minutes=rng.randrange(1, 5))
                    lines.append(f"{when:%d/%m/%Y %H:%M} - {sender}: {text}")
                    role = "agent" if sender.startswith("Clínica") else "patient"
                    rows.append(f"c{c}-{k},{role},\"{text.replace(chr(10), ' ')}\",{when.isoformat()}")
        path = folder / f"chat-{c:03d}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        chats.append(path)
    table = folder / "messages.csv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return chats, table


_WRAPPER = ("import json, resource, subprocess, sys, time\n"
            "t = time.perf_counter(); done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(json.dumps({'code': done.returncode, 'wall_s': time.perf_counter() - t, 'cpu_s': u.ru_utime + u.ru_stime,"
            " 'peak_rss_mb': u.ru_maxrss / 1024, 'stdout': done.stdout[:300], 'stderr': done.stderr[-2000:]}))\n")


def _child(argv: list[str]) -> dict[str, object]:
    """One command in a fresh process, measured by a wrapper process of its own (its peak memory is its alone)."""
    done = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], capture_output=True, text=True, cwd=REPO)
    measured = json.loads(done.stdout)
    if measured["code"] != 0:
        raise RuntimeError(f"{argv[:4]} failed: {measured['stderr']}")
    return {"wall_s": round(measured["wall_s"], 2), "cpu_s": round(measured["cpu_s"], 2),
            "peak_rss_mb": round(measured["peak_rss_mb"], 1), "stdout": measured["stdout"].strip().splitlines()[0]}


_WHATSTK = """
import sys, time
from whatstk import df_from_whatsapp
n = 0
for path in sys.argv[1:]:
    n += len(df_from_whatsapp(path, hformat="%d/%m/%Y %H:%M - %name:"))
print(f"{n} messages")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--whatstk", metavar="PYTHON", help="a Python with whatstk installed (the peer)")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "import.json"))
    parser.add_argument("-n", type=int, default=10_000)
    parser.add_argument("--only", metavar="WORD", help="run only the imports whose name holds WORD (and the peer)")
    args = parser.parse_args()
    results: dict[str, object] = {"conversations": args.n, "load_before": _uptime()}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        chats, table = write_corpus(folder, args.n)
        cli = [sys.executable, "-m", "convoeval.cli", "import"]
        runs = {
            "whatsapp exports, --no-scrub": cli + [*map(str, chats), "--agent-name", "Clínica Sorriso", "--no-scrub",
                                                    "--split-after", "24h", "--out", str(folder / "o1")],
            "whatsapp exports, --scrub": cli + [*map(str, chats), "--agent-name", "Clínica Sorriso", "--scrub",
                                                 "--out", str(folder / "o2")],
            "csv table, --no-scrub": cli + [str(table), "--no-scrub", "--out", str(folder / "o3")],
        }
        if args.whatstk:
            runs["peer: whatstk df_from_whatsapp (parse only)"] = [args.whatstk, "-c", _WHATSTK, *map(str, chats)]
        if args.only:
            runs = {k: v for k, v in runs.items() if args.only in k or k.startswith("peer")}
        for name, argv in runs.items():
            measured = _child(argv)
            measured["conversations_per_s"] = round(args.n / measured["wall_s"], 1)
            results[name] = measured
            print(f"{name}: {measured}")
    results["load_after"] = _uptime()
    results["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=REPO).stdout.strip()
    Path(args.out).write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
