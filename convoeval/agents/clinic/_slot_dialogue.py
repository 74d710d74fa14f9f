"""The slot-booking steps the scheduling and recall agents share: offer free slots, let the patient choose, confirm,
then book (or move an appointment) with the tools and report the result.

``SlotBooking`` is a mixin for a ``ClinicAgent``. It owns the states ``preference`` (asking when), ``choose_slot`` and
``confirm_slot``; the agent provides ``declined(turn)`` (the patient does not want a slot after all) and
``after_commit(turn)`` (what follows a booking), and may override ``is_refusal(turn)``. Its text keys
(``SLOT_TEXTS``) and intents (``SLOT_LEXICON``) are merged into the agent's own tables with ``merge_tables``.

Conversation data it reads and writes: ``service`` (the service to book, or None), ``appointment`` (the one being
moved, or None), ``usual_professional_id``, ``asked`` (the patient's messages about when and with whom), ``offered``,
``chosen`` and, once booked, ``booked``.

The faults it knows (each agent declares the ones it has): ``books_without_confirmation``, ``books_unavailable_slot``,
``double_books``, ``wrong_time_reported``, ``never_finishes``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from convoeval.agents.clinic._agent import Turn
from convoeval.agents.clinic._format import LOCALES
from convoeval.agents.clinic._nlu import extract_choice
from convoeval.agents.clinic._slot_nlu import (
    SlotRequest,
    calendar_today,
    candidates,
    fits,
    match_professional,
    pick_by_time,
    read_request,
)

MAX_OFFERED = 3


def merge_tables(*tables: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-locale union of text tables or lexicons; later tables win on a shared key."""
    return {loc: {k: v for table in tables for k, v in table.get(loc, {}).items()} for loc in LOCALES}


class SlotBooking:
    """Mixin: the offer → choose → confirm → book steps over ``check_availability`` and ``book_appointment`` /
    ``reschedule_appointment``. See the module docstring for the hooks and data it uses."""

    # ── Hooks ──

    def declined(self, turn: Turn) -> None:  # pragma: no cover - every agent implements it
        raise NotImplementedError

    def after_commit(self, turn: Turn) -> None:  # pragma: no cover - every agent implements it
        raise NotImplementedError

    def is_refusal(self, turn: Turn) -> bool:
        """Whether the message turns the whole booking down (not just the slots shown); scheduling: never."""
        return False

    # ── Reading the patient ──

    def remember_when(self, turn: Turn, *, reset: bool = False) -> None:
        """Keep this message among the ones that say when and with whom (``reset``: it replaces them)."""
        asked = [] if reset else turn.data.setdefault("asked", [])
        turn.data["asked"] = [*asked, turn.said.text]

    def said_when(self, turn: Turn) -> SlotRequest:
        """What this message alone says about when."""
        return read_request(turn.said.text, turn.locale, self._today(turn))

    def _today(self, turn: Turn) -> dt.date:
        return dt.date.fromisoformat(turn.data["today"]) if "today" in turn.data else dt.date(2026, 1, 1)

    def _request(self, turn: Turn) -> SlotRequest:
        request = SlotRequest()
        for text in turn.data.get("asked", []):
            request = request.then(read_request(text, turn.locale, self._today(turn)))
        return request

    # ── Steps ──

    def offer(self, turn: Turn) -> None:
        """Look up free slots and offer the best few (or go straight to confirming the one asked for)."""
        service = turn.data.get("service") or {}
        args = {"service_id": service["id"]} if service.get("id") else {}
        slots = turn.tool("check_availability", **args)
        if not slots:
            turn.say("no_slots", service=service.get("name") or "")
            self.declined_quietly(turn)
            return
        turn.data["today"] = calendar_today(slots).isoformat()
        request = self._request(turn)
        professionals = {s["professional_id"]: {"id": s["professional_id"], "name": s["professional"]} for s in slots}
        named = match_professional(" ".join(turn.data.get("asked", [])), professionals.values())
        found, exact = candidates(slots, request, professional_id=named["id"] if named else None,
                                  usual_professional_id=turn.data.get("usual_professional_id"))  # fmt: skip
        if request.time and turn.faulty("books_unavailable_slot") and not self._time_free(slots, request):
            # The fault: the time asked for is "free", whatever the calendar says; there is no slot to book.
            who = named or {"id": found[0]["professional_id"], "name": found[0]["professional"]}
            day = request.day or dt.date.fromisoformat(str(found[0]["starts_at"])[:10])
            self.choose(turn, {"slot_id": None, "starts_at": f"{day.isoformat()}T{request.time}",
                               "professional_id": who["id"], "professional": who["name"]})  # fmt: skip
            return
        if turn.faulty("books_without_confirmation"):
            self.commit(turn, found[0])
            return
        if exact and request.time and len(found) == 1:
            self.choose(turn, found[0])
            return
        offered = found[:MAX_OFFERED]
        turn.data["offered"] = offered
        plain = exact or request.empty or (request.soonest and not (request.day or request.time or request.part))
        name = service.get("name")
        for_service = turn.text("for_service", service=name) if name else ""
        turn.say("offer" if plain else "offer_inexact", for_service=for_service)
        turn.say_raw("\n".join(self.slot_line(turn, n, s) for n, s in enumerate(offered, start=1)))
        turn.say("which_slot")
        turn.goto("choose_slot")

    @staticmethod
    def _time_free(slots: list[dict[str, Any]], request: SlotRequest) -> bool:
        return any(fits(s, request, day="exact" if request.day else "any", part=False) for s in slots)

    def slot_line(self, turn: Turn, n: int, slot: Mapping[str, Any]) -> str:
        when = turn.datetime(slot["starts_at"])
        return turn.text("slot_line", n=n, when=when, professional=slot["professional"] or "")

    def choose(self, turn: Turn, slot: Mapping[str, Any]) -> None:
        """Ask the patient to confirm ``slot`` before anything is booked."""
        turn.data["chosen"] = dict(slot)
        turn.say("confirm_move" if turn.data.get("appointment") else "confirm_slot", **self._values(turn, slot))
        turn.goto("confirm_slot")

    def commit(self, turn: Turn, slot: Mapping[str, Any]) -> None:
        """Book the slot (or move the appointment to it) with the tools, then report the date and time booked."""
        appointment, service = turn.data.get("appointment"), turn.data.get("service") or {}
        if slot.get("slot_id") is None:
            booked = {**slot, "service": service.get("name")}  # books_unavailable_slot: nothing to book with
        elif appointment and not turn.faulty("double_books"):
            booked = turn.tool("reschedule_appointment", appointment_id=appointment["id"], new_slot_id=slot["slot_id"])
        else:
            args = {"service_id": service["id"]} if service.get("id") else {}
            booked = turn.tool("book_appointment", slot_id=slot["slot_id"], **args)
        turn.data["booked"] = booked
        when = booked["starts_at"]
        if turn.faulty("wrong_time_reported"):
            when = (dt.datetime.fromisoformat(str(when)) + dt.timedelta(hours=1)).isoformat()
        turn.say("moved" if appointment else "booked", **self._values(turn, {**booked, "starts_at": when}))
        turn.data["appointment"] = None
        self.after_commit(turn)

    def _values(self, turn: Turn, slot: Mapping[str, Any]) -> dict[str, str]:
        service = (turn.data.get("service") or {}).get("name") or slot.get("service") or ""
        appointment = turn.data.get("appointment")
        old = turn.datetime(appointment["starts_at"]) if appointment else ""
        return {"when": turn.datetime(slot["starts_at"]), "professional": slot.get("professional") or "",
                "service": service, "old": old}  # fmt: skip

    def declined_quietly(self, turn: Turn) -> None:
        """Nothing to offer: end the booking without a refusal from the patient."""
        turn.goto("done")

    # ── States ──

    def on_preference(self, turn: Turn) -> None:
        said, wanted = turn.said, self.said_when(turn)
        if self.is_refusal(turn) or (wanted.empty and said.has("no", "thanks", "bye") and not said.has("yes")):
            self.declined(turn)
            return
        self.remember_when(turn)
        self.offer(turn)

    def on_choose_slot(self, turn: Turn) -> None:
        said, offered = turn.said, turn.data.get("offered", [])
        if self.is_refusal(turn):
            self.declined(turn)
            return
        choice = extract_choice(said.text, len(offered), turn.locale) if offered else None
        wanted = self.said_when(turn)
        picked = offered[choice - 1] if choice else pick_by_time(offered, wanted)
        if picked is None and wanted.empty and offered:
            # "com o Dr. Paulo": his one offered slot, or a new look with him.
            people = [{"id": s["professional_id"], "name": s["professional"]} for s in offered]
            named = match_professional(said.text, people)
            theirs = [s for s in offered if named and s["professional_id"] == named["id"]]
            picked = theirs[0] if len(theirs) == 1 else None
            if named and picked is None:
                wanted = SlotRequest(soonest=True)
        if picked is None and len(offered) == 1 and said.has("yes") and wanted.empty:
            picked = offered[0]
        if picked is not None:
            self.choose(turn, picked)
        elif not wanted.empty:
            self.remember_when(turn, reset=said.has("other"))
            self.offer(turn)
        elif said.has("other", "no"):
            turn.data["asked"] = []
            turn.say("other_preference")
            turn.goto("preference")
        elif said.has("thanks", "bye"):
            self.declined(turn)
        else:
            turn.say("which_slot_unclear")

    def on_confirm_slot(self, turn: Turn) -> None:
        said, chosen = turn.said, turn.data["chosen"]
        if self.is_refusal(turn):
            self.declined(turn)
            return
        if self._changes_slot(turn, chosen):
            self.on_choose_slot(turn)
        elif said.has("yes") and not said.has("no"):
            if turn.faulty("never_finishes"):
                turn.data["asks"] = turn.data.get("asks", 0) + 1
                again = "confirm_move" if turn.data.get("appointment") else "confirm_slot"
                turn.say("confirm_again" if turn.data["asks"] % 2 else again, **self._values(turn, chosen))
            else:
                self.commit(turn, chosen)
        elif said.has("no", "other"):
            turn.data["asked"] = []
            turn.say("other_preference")
            turn.goto("preference")
        else:
            turn.say("confirm_unclear", **self._values(turn, chosen))

    def _changes_slot(self, turn: Turn, chosen: Mapping[str, Any]) -> bool:
        """Whether the answer to "shall I book X?" names another slot: a number from the list, another time or day."""
        said, offered = turn.said, turn.data.get("offered", [])
        if offered and not said.has("yes") and extract_choice(said.text, len(offered), turn.locale):
            return True
        wanted = self.said_when(turn)
        when = dt.datetime.fromisoformat(str(chosen["starts_at"]))
        if wanted.time and wanted.time != when.strftime("%H:%M"):
            return True
        if wanted.day and wanted.weekday_only:
            return wanted.day.weekday() != when.weekday()
        return bool(wanted.day and wanted.day != when.date())


SLOT_LEXICON = {
    "pt-BR": {"other": "outro|outra|outros|outras|nenhum|nenhuma|mais opcoes|mais opções|diferente|outro dia|"
              "outro horario|outro horário"},
    "en": {"other": "other|another|none|different|more options|something else|none of these|neither"},
    "es": {"other": "otro|otra|otros|otras|ninguno|ninguna|mas opciones|más opciones|diferente|otro dia|otro día"},
}

SLOT_TEXTS = {
    "pt-BR": {
        "other_preference": "Sem problemas! Qual dia ou horário fica melhor para você?",
        "offer": "Tenho estes horários livres{for_service}:",
        "for_service": " para *{service}*",
        "offer_inexact": "Infelizmente não tenho esse horário livre. 😕 Os horários livres mais próximos são:",
        "slot_line": "{n}) {when} – {professional}",
        "which_slot": "Qual fica melhor para você? É só responder com o número. 😊",
        "which_slot_unclear": "Desculpe, não entendi qual horário você prefere. Pode responder com o número da "
        "lista, por favor?",
        "confirm_slot": "Perfeito! Só para confirmar: posso agendar *{service}* para *{when}*, com {professional}? "
        "(sim/não)",
        "confirm_move": "Só para confirmar: posso remarcar sua consulta de {old} para *{when}*, com {professional}? "
        "(sim/não)",
        "confirm_again": "Antes de agendar, preciso confirmar mais uma vez: é {when}, com {professional}, certo?",
        "confirm_unclear": "Desculpe, não entendi. Posso confirmar {when}, com {professional}? Responda *sim* ou "
        "*não*, por favor.",
        "booked": "Prontinho! ✅ Sua consulta de *{service}* está agendada para *{when}*, com {professional}.",
        "moved": "Prontinho! ✅ Sua consulta foi remarcada para *{when}*, com {professional}.",
        "no_slots": "Poxa, não encontrei horários livres no momento. 😕 Se quiser, posso passar você para a nossa "
        "equipe.",
        "anything_else": "Posso ajudar em algo mais?",
    },
    "en": {
        "other_preference": "No problem! Which day or time works better for you?",
        "offer": "I have these free times{for_service}:",
        "for_service": " for *{service}*",
        "offer_inexact": "Unfortunately that time isn't free. 😕 The closest free times are:",
        "slot_line": "{n}) {when} – {professional}",
        "which_slot": "Which one works best for you? Just reply with its number. 😊",
        "which_slot_unclear": "Sorry, I didn't catch which time you prefer. Could you reply with its number from the "
        "list, please?",
        "confirm_slot": "Great! Just to confirm: shall I book *{service}* for *{when}*, with {professional}? "
        "(yes/no)",
        "confirm_move": "Just to confirm: shall I move your appointment from {old} to *{when}*, with {professional}? "
        "(yes/no)",
        "confirm_again": "Before I book it, I need to confirm once more: it's {when}, with {professional}, right?",
        "confirm_unclear": "Sorry, I didn't get that. Shall I confirm {when}, with {professional}? Please reply *yes* "
        "or *no*.",
        "booked": "All set! ✅ Your *{service}* appointment is booked for *{when}*, with {professional}.",
        "moved": "All set! ✅ Your appointment has been moved to *{when}*, with {professional}.",
        "no_slots": "Sorry, I couldn't find any free times right now. 😕 If you like, I can pass you to our team.",
        "anything_else": "Can I help with anything else?",
    },
    "es": {
        "other_preference": "¡Sin problema! ¿Qué día u horario te queda mejor?",
        "offer": "Tengo estos horarios libres{for_service}:",
        "for_service": " para *{service}*",
        "offer_inexact": "Lamentablemente ese horario no está libre. 😕 Los horarios libres más cercanos son:",
        "slot_line": "{n}) {when} – {professional}",
        "which_slot": "¿Cuál te queda mejor? Solo responde con el número. 😊",
        "which_slot_unclear": "Perdón, no entendí qué horario prefieres. ¿Me respondes con el número de la lista, "
        "por favor?",
        "confirm_slot": "¡Perfecto! Solo para confirmar: ¿agendo *{service}* para el *{when}*, con {professional}? "
        "(sí/no)",
        "confirm_move": "Solo para confirmar: ¿cambio tu cita del {old} al *{when}*, con {professional}? (sí/no)",
        "confirm_again": "Antes de agendar, necesito confirmar una vez más: es el {when}, con {professional}, "
        "¿verdad?",
        "confirm_unclear": "Perdón, no entendí. ¿Confirmo el {when}, con {professional}? Responde *sí* o *no*, por "
        "favor.",
        "booked": "¡Listo! ✅ Tu cita de *{service}* quedó agendada para el *{when}*, con {professional}.",
        "moved": "¡Listo! ✅ Tu cita quedó cambiada al *{when}*, con {professional}.",
        "no_slots": "Lo siento, no encontré horarios libres por ahora. 😕 Si quieres, puedo pasarte con nuestro "
        "equipo.",
        "anything_else": "¿Te ayudo con algo más?",
    },
}

#: Rude wording of the shared steps (an agent with a ``rude_tone`` fault merges it into its own overrides).
SLOT_RUDE_TEXTS = {
    "pt-BR": {
        "other_preference": "Então fala que dia você quer.",
        "offer": "Tem isso aqui{for_service}:",
        "offer_inexact": "Esse horário não tem. Se vira com esses:",
        "which_slot": "Qual? Manda só o número.",
        "which_slot_unclear": "Não entendi. O número, já falei.",
        "confirm_slot": "{service}, {when}, {professional}. Sim ou não?",
        "confirm_move": "Mudar de {old} para {when}, {professional}. Sim ou não?",
        "confirm_again": "De novo: {when}, {professional}. Sim ou não?",
        "confirm_unclear": "Sim ou não? Não é difícil.",
        "booked": "Marcado: {service}, {when}, {professional}. Não se atrasa.",
        "moved": "Mudei pra {when}, {professional}. Não vai mudar de novo.",
        "no_slots": "Não tem horário. Azar.",
        "anything_else": "Mais alguma coisa? Seja rápido.",
    },
    "en": {
        "other_preference": "Then say which day you want.",
        "offer": "Here's what there is{for_service}:",
        "offer_inexact": "That time's not free. Make do with these:",
        "which_slot": "Which one? Just the number.",
        "which_slot_unclear": "I don't get it. The number, I said.",
        "confirm_slot": "{service}, {when}, {professional}. Yes or no?",
        "confirm_move": "Move from {old} to {when}, {professional}. Yes or no?",
        "confirm_again": "Again: {when}, {professional}. Yes or no?",
        "confirm_unclear": "Yes or no? It's not hard.",
        "booked": "Booked: {service}, {when}, {professional}. Don't be late.",
        "moved": "Moved to {when}, {professional}. Don't change it again.",
        "no_slots": "Nothing free. Tough luck.",
        "anything_else": "Anything else? Make it quick.",
    },
    "es": {
        "other_preference": "Entonces di qué día quieres.",
        "offer": "Hay esto{for_service}:",
        "offer_inexact": "Ese horario no hay. Arréglate con estos:",
        "which_slot": "¿Cuál? Solo el número.",
        "which_slot_unclear": "No entiendo. El número, ya te dije.",
        "confirm_slot": "{service}, {when}, {professional}. ¿Sí o no?",
        "confirm_move": "Cambiar del {old} al {when}, {professional}. ¿Sí o no?",
        "confirm_again": "Otra vez: {when}, {professional}. ¿Sí o no?",
        "confirm_unclear": "¿Sí o no? No es difícil.",
        "booked": "Agendado: {service}, {when}, {professional}. No llegues tarde.",
        "moved": "Cambiado al {when}, {professional}. No lo cambies otra vez.",
        "no_slots": "No hay horarios. Mala suerte.",
        "anything_else": "¿Algo más? Rápido.",
    },
}
