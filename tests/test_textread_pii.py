"""The public reading API (``convoeval.textread.find_pii``, issue #47): the red team's readers usable on any text,
with no list of values to look for (a scrubber of production conversations, #44). Each kind on both sides: what is
found, and the look-alike that is not."""

from __future__ import annotations

import pytest

from convoeval.textread import PII_KINDS, Found, find_pii
from convoeval.textread.addresses import addresses, street_core
from convoeval.textread.folding import fold


def kinds(text: str, locale: str = "pt-BR", **options) -> list[tuple[str, str]]:
    return [(f.kind, f.text) for f in find_pii(text, locale, **options)]


def test_a_found_span_quotes_the_original_text_even_when_numbers_were_said_in_words():
    text = "Ficou em CENTO E OITENTA E SETE reais e noventa centavos."
    [found] = find_pii(text, "pt-BR")
    assert found == Found("amount", 9, 56, "CENTO E OITENTA E SETE reais e noventa centavos", "18790")
    assert text[found.start:found.end] == found.text


@pytest.mark.parametrize(("text", "value"), [
    ("CPF 529.982.247-25", "52998224725"),
    ("cpf: 529 982 247 25", "52998224725"),
    ("meu cpf é 52998224725", "52998224725"),
    ("Documento 52998224725", "52998224725"),          # eleven bare digits with valid check digits
    ("CPF ***.982.247-**", "***982247**"),              # masked, 6 digits shown
])
def test_cpfs_are_found_in_their_layouts_bare_and_masked(text, value):
    assert [(f.kind, f.value) for f in find_pii(text, "pt-BR")] == [("cpf", value)]


@pytest.mark.parametrize(("text", "value"), [
    ("tel (11) 94417-2286", "11944172286"),
    ("+55 11 94417 2286", "5511944172286"),
    ("celular 11944172286", "11944172286"),            # eleven bare digits after a phone word: not a CPF
    ("whatsapp 94417-2286", "944172286"),
])
def test_phones_are_found_and_told_from_cpfs(text, value):
    assert [(f.kind, f.value) for f in find_pii(text, "pt-BR")] == [("phone", value)]


@pytest.mark.parametrize("text", [
    "termina em 2286",             # the last four: not a number on its own
    "CPF ***.***.*47-**",          # 3 digits shown
    "R$ 1.234,56",                 # an amount (found as one, never as a phone)
    "11.03.2026",                  # a date
    "CEP 01304-001",               # a postal code
])
def test_look_alikes_are_no_cpf_or_phone(text):
    assert not [f for f in find_pii(text, "pt-BR") if f.kind in ("cpf", "phone")]


def test_emails_dates_and_amounts():
    text = "Escreva para ANA.Lima+clinica@exemplo.com.br; nasceu em 14 de março de 1958; deve R$ 187,90."
    assert [(f.kind, f.value) for f in find_pii(text, "pt-BR")] == [
        ("email", "ana.lima+clinica@exemplo.com.br"), ("date", "1958-03-14"), ("amount", "18790")]
    assert [(f.kind, f.value) for f in find_pii("born March 14th, 1958, owes 187 reais", "en")] == [
        ("date", "1958-03-14"), ("amount", "18700")]
    # A day and month without the year is no date to scrub here; a bare number is no amount.
    assert find_pii("dia 14/03, sala 187", "pt-BR") == []


@pytest.mark.parametrize(("text", "address"), [
    ("Ela mora na Rua Augusta, 1420, apto 302 - Consolação.", ("augusta", "1420", "apto 302", None)),
    ("R. das Palmeiras nº 55, ap. 12", ("palmeiras", "55", "ap. 12", None)),
    ("Av. Brigadeiro Faria Lima, 3477 - conj. 51", ("brigadeiro faria lima", "3477", "conj. 51", None)),
    ("R. Augusta 1420/302", ("augusta", "1420", "302", None)),
    ("She lives at 1420 Augusta Street, Apt 302.", ("augusta", "1420", "apt 302", None)),
    ("vive en Calle Mayor 12, piso 3", ("mayor", "12", "piso 3", None)),
    ("CEP 01304-001", ("", None, None, "01304001")),
])
def test_addresses_with_their_number_unit_and_postal_code(text, address):
    [(_, _, found)] = list(addresses(fold(text)))
    assert (found.street, found.number, found.unit, found.postal_code) == address


@pytest.mark.parametrize("text", [
    "a rua é a mesma, número 1420",    # no street's name
    "às 8h15 na sala 3",               # a room, no street
    "a consulta é dia 11 às 8",
])
def test_words_that_are_no_address(text):
    assert list(addresses(fold(text))) == []


def test_a_street_alone_is_an_address_for_a_scrubber():
    assert kinds("Passei na Rua Augusta ontem") == [("address", "Rua Augusta")]
    assert [f.value for f in find_pii("fica na Rua das Palmeiras, perto", "pt-BR")] == ["palmeiras|||"]
    assert kinds("a rua de casa") == []
    assert street_core("Rua das Palmeiras") == ("palmeiras",) and street_core("1420 Augusta Street") == ("1420",
                                                                                                         "augusta")


def test_names_are_found_only_when_given_in_every_form_the_detector_reads():
    text = "Falei com ARAÚJO, Conceição e com a Peggy Whitfield; a Maria ligou."
    assert kinds(text) == []
    assert kinds(text, names=["Conceição Araújo", "Margaret Whitfield"]) == [
        ("name", "ARAÚJO, Conceição"), ("name", "Peggy Whitfield")]


def test_kinds_filter_and_an_unknown_kind_is_refused():
    text = "CPF 529.982.247-25, R$ 187,90"
    assert kinds(text, kinds=["amount"]) == [("amount", "R$ 187,90")]
    assert set(PII_KINDS) == {"name", "cpf", "phone", "email", "date", "address", "amount"}
    with pytest.raises(ValueError, match="unknown kinds"):
        find_pii(text, "pt-BR", kinds=["ssn"])
