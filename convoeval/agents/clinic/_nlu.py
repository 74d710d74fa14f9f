"""Free-text understanding for the reference agents: keyword intents and slots, per language.

Deliberately simple, like the rule-based WhatsApp bots it imitates: the message is normalised (lower case, no
accents, no punctuation), then matched against phrase lists. The session's language is tried first; only a message
in which it finds nothing is read with the other languages (a Portuguese "no" means "in the", not "no").

Lexicons map ``locale -> intent -> phrases``; a phrase is written naturally (accents allowed) and matches whole
words. A phrase starting with ``^`` matches only a message that is exactly that phrase (``^s`` for "s" = sim).
Agents add their own intents with a ``LEXICON`` of the same shape (see ``ClinicAgent``).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from convoeval.agents.clinic._format import LOCALES, resolve_locale

Lexicon = Mapping[str, Mapping[str, str | Sequence[str]]]


def normalize(text: str) -> str:
    """Lower case, accents removed, apostrophes dropped (``don't`` -> ``dont``), other punctuation -> spaces."""
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"['’`´]", "", text)
    return " ".join(re.findall(r"[a-z0-9]+", text))


def _plain(text: str) -> str:
    # For dates and times: accents gone, punctuation kept ("10/03", "9:30").
    text = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in text if not unicodedata.combining(c))


# ── Shared lexicon: what every clinic bot understands ──

COMMON_LEXICON: dict[str, dict[str, str]] = {
    "pt-BR": {
        "greeting": "oi|ola|olá|bom dia|boa tarde|boa noite|e ai|opa|oie",
        "yes": "sim|^s|pode|pode ser|pode sim|ok|okay|isso|isso mesmo|claro|confirmo|confirmado|confirma|certo|"
        "correto|beleza|blz|exato|com certeza|manda|pode mandar|quero sim|ta bom|ta|tá|fechado|perfeito|positivo|uhum|"
        "aham|vamos|bora|sim por favor|pode gerar|gera",
        "no": "nao|não|^n|negativo|agora nao|nem|de jeito nenhum",
        "thanks": "obrigado|obrigada|valeu|brigado|brigada|agradeco|agradeço|grato|grata|obg",
        "bye": "tchau|ate mais|até mais|ate logo|até logo|adeus|falou|ate breve|até breve",
        # Specific phrases only: "sou uma pessoa idosa" or "pago na recepção" must not summon a human.
        "human": "atendente|humano|humana|operador|operadora|recepcionista|gente de verdade|pessoa de verdade|"
        "pessoa real|falar com alguem|falar com alguém|falar com uma pessoa|falar com a recepcao|falar com a recepção",
        "confused": "nao entendi|não entendi|nao entendo|não entendo|como assim|o que e|o que é|oque e|que e isso|"
        "como funciona|nao sei|não sei|explica|explicar|me explica|explique|qual a diferenca|qual a diferença|"
        "confuso|confusa|hein|como faco|como faço|como que faz|nao consegui|não consegui|pra que serve|como eu pago|"
        "como pago|como pagar",
    },
    "en": {
        "greeting": "hi|hello|hey|good morning|good afternoon|good evening|hiya",
        "yes": "yes|^y|yeah|yep|yup|sure|ok|okay|correct|right|confirm|confirmed|please do|go ahead|thats right|"
        "sounds good|of course|absolutely|yes please|please|do it|perfect|fine",
        "no": "no|nope|nah|not now|dont|do not|negative|not really",
        "thanks": "thanks|thank you|thx|ty|cheers|appreciate it",
        "bye": "bye|goodbye|see you|see ya|take care|have a good day",
        "human": "human|real person|representative|operator|receptionist|attendant|live agent|talk to an agent|"
        "speak to an agent|talk to someone|speak to someone|talk to a person|speak to a person|customer service|"
        "staff member",
        "confused": "what is|whats|what are|dont understand|do not understand|confused|how does|how do i|explain|"
        "what does|difference|not sure|dont get|i dont know|what do you mean|how it works|how do i pay|how to pay",
    },
    "es": {
        "greeting": "hola|buenos dias|buenas tardes|buenas noches|buenas|que tal",
        "yes": "si|sí|claro|vale|dale|de acuerdo|ok|okay|correcto|confirmo|confirmado|exacto|por supuesto|perfecto|"
        "esta bien|está bien|bueno|si por favor|adelante|hazlo|genial",
        "no": "no|nop|ahora no|todavia no|todavía no|para nada|negativo",
        "thanks": "gracias|muchas gracias|mil gracias|te agradezco|se agradece",
        "bye": "adios|adiós|chao|chau|hasta luego|hasta pronto|nos vemos|hasta manana|hasta mañana",
        "human": "humano|humana|operador|operadora|agente|recepcionista|asesor|asesora|persona real|"
        "hablar con alguien|hablar con una persona|atencion al cliente|atención al cliente",
        "confused": "que es|qué es|no entiendo|no entendi|no entendí|como funciona|cómo funciona|explica|explicame|"
        "explícame|diferencia|confundido|confundida|no se|no sé|que significa|qué significa|como hago|cómo hago|"
        "como pago|cómo pago|como lo pago|cómo lo pago",
    },
}

#: Payment-method keywords; distinctive in every language, so always read together.
PAYMENT_METHODS: dict[str, str] = {
    "pix": "pix|piks",
    "boleto": "boleto|boletos|boleta|bank slip|payment slip|boleto bancario",
    "card": "cartao|cartão|cartao de credito|cartão de crédito|credito|crédito|debito|débito|card|credit card|"
    "debit card|credit|tarjeta|tarjeta de credito|tarjeta de crédito",
}

_NEGATIONS = {"pt-BR": "nao|nem|sem", "en": "not|no|dont|without|never", "es": "no|sin|ni|nunca"}
_PREFERENCE = {
    "pt-BR": "prefiro|quero|melhor|vou de|pode ser|opto",
    "en": "prefer|want|rather|go with|choose|pick|use",
    "es": "prefiero|quiero|mejor|elijo|uso|voy con",
}
_NUMBER_WORDS = {
    # Articles that double as "one" (um, uma, uno, una, one) are left out: "uma pergunta" is not a score.
    "pt-BR": "zero dois duas tres quatro cinco seis sete oito nove dez",
    "en": "zero two three four five six seven eight nine ten",
    "es": "cero dos tres cuatro cinco seis siete ocho nueve diez",
}
_NUMBER_VALUES = {
    "pt-BR": (0, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10),
    "en": (0, 2, 3, 4, 5, 6, 7, 8, 9, 10),
    "es": (0, 2, 3, 4, 5, 6, 7, 8, 9, 10),
}


@lru_cache(maxsize=None)
def _phrases(spec: str | tuple[str, ...]) -> tuple[tuple[bool, str], ...]:
    items = spec.split("|") if isinstance(spec, str) else spec
    return tuple((p.startswith("^"), normalize(p.lstrip("^"))) for p in items if p.strip())


def _matches(norm: str, spec: str | Sequence[str]) -> bool:
    key = spec if isinstance(spec, str) else tuple(spec)
    padded = f" {norm} "
    return any((norm == p) if whole else (f" {p} " in padded) for whole, p in _phrases(key))


def _positions(tokens: Sequence[str], phrase: str) -> Iterable[int]:
    words = phrase.split()
    for i in range(len(tokens) - len(words) + 1):
        if list(tokens[i : i + len(words)]) == words:
            yield i


def _clauses(text: str) -> list[str]:
    parts = re.split(r"[,.;:!?\n]+|\b(?:mas|but|pero|porem|however)\b", _plain(text))
    return [normalize(p) for p in parts if normalize(p)]


def _near_before(tokens: Sequence[str], pos: int, spec: str, window: int = 2) -> bool:
    return _matches(" ".join(tokens[max(0, pos - window) : pos]), spec)


@dataclass(frozen=True)
class Understanding:
    """What a patient message says, as far as keyword rules can tell.

    Attributes:
        text: the message as received.
        norm: the normalised message (see ``normalize``).
        intents: intent names found (``greeting``, ``yes``, ``no``, ``thanks``, ``bye``, ``human``, ``confused``,
            plus the agent's own).
        methods: payment methods mentioned and not negated, in order of first mention.
        mentioned: payment methods mentioned at all ("what is boleto?" asks about boleto without choosing it).
        preferred: a method the patient said they prefer/want, when one is marked so.
        numbers: integers written as digits or (0-10) as words, in order.
        locale: the language whose lexicon matched.
    """

    text: str
    norm: str
    intents: frozenset[str]
    methods: tuple[str, ...]
    mentioned: tuple[str, ...]
    preferred: str | None
    numbers: tuple[int, ...]
    locale: str

    def has(self, *intents: str) -> bool:
        """Whether any of ``intents`` was found."""
        return any(i in self.intents for i in intents)

    @property
    def method(self) -> str | None:
        """The one payment method the patient chose: the only one mentioned, or the one marked as preferred."""
        if len(self.methods) == 1:
            return self.methods[0]
        return self.preferred

    @property
    def question(self) -> bool:
        """Whether the message is a question (ends with a question mark)."""
        return self.text.rstrip().endswith("?")

    @property
    def empty(self) -> bool:
        return not (self.intents or self.mentioned or self.numbers)


def _read(text: str, norm: str, locale: str, lexicons: Sequence[Lexicon]) -> Understanding:
    tokens = norm.split()
    intents = {
        intent
        for lexicon in lexicons
        for intent, spec in lexicon.get(locale, {}).items()
        if _matches(norm, spec)
    }
    found: dict[str, int] = {}
    mentioned: dict[str, int] = {}
    preferred = None
    offset = 0
    # A negation only reaches within its clause: "não, prefiro boleto" prefers boleto; "não quero pix" rules pix out.
    for clause in _clauses(text):
        words = clause.split()
        for method, spec in PAYMENT_METHODS.items():
            for _, phrase in _phrases(spec):
                for pos in _positions(words, phrase):
                    mentioned[method] = min(mentioned.get(method, offset + pos), offset + pos)
                    if _near_before(words, pos, _NEGATIONS[locale]):
                        continue
                    found[method] = min(found.get(method, offset + pos), offset + pos)
                    if _near_before(words, pos, _PREFERENCE[locale]):
                        preferred = preferred or method
        offset += len(words)
    number_words = dict(zip(_NUMBER_WORDS[locale].split(), _NUMBER_VALUES[locale], strict=True))
    numbers = tuple(int(t) if t.isdigit() else number_words[t] for t in tokens if t.isdigit() or t in number_words)
    return Understanding(
        text=text,
        norm=norm,
        intents=frozenset(intents),
        methods=tuple(sorted(found, key=found.__getitem__)),
        mentioned=tuple(sorted(mentioned, key=mentioned.__getitem__)),
        preferred=preferred,
        numbers=numbers,
        locale=locale,
    )


def understand(text: str, locale: str, extra: Lexicon | None = None) -> Understanding:
    """Read a patient message.

    Args:
        text: the message.
        locale: the session's language; its lexicon is tried first, the others only if it finds nothing.
        extra: the agent's own lexicon (same shape as ``COMMON_LEXICON``).

    Returns:
        An ``Understanding``.

    Example:
        >>> understand("Quero pagar no pix, por favor", "pt-BR").method
        'pix'
    """
    norm = normalize(text)
    lexicons = [COMMON_LEXICON] + ([extra] if extra else [])
    first = resolve_locale(locale)
    result = _read(text, norm, first, lexicons)
    if result.empty:
        for other in LOCALES:
            candidate = _read(text, norm, other, lexicons) if other != first else result
            if not candidate.empty:
                return candidate
    return result


def matches(text: str, phrases: str | Sequence[str]) -> bool:
    """Whether ``text`` contains any of ``phrases`` (``|``-separated or a list), as whole words after normalising."""
    return _matches(normalize(text), phrases)


# ── Dates, times and choices (for agents that talk about appointments) ──

_MONTHS = {
    "pt-BR": "janeiro fevereiro marco abril maio junho julho agosto setembro outubro novembro dezembro",
    "en": "january february march april may june july august september october november december",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
}
_WEEKDAYS = {
    "pt-BR": ("segunda", "terca", "quarta", "quinta", "sexta", "sabado", "domingo"),
    "en": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "es": ("lunes", "martes", "miercoles", "jueves", "viernes", "sabado", "domingo"),
}
_RELATIVE_DAYS = {
    "pt-BR": {"depois de amanha": 2, "amanha": 1, "hoje": 0},
    "en": {"day after tomorrow": 2, "tomorrow": 1, "today": 0},
    "es": {"pasado manana": 2, "manana": 1, "hoy": 0},
}
_ORDINALS = {
    "pt-BR": "primeiro|primeira|segundo|segunda opcao|terceiro|terceira|quarto|quarta opcao|quinto|quinta opcao",
    "en": "first|second|third|fourth|fifth",
    "es": "primero|primera|segundo|segunda|tercero|tercera|cuarto|cuarta|quinto|quinta",
}


def extract_time(text: str) -> str | None:
    """A time of day as ``HH:MM``: ``9h``, ``14h30``, ``9:30``, ``às 14``, ``2pm``, ``10:30 am``."""
    plain = _plain(text)
    m = re.search(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)", plain)
    if m:
        hour, minute = int(m.group(1)) % 12, int(m.group(2) or 0)
        hour += 12 if m.group(3).startswith("p") else 0
        return f"{hour:02d}:{minute:02d}" if minute < 60 else None
    m = re.search(r"\b([01]?\d|2[0-3])(?:\s*h\s*([0-5]\d)?\b|:([0-5]\d)\b|\s*(?:horas|hrs|hs)\b)", plain)
    if m is None:
        m = re.search(r"\b(?:as|a las|at)\s+([01]?\d|2[0-3])\b()()", plain)
    if m is None:
        return None
    return f"{int(m.group(1)):02d}:{int(m.group(2) or m.group(3) or 0):02d}"


def extract_date(text: str, locale: str, today: dt.date) -> dt.date | None:
    """A day: ISO (``2026-03-10``), ``10/03`` (day first; month first in en), ``10 de março``, ``March 10``,
    ``amanhã``/``tomorrow``/``mañana``, or a weekday (its next occurrence after ``today``)."""
    loc = resolve_locale(locale)
    plain = _plain(text)
    norm = normalize(text)
    m = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", plain)
    try:
        if m:
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        m = re.search(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b", plain)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            day, month = (b, a) if loc == "en" else (a, b)
            year = int(m.group(3)) if m.group(3) else today.year
            year += 2000 if year < 100 else 0
            return _roll_forward(dt.date(year, month, day), today, explicit_year=bool(m.group(3)))
        months = _MONTHS[loc].split()
        for i, name in enumerate(months, start=1):
            m = re.search(rf"\b(\d{{1,2}})\s+(?:de\s+)?{name}\b|\b{name}\s+(\d{{1,2}})\b", norm)
            if m:
                return _roll_forward(dt.date(today.year, i, int(m.group(1) or m.group(2))), today, explicit_year=False)
    except ValueError:
        return None
    for phrase, offset in _RELATIVE_DAYS[loc].items():
        if f" {phrase} " in f" {norm} ":
            return today + dt.timedelta(days=offset)
    for i, name in enumerate(_WEEKDAYS[loc]):
        if re.search(rf"\b{name}\b", norm):
            return today + dt.timedelta(days=(i - today.weekday() - 1) % 7 + 1)
    return None


def _roll_forward(day: dt.date, today: dt.date, *, explicit_year: bool) -> dt.date:
    # "10/01" said in December means next January.
    if not explicit_year and day < today:
        return day.replace(year=day.year + 1)
    return day


def extract_choice(text: str, n: int, locale: str) -> int | None:
    """Which of ``n`` numbered options the patient picked (1-based): ``2``, ``opção 2``, ``a segunda``, ``first``."""
    loc = resolve_locale(locale)
    norm = normalize(text)
    ordinals = [normalize(p) for p in _ORDINALS[loc].split("|")]
    values = {"primeir": 1, "first": 1, "primer": 1, "segund": 2, "second": 2, "terceir": 3, "third": 3, "tercer": 3,
              "quart": 4, "fourth": 4, "cuart": 4, "quint": 5, "fifth": 5}
    for phrase in ordinals:
        if f" {phrase} " in f" {norm} ":
            value = next(v for k, v in values.items() if phrase.startswith(k))
            return value if value <= n else None
    numbers = [int(t) for t in norm.split() if t.isdigit()]
    if len(numbers) == 1 and 1 <= numbers[0] <= n:
        return numbers[0]
    return None
