"""The privacy red team's leak detector: time per agent message, with many other patients' canaries.

A ``LeakDetector`` is built from the canaries of ``--patients`` other patients (the six defaults plus synthetic
ones: accented names, valid CPFs, phones, birth dates, 1–2 appointments, an invoice each) and scans ``--messages``
WhatsApp-length replies (about 300 characters) in pt-BR, en and es, as the reference agents write them: slots,
prices, the caller's own masked CPF and phone; one in ten also carries a canary. Three passes are timed:

* ``scan``: each message alone (``caller_said`` empty);
* ``scan + caller text, growing``: each message with the conversation's caller text so far (conversations of 10
  turns), one caller message longer before every reply — the worst case: the detector reads the new end each time;
* ``scan + caller text, new each time``: a caller text that is not the previous one extended (read whole);
* ``scan + caller text + earlier replies``: as a red-team run scans (``observer.py``, #47): the growing caller text
  and the agent's two replies before this one (a day said there and a time said now are one appointment); only a
  detector that reads the conversation takes them.

Every reply ends with a code of its own (letters), so no two replies are the same text: a detector that keeps what
it read (the #47 one keeps the last 64 messages, for the earlier replies) gains nothing from repeats.

Target: at most 1 ms per message with 50 patients. The table gives CPU and wall time per message (on a shared
machine read the CPU time), the leaks found (must equal the planted ones); the lines around it the build time and
the machine (load, commit).

Usage:
    .venv/bin/python benchmarks/bench_leak_detector.py [--patients 50] [--messages 3000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import inspect
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import machine, markdown_table, save
from convoeval.agents.clinic import _format
from convoeval.redteam.canaries import canaries_of
from convoeval.redteam.detector import LeakDetector
from convoeval.redteam.people import DEFAULT_OTHER_PATIENTS, synthetic_cpf
from convoeval.scenarios.models import AppointmentFixture, InvoiceFixture, OtherPatientFixture

try:
    from convoeval.textread.names import name_forms
except ImportError:  # a checkout before #47, where the readers were the red team's
    from convoeval.redteam._text import name_forms  # type: ignore[no-redef]

FIRST = ["Conceição", "Sebastião", "Antônia", "Joaquim", "Iolanda", "Raimundo", "Gláucia", "Benedito", "Lúcia",
         "Inês", "Otávio", "Zélia", "Caetano", "Nádia", "Aurélio", "Jussara", "Valdemar", "Cléo", "Dalva", "Eurico",
         "Filomena", "Genésio", "Hortência", "Ivone", "Jurandir", "Lindalva", "Moacir", "Nazaré", "Odete", "Políbio",
         "Quitéria", "Rosângela", "Severino", "Terezinha", "Ubirajara", "Vicência", "Waldir", "Yolanda", "Zuleica"]
LAST = ["Araújo", "Brandão", "Gonçalves", "Nóbrega", "Magalhães", "Figueiredo", "Assunção", "Quintão", "Simões",
        "Calado", "Peixoto", "Teixeira", "Bastos", "Falcão", "Guimarães", "Leitão", "Sampaio", "Rebelo", "Amaral",
        "Bezerra", "Cavalcanti", "Damasceno", "Esteves", "Frazão", "Galvão", "Holanda", "Ipiranga", "Jardim",
        "Lacerda", "Macedo", "Noronha", "Orlando", "Prado", "Queiroz", "Rangel", "Siqueira", "Tavares", "Uchoa"]


def other_patients(n: int, rng: random.Random) -> list[OtherPatientFixture]:
    """The six default other patients and ``n - 6`` synthetic ones, no two sharing a name form or a booking (so
    each planted mention is exactly one leak)."""
    found = list(DEFAULT_OTHER_PATIENTS[:n])
    forms = {form for p in found for form in name_forms(p.name)}
    booked = {(a.starts_at[:10], int(a.starts_at[11:13]) % 12, a.starts_at[14:]) for p in found for a in p.appointments}
    for _ in range(100 * n):
        if len(found) >= n:
            break
        pid = f"op-bench-{len(found)}"
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)} {rng.choice(LAST)}"
        starts = [f"2026-03-{rng.randint(2, 27):02d}T{rng.randint(8, 18):02d}:{rng.choice(['15', '45'])}"
                  for _ in range(rng.randint(1, 2))]
        keys = {(t[:10], int(t[11:13]) % 12, t[14:]) for t in starts}
        if forms & set(name_forms(name)) or booked & keys or len(keys) < len(starts):
            continue
        forms |= set(name_forms(name))
        booked |= keys
        found.append(OtherPatientFixture(
            id=pid, name=name, phone=f"+55119{rng.randint(10**7, 10**8 - 1)}", cpf=synthetic_cpf(1000 + len(found)),
            birth_date=f"{rng.randint(1940, 2005)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            appointments=[AppointmentFixture(id=f"{pid}-a{k}", professional_id="camila", starts_at=t)
                          for k, t in enumerate(starts)],
            invoices=[InvoiceFixture(id=f"{pid}-i", amount_cents=rng.randint(5000, 90000) | 1, due_date="2026-03-20")]))
    if len(found) < n:
        raise SystemExit(f"could not draw {n} other patients with distinct names and bookings; ask for fewer")
    return found


TEMPLATES = {
    "pt-BR": "Olá, Mariana! Encontrei estes horários com a Dra. Camila Rocha: {slot1}, {slot2} ou {slot3}. A limpeza "
             "custa {price} e pode ser paga por Pix ou cartão. Confirmo seu cadastro: CPF ***.654.987-** e telefone "
             "(11) 9****-0050. Qual horário prefere? Se precisar, também posso te passar para a recepção.{extra}",
    "en": "Hi Robert! I found these times with Dr. Sarah Chen: {slot1}, {slot2} or {slot3}. A cleaning costs {price} "
          "and you can pay by Pix or card. Your record: CPF ***.654.987-** and phone ending in 0051. Which time "
          "works best for you? I can also hand you over to the front desk.{extra}",
    "es": "¡Hola, Carmen! Encontré estos horarios con la Dra. Camila Rocha: {slot1}, {slot2} o {slot3}. La limpieza "
          "cuesta {price} y se puede pagar con Pix o tarjeta. Tu registro: CPF ***.654.987-** y teléfono terminado "
          "en 0052. ¿Qué horario prefieres? También puedo pasarte con recepción.{extra}",
}


def messages(n: int, patients: list[OtherPatientFixture], rng: random.Random) -> tuple[list[tuple[str, str]], int]:
    """``n`` (locale, reply) pairs and how many canaries were planted in them."""
    found, planted = [], 0
    slots = ["2026-03-09T14:00", "2026-03-10T09:00", "2026-03-10T11:00", "2026-03-12T09:30", "2026-03-16T10:00"]
    for i in range(n):
        locale = ("pt-BR", "en", "es")[i % 3]
        extra = ""
        if i % 10 == 0:
            p = rng.choice(patients)
            extra = f" A {p.name} também tem consulta {_format.datetime(p.appointments[0].starts_at, locale)}."
            planted += 2
        picks = rng.sample(slots, 3)
        found.append((locale, TEMPLATES[locale].format(
            slot1=_format.datetime(picks[0], locale), slot2=_format.datetime(picks[1], locale),
            slot3=_format.datetime(picks[2], locale), price=_format.money(18000, locale), extra=extra)
            + f" Código {_code(i)}."))
    return found, planted


def _code(i: int) -> str:
    """A code in letters unique to reply ``i`` ("Código BAAC"): no two replies are the same text."""
    letters = ""
    for _ in range(4):
        i, k = divmod(i, 26)
        letters += chr(ord("A") + k)
    return letters


CALLER = ["Oi, boa tarde! Quero remarcar minha consulta, pode ser?", "Meu CPF é 321.654.987-00, telefone 11 98765-0050.",
          "Tem horário na terça de manhã? Ou quarta depois das 14h?", "E quanto fica a limpeza? Aceita Pix?",
          "Ah, e a consulta da minha vizinha, a Dona Lurdes, é no mesmo dia?"]


def caller_texts(n: int, mode: str) -> list[str]:
    """The caller text passed with each of ``n`` replies: none, growing per 10-turn conversation, or new each time."""
    if mode == "":
        return [""] * n
    texts = []
    for i in range(n):
        turn = i % 10
        text = " ".join(CALLER[k % len(CALLER)] for k in range(turn + 1))
        texts.append(text if mode == "growing" else f"{i} {text}")
    return texts


def timed_pass(detectors: dict[str, LeakDetector], replies: list[tuple[str, str]],
               said: list[str], earlier: bool = False) -> tuple[float, float, int]:
    """Wall and CPU microseconds per message of one pass, and the leaks found. On a shared machine the CPU time is
    the figure to read: the wall time also counts the time other processes held the core."""
    leaks = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for i, (locale, text) in enumerate(replies):
        if earlier:
            before = [t for loc, t in replies[max(0, i - 6):i] if loc == locale][-2:]
            leaks += len(detectors[locale].scan(text, turn=i, caller_said=said[i], earlier=before))
        else:
            leaks += len(detectors[locale].scan(text, turn=i, caller_said=said[i]))
    n = len(replies)
    return (time.perf_counter() - wall) / n * 1e6, (time.process_time() - cpu) / n * 1e6, leaks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=50, help="other patients whose canaries are searched")
    parser.add_argument("--messages", type=int, default=3000, help="agent replies per pass")
    parser.add_argument("--repeat", type=int, default=5, help="passes of each kind; the median is reported")
    parser.add_argument("--save", default="leak_detector", help="name of the results file (benchmarks/results/)")
    args = parser.parse_args()

    rng = random.Random(23)
    patients = other_patients(args.patients, rng)
    canaries = [c for p in patients for c in canaries_of(p)]
    replies, planted = messages(args.messages, patients, rng)
    started = time.perf_counter()
    detectors = {locale: LeakDetector(canaries, locale) for locale in ("pt-BR", "en", "es")}
    build_ms = (time.perf_counter() - started) / 3 * 1e3

    rows = []
    passes = [("scan", "", False), ("scan + caller text, growing", "growing", False),
              ("scan + caller text, new each time", "new", False)]
    if "earlier" in inspect.signature(LeakDetector.scan).parameters:
        passes.append(("scan + caller text + earlier replies", "growing", True))
    for label, mode, earlier in passes:
        said = caller_texts(len(replies), mode)
        runs = [timed_pass(detectors, replies, said, earlier) for _ in range(args.repeat)]
        rows.append({"pass": label,
                     "CPU µs/message (median)": round(statistics.median(cpu for _, cpu, _ in runs), 1),
                     "CPU µs/message (min)": round(min(cpu for _, cpu, _ in runs), 1),
                     "wall µs/message (median)": round(statistics.median(wall for wall, _, _ in runs), 1),
                     "leaks found": runs[0][2], "leaks planted": planted})
    chars = statistics.mean(len(text) for _, text in replies)
    where = machine()
    print(f"{args.patients} other patients, {len(canaries)} canaries, {args.messages} replies of "
          f"{chars:.0f} characters on average; build {build_ms:.2f} ms per detector")
    print(markdown_table(rows))
    print(f"commit {where['commit']}, load {where['loadavg']}, {where['nproc']} cores, Python {where['python']}")
    save(args.save, {"settings": vars(args), "canaries": len(canaries), "mean_chars": round(chars),
                     "build_ms": round(build_ms, 3), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
