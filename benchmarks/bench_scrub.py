"""The scrubber against a planted corpus: 360 conversations (120 per locale: pt-BR, en, es) whose patients and agent
say names, CPFs, phones, e-mails, birth dates, addresses, postal codes and amounts in the forms people write them;
every planted value is known, so the share replaced, the share of the clinic's own words altered and every miss can
be counted. Deterministic (seeded); no LLM.

    .venv/bin/python benchmarks/bench_scrub.py [--out benchmarks/results/scrub.json]

A planted value counts as replaced when its text no longer appears in the scrubbed message (a name: none of its
words of three letters or more as a word). The clinic's text is the agent's words around the planted values; a
piece of it counts as altered (every word of it) unless it is still in the scrubbed message verbatim.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from convoeval.production.messages import ImportedConversation, ImportedMessage
from convoeval.production.scrub import Scrubber
from convoeval.textread.folding import fold
from convoeval.textread.numbers import cpf_check_digits

PEOPLE = {
    "pt-BR": (["Mariana", "Roberto", "Conceição", "João", "Ana", "Francisca", "Luiz", "Beatriz", "Thiago", "Aparecida",
               "Marcos", "Juliana", "Raimundo", "Letícia", "Sebastião", "Camila"],
              ["Lopes", "Almeida", "Araújo", "Silva", "Souza", "Ferreira", "Carvalho", "Ribeiro", "Gomes", "Barbosa",
               "Nascimento", "Moreira", "Cavalcanti", "Teixeira"]),
    "en": (["Emily", "David", "Margaret", "James", "Olivia", "Michael", "Sarah", "Robert", "Jennifer", "William",
            "Linda", "Christopher", "Jessica", "Daniel", "Patricia", "Matthew"],
           ["Carter", "Nguyen", "Whitfield", "Johnson", "Miller", "Davis", "Garcia", "Wilson", "Anderson", "Thompson",
            "Martinez", "Robinson", "Clark", "Lewis"]),
    "es": (["Lucía", "Javier", "Carmen", "Alejandro", "Sofía", "Manuel", "Valentina", "Diego", "Isabel", "Andrés",
            "Ximena", "Pablo", "Daniela", "Fernando", "Gabriela", "Miguel"],
           ["Fernández", "Ortega", "Echeverría", "García", "Martínez", "López", "Sánchez", "Ramírez", "Torres",
            "Morales", "Jiménez", "Ruiz", "Herrera", "Vargas"]),
}
STREETS = {"pt-BR": ["Rua das Flores", "Avenida Paulista", "Rua Augusta", "Travessa do Carmo", "Alameda Santos"],
           "en": ["Main Street", "Oak Avenue", "Maple Drive", "Elm Road", "Sunset Boulevard"],
           "es": ["Calle Mayor", "Avenida de la Constitución", "Calle del Prado", "Paseo de Gracia", "Calle Alcalá"]}
MONTHS = {"pt-BR": ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro",
                    "outubro", "novembro", "dezembro"],
          "en": ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                 "November", "December"],
          "es": ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
                 "noviembre", "diciembre"]}
# A template: (role, text with {slots}). Slots: name (full), first, surname, relative (a third person's first name),
# cpf, phone, email, birth, address, cep, amount, day (a day and month, no year).
TEMPLATES = {
    "pt-BR": [("patient", "oi, aqui é a {name}"), ("patient", "meu cpf é {cpf}"),
              ("agent", "Olá, {first}! Encontrei uma fatura de {amount} com vencimento em {day}. Quer pagar por Pix?"),
              ("patient", "nasci em {birth}, pode conferir"), ("patient", "meu telefone novo é {phone}"),
              ("agent", "Obrigado, {first}. Atualizei seu cadastro e vou mandar o boleto para {email}."),
              ("patient", "moro na {address}, CEP {cep}"), ("patient", "minha filha {relative} também tem consulta"),
              ("agent", "Perfeito! A consulta da {relative} está confirmada para {day} às 10:30 com a Dra. Paula Reis."),
              ("patient", "valeu, sra. {surname} é minha mãe, ela paga {amount}")],
    "en": [("patient", "hi this is {name}"), ("patient", "my ssn is not needed right? my phone is {phone}"),
           ("agent", "Hi {first}! I found one invoice of {amount}, due on {day}. Would you like a payment link?"),
           ("patient", "I was born on {birth}"), ("patient", "you can email me at {email}"),
           ("agent", "Thanks, {first}. I updated your file and sent the link to {email}."),
           ("patient", "my address changed, it's {address}, {cep}"), ("patient", "my son {relative} needs a checkup too"),
           ("agent", "Great! {relative}'s checkup is booked for {day} at 10:30 AM with Dr. Paula Reis."),
           ("patient", "thanks, Mrs. {surname} is my mom, she'll pay the {amount}")],
    "es": [("patient", "hola, soy {name}"), ("patient", "mi teléfono es {phone}"),
           ("agent", "¡Hola, {first}! Tienes una factura de {amount} con vencimiento el {day}. ¿Quieres un enlace de pago?"),
           ("patient", "nací el {birth}"), ("patient", "mi correo es {email}"),
           ("agent", "Gracias, {first}. Actualicé tu ficha y te envié el enlace a {email}."),
           ("patient", "vivo en {address}, CP {cep}"), ("patient", "mi hija {relative} también tiene cita"),
           ("agent", "¡Perfecto! La cita de {relative} queda para el {day} a las 10:30 con la Dra. Paula Reis."),
           ("patient", "gracias, la señora {surname} es mi madre, ella paga {amount}")],
}


def _cpf(rng: random.Random, bare: bool) -> str:
    nine = "".join(str(rng.randrange(10)) for _ in range(9))
    digits = nine + cpf_check_digits(nine)
    return digits if bare else f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"


def _values(locale: str, rng: random.Random) -> dict[str, str]:
    firsts, surnames = PEOPLE[locale]
    first, surname = rng.choice(firsts), rng.choice(surnames)
    relative = rng.choice([f for f in firsts if f != first])
    name = f"{first} {surname}" if rng.random() < 0.8 else f"{first.lower()} {surname.lower()}"
    born = datetime(rng.randrange(1940, 2005), rng.randrange(1, 13), rng.randrange(1, 29))
    day = datetime(2026, rng.randrange(1, 13), rng.randrange(1, 29))
    month = MONTHS[locale][born.month - 1]
    cents = rng.choice([15000, 18000, 32050, 9990, 125000, 47000])
    if locale == "pt-BR":
        birth = rng.choice([born.strftime("%d/%m/%Y"), f"{born.day} de {month} de {born.year}"])
        phone = rng.choice([f"(11) 9{rng.randrange(1000, 9999)}-{rng.randrange(1000, 9999)}",
                            f"+55 21 9{rng.randrange(1000, 9999)} {rng.randrange(1000, 9999)}"])
        amount = f"R$ {cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}"
        cep = f"{rng.randrange(10000, 99999)}-{rng.randrange(100, 999)}"
        dayshown = day.strftime("%d/%m")
    elif locale == "en":
        birth = rng.choice([born.strftime("%m/%d/%Y"), f"{month} {born.day}, {born.year}"])
        phone = rng.choice([f"({rng.randrange(201, 989)}) 555-{rng.randrange(1000, 9999)}",
                            f"+1 {rng.randrange(201, 989)} 555 {rng.randrange(1000, 9999)}"])
        amount = f"${cents // 100:,}.{cents % 100:02d}"
        cep = f"{rng.choice(['NY', 'CA', 'TX'])} {rng.randrange(10000, 99999)}"
        dayshown = day.strftime("%m/%d").lstrip("0")
    else:
        birth = rng.choice([born.strftime("%d/%m/%Y"), f"{born.day} de {month} de {born.year}"])
        phone = rng.choice([f"+34 6{rng.randrange(10, 99)} {rng.randrange(100, 999)} {rng.randrange(100, 999)}",
                            f"+52 55 {rng.randrange(1000, 9999)} {rng.randrange(1000, 9999)}"])
        amount = f"${cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}"
        cep = f"{rng.randrange(10000, 52999)}"
        dayshown = day.strftime("%d/%m")
    street = rng.choice(STREETS[locale])
    number = str(rng.randrange(10, 2500))
    address = f"{number} {street}" if locale == "en" else f"{street}, {number}"
    email = f"{fold(first)}.{fold(surname)}{rng.randrange(10, 99)}@{rng.choice(['gmail.com', 'hotmail.com', 'yahoo.com.br'])}"
    return {"name": name, "first": first, "surname": surname, "relative": relative, "cpf": _cpf(rng, rng.random() < 0.2),
            "phone": phone, "email": email, "birth": birth, "address": address, "cep": cep, "amount": amount,
            "day": dayshown}


def corpus(n_per_locale: int = 120, seed: int = 44) -> list[tuple[ImportedConversation, list[dict]]]:
    """The planted conversations, each with what was planted in every message."""
    rng = random.Random(seed)
    out = []
    for locale, templates in TEMPLATES.items():
        for i in range(n_per_locale):
            values = _values(locale, rng)
            chosen = [t for t in templates if rng.random() < 0.85] or templates[:3]
            start = datetime(2026, 11, 3, 9) + timedelta(hours=i)
            messages, planted = [], []
            for j, (role, template) in enumerate(chosen):
                text = template.format(**values)
                slots = re.findall(r"{(\w+)}", template)
                pieces = [p for p in re.split(r"{\w+}", template) if p.strip()]
                messages.append(ImportedMessage(role, text, start + timedelta(minutes=j), ({"type": "text", "text": text},),
                                                sender=values["name"].title() if role == "patient" else None))
                planted.append({"role": role, "slots": {s: values[s] for s in slots}, "pieces": pieces})
            key = f"plant-{locale}-{i:03d}"
            out.append((ImportedConversation(key, "table", "planted", key, tuple(messages), locale=locale), planted))
    return out


def _gone(value: str, scrubbed: str, slot: str) -> bool:
    if slot in ("name", "first", "surname", "relative"):
        words = [w for w in re.findall(r"\w+", fold(value)) if len(w) >= 3]
        return not any(re.search(rf"\b{re.escape(w)}\b", fold(scrubbed)) for w in words)
    return value not in scrubbed


def measure(n_per_locale: int = 120) -> dict:
    scrubber = Scrubber()
    planted_total, replaced, misses = Counter(), Counter(), []
    clinic_words = altered_words = 0
    started, cpu0 = time.perf_counter(), time.process_time()
    conversations = corpus(n_per_locale)
    for conversation, planted in conversations:
        scrubbed = scrubber(conversation)
        for original, after, plant in zip(conversation.messages, scrubbed.messages, planted, strict=True):
            for slot, value in plant["slots"].items():
                kind = {"first": "name", "surname": "name", "relative": "name", "cep": "address",
                        "day": "date", "birth": "date"}.get(slot, slot)
                planted_total[kind] += 1
                if _gone(value, after.text, slot):
                    replaced[kind] += 1
                else:
                    misses.append({"conversation": conversation.key, "kind": kind, "value": value,
                                   "message": original.text, "scrubbed": after.text})
            if plant["role"] == "agent":
                for piece in plant["pieces"]:
                    n = len(piece.split())
                    clinic_words += n
                    altered_words += 0 if piece in after.text else n
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - started
    total = sum(planted_total.values())
    return {"conversations": len(conversations), "messages": sum(len(c.messages) for c, _ in conversations),
            "planted": total, "replaced": sum(replaced.values()),
            "replaced_share": sum(replaced.values()) / total,
            "by_kind": {k: {"planted": planted_total[k], "replaced": replaced[k]} for k in sorted(planted_total)},
            "clinic_words": clinic_words, "clinic_words_altered": altered_words,
            "clinic_altered_share": altered_words / clinic_words, "misses": misses,
            "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "load": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="benchmarks/results/scrub.json")
    parser.add_argument("-n", type=int, default=120, help="conversations per locale (default 120)")
    args = parser.parse_args()
    result = measure(args.n)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{result['conversations']} conversations, {result['planted']} planted values: "
          f"{result['replaced_share']:.2%} replaced; clinic text altered {result['clinic_altered_share']:.2%}; "
          f"{len(result['misses'])} miss(es); {result['cpu_s']} s CPU; {result['load']}")
    for kind, n in result["by_kind"].items():
        print(f"  {kind:8} {n['replaced']}/{n['planted']}")
    for miss in result["misses"][:40]:
        print(f"  miss {miss['kind']}: {miss['value']!r} in {miss['scrubbed']!r}")


if __name__ == "__main__":
    main()
