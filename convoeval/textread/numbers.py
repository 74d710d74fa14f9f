"""Numbers in read text: digit groups with their masks (CPFs, phones), and money in the three locales' formats.

Every reader takes folded text (``folding.fold``, one character for one, so a position found in it quotes the
original exactly; numbers said in words already digits: ``reading.read``) and returns ``(start, end, value)``.
The red team's detector decides which values are another patient's canaries; ``pii.find_pii`` finds them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# ── CPFs ──

_NON_DIGITS = re.compile(r"\D")


def cpf_check_digits(nine: str) -> str:
    """The two check digits of a CPF's first nine digits (the modulo-11 rule of the Receita Federal).

    Args:
        nine: The first nine digits, as text.

    Returns:
        Two digits as text.

    Raises:
        ValueError: ``nine`` is not nine digits.

    Example:
        >>> cpf_check_digits("529982247")
        '25'
    """
    if len(nine) != 9 or not nine.isdigit():
        raise ValueError(f"a CPF's base is nine digits, got {nine!r}")
    digits = [int(c) for c in nine]
    for weight_start in (10, 11):
        total = sum(d * w for d, w in zip(digits, range(weight_start, 1, -1), strict=False))
        remainder = total % 11
        digits.append(0 if remainder < 2 else 11 - remainder)
    return f"{digits[9]}{digits[10]}"


def is_valid_cpf(cpf: str | int | None) -> bool:
    """Whether ``cpf`` (formatted like ``529.982.247-25`` or bare digits) has eleven digits and valid check digits.

    A CPF of one repeated digit (``111.111.111-11``) passes the arithmetic but is not issued; it is invalid here.
    """
    if cpf is None:
        return False
    digits = _NON_DIGITS.sub("", str(cpf))
    if len(digits) != 11 or len(set(digits)) == 1:
        return False
    return cpf_check_digits(digits[:9]) == digits[9:]


# ── numbers that may be masked: CPFs and phones ──

#: Mask characters: what assistants write in place of a hidden digit (``*``, ``•``, ``#``, ``x``, ``●``, ``∗``,
#: ``_``, ``■``, ``·``…). A closed list: the pattern then starts with one character class, which the regular
#: expression engine skips to (a pattern that may start with "any symbol" is tried at every position: ~5x slower).
MASKS = "*•#x●∗_■□▪·○◦✱✳×∙⋅"
_NUMBER = re.compile(rf"\+?\(?[\d{re.escape(MASKS)}](?:[\s.\-()]{{0,2}}[\d{re.escape(MASKS)}])*")


def number_spans(folded: str, min_digits: int = 1) -> Iterator[tuple[int, int, str, tuple[int, ...]]]:
    """Digit groups written together, with their masks: ``(start, end, skeleton, group_ends)``.

    The skeleton keeps digits and turns mask characters (``*``, ``•``, ``#``, ``x``, ``●``, ``_``… ``MASKS``)
    into ``*``, dropping the separators, so ``***.456.789-**`` becomes ``***456789**``. ``group_ends`` are the
    skeleton positions where a group of digits or masks ends (a phone number ends at one of them). Spans with fewer
    than ``min_digits`` digits are skipped (most numbers of a message are a day, an hour or a price).
    """
    for m in _NUMBER.finditer(folded):
        text = m.group()
        if len(text) < min_digits:
            continue
        skeleton: list[str] = []
        ends: list[int] = []
        for char in text:
            if char.isdigit():
                skeleton.append(char)
            elif not (char.isspace() or char in ".-()+"):
                skeleton.append("*")
            elif skeleton and (not ends or ends[-1] != len(skeleton)):
                ends.append(len(skeleton))
        if not ends or ends[-1] != len(skeleton):
            ends.append(len(skeleton))
        joined = "".join(skeleton)
        if len(joined) - joined.count("*") >= min_digits:
            yield m.start(), m.end(), joined, tuple(ends)


# ── money ──

_MONEY = re.compile(
    r"(?P<int>\d(?<![\d.,]\d)(?:\d{0,2}(?:(?P<th>[.,])\d{3})+|\d*))"
    r"(?:(?P<dec>[.,])(?P<cents>\d{2}|\d(?![\d%])))?(?!\d|[.,]\d)"
)
#: The currency written after the amount ("187 reais"), and the cents said apart ("187 reais e 90 centavos",
#: "307 reais and 15 cents", "R$ 187 com 90 centavos").
_CURRENCY_AFTER = re.compile(r"\s*(?:reais|reales|real|brl)\b")
_CENTS_APART = re.compile(r"(?:\s*(?:reais|reales|real))?,?\s+(?:e|y|and|com|con|mais)\s+(?P<cents>\d{1,2})\s*"
                          r"(?:centavos?|cents?|centimos?)\b")


def _currency_before(folded: str, start: int) -> int | None:
    """Where ``R$`` (or ``BRL``) starts when it stands just before ``start`` (spaces between), else None."""
    window = folded[max(0, start - 6):start]
    tail = window.rstrip()
    for sign in ("r$", "brl"):
        if tail.endswith(sign):
            return start - len(window) + len(tail) - len(sign)
    return None


def money(folded: str) -> Iterator[tuple[int, int, int]]:
    """Amounts in folded text (numbers in words already digits, see ``reading``) as ``(start, end, cents)``:
    ``R$ 187,90``, ``R$187.90``, ``187,90``, ``187.90``, ``R$ 1.234,56``, ``R$1,234.56``, ``R$ 187,9``,
    ``187 reais e 90 centavos``, ``307 reais and 15 cents``. A number without cents counts only with its currency
    (``R$ 150``, ``150 reais``), and so does one written with a single decimal (``R$ 187,9``); a bare ``150`` or
    ``187,9`` is not read as money."""
    sign_said = "r$" in folded or "brl" in folded
    word_said = "rea" in folded or "brl" in folded
    for m in _MONEY.finditer(folded):
        cents_text = m.group("cents")
        whole = cents_text is not None and len(cents_text) == 2
        if not whole and not (sign_said or word_said):
            continue  # no currency anywhere: only an amount with its cents can be one
        if m.group("th") and m.group("dec") == m.group("th"):
            continue  # "1.234.56" is not an amount
        currency = _currency_before(folded, m.start()) if sign_said else None
        end = m.end()
        if whole:
            cents = int(cents_text)
        else:
            if currency is None and not (word_said and _CURRENCY_AFTER.match(folded, m.end())):
                continue
            if cents_text is not None:
                cents = int(cents_text) * 10  # "R$ 187,9" is R$ 187,90
            else:
                apart = _CENTS_APART.match(folded, m.end()) if word_said or "cent" in folded else None
                cents, end = (int(apart.group("cents")), apart.end()) if apart else (0, end)
        reais = int(m.group("int").replace(".", "").replace(",", ""))
        yield m.start() if currency is None else currency, end, reais * 100 + cents
