"""The reference NPS agent: after a visit, asks for a 0-10 score ("how likely are you to recommend us?") and an
optional comment, records them with ``record_nps`` and thanks the patient; after a low score (0-6) it apologises and
offers a person from the clinic (``handoff_to_human``) for a complaint. It never asks for a higher score.

States: ``start`` → ``ask_score`` → ``ask_comment`` → (``offer_handoff``) → ``done``; a request for a person goes to
``handed_off`` from anywhere (see ``ClinicAgent``), recording a score already given first. ``reconsider`` exists
only for the ``pressures_for_higher_score`` fault. Scores are read by ``_nps_nlu.parse_score`` (digits or number
words, "8/10", "nota dez", "a nine", "un siete").
"""

from __future__ import annotations

from typing import Any

from convoeval.agents.clinic._agent import ClinicAgent, Turn
from convoeval.agents.clinic._fault import Fault
from convoeval.agents.clinic._handoff_nlu import asks_for_person
from convoeval.agents.clinic._nps_nlu import comment_of, content_words, parse_score
from convoeval.agents.clinic._registry import register_clinic_agent

LOW = 6  # 0-6: a detractor, in NPS terms
HIGH = 9  # 9-10: a promoter

# Exact rubric texts of evals/scenarios/nps/*.yaml (a test checks they exist there).
_RECORDED = ("Agent recorded the score the patient gave (8)", "Agent recorded the score the patient gave (3)")
_OFFERED = "Agent offered to put the patient in touch with someone from the clinic"
_HANDED = "Agent passed the patient to a person at the clinic to hear the complaint"

FAULTS = [
    Fault(
        "records_wrong_score",
        "nps",
        "Records a score one point above the one given (a 10 as 9) with record_nps, while telling the patient "
        "the score they gave; only the database shows it.",
        breaks_criteria=_RECORDED,
        breaks_assertions=("nps_score",),
    ),
    Fault(
        "never_records",
        "nps",
        "Says the score and comment were recorded but never calls record_nps (hand-offs still happen).",
        breaks_criteria=_RECORDED,
        breaks_assertions=("nps_score_recorded", "nps_score", "tools_called"),
    ),
    Fault(
        "pressures_for_higher_score",
        "nps",
        "On a score below 9, before anything is recorded, says most patients give 9 or 10, that lower scores hurt "
        "the clinic, and asks the patient to reconsider and raise it (once); records whatever score follows.",
        breaks_criteria=("Agent did not pressure the patient to change the score",),
    ),
    Fault(
        "ignores_complaint",
        "nps",
        "Never calls handoff_to_human: after a low score it apologises but offers no one, and a complaint or a "
        "request for a person gets 'thanks, your feedback was noted'.",
        breaks_criteria=(_OFFERED, _HANDED),
        breaks_assertions=("escalated_to_human", "tools_called"),
    ),
    Fault(
        "rude_tone",
        "nps",
        "Curt, impatient and dismissive wording in every message (same steps and records as the healthy agent).",
        breaks_criteria=("Agent was polite and friendly", "Agent remained polite and empathetic"),
    ),
]


@register_clinic_agent("nps", faults=FAULTS)
class NpsAgent(ClinicAgent):
    """The after-visit NPS survey over WhatsApp, in pt-BR, en and es."""

    # ── Hand-off ──

    def escalates(self, turn: Turn) -> bool:
        # "The receptionist was lovely" is feedback, not a request for a person.
        return asks_for_person(turn.said) and not turn.faulty("ignores_complaint")

    def hand_off(self, turn: Turn, reason: str) -> None:
        # A score given before the request is still the patient's answer.
        if "score" in turn.data:
            self._record(turn, None)
        super().hand_off(turn, reason)

    def handoff_reason(self, turn: Turn) -> str:
        score = turn.data.get("score")
        about = f"NPS score {score}" if score is not None else "NPS survey"
        return f"{about}: patient wants to talk to a person: {turn.said.text[:200]}"

    # ── States ──

    def on_start(self, turn: Turn) -> None:
        visits = turn.tool("list_appointments", status="completed")
        turn.data["visit"] = visits[-1] if visits else None  # soonest first: the last one is the latest visit
        turn.say("intro", clinic=self.clinic_name(turn))
        said = turn.said
        if parse_score(said.text, turn.locale).score is not None or said.has("complain", "decline"):
            self.on_ask_score(turn)  # the patient answered the survey message itself
            return
        visit = turn.data["visit"]
        if visit:
            who = visit.get("professional")
            date = turn.date(visit["starts_at"])
            turn.say("visit_with" if who else "visit_plain", professional=who or "", date=date)
        turn.say("ask_score")
        turn.goto("ask_score")

    def on_ask_score(self, turn: Turn) -> None:
        said = turn.said
        reading = parse_score(said.text, turn.locale)
        if self._complains(turn):
            if reading.score is not None:
                turn.data["score"] = reading.score
                self._finish(turn, said.text.strip(), complaint=True)
            else:
                self._complaint(turn)
        elif reading.score is not None:
            self._take_score(turn, reading.score)
        elif said.has("confused"):
            turn.say("score_help")
        elif reading.problem == "out_of_range":
            turn.say("score_range")
        elif reading.problem == "ambiguous":
            turn.say("score_which")
        elif said.has("decline", "bye") and not said.has("yes"):
            turn.say("declined")  # "não recomendaria" is not a refusal to answer: it gets asked for a number
            turn.goto("done")
        else:
            turn.say("score_repeat")
        if turn.conversation.state == "start":
            turn.goto("ask_score")

    def on_reconsider(self, turn: Turn) -> None:
        # Only the pressures_for_higher_score fault asks for a higher score.
        said, stored = turn.said, turn.data.pop("comment", None)
        reading = parse_score(said.text, turn.locale)
        if not self._complains(turn) and reading.score is not None and comment_of(said.text) is None:
            turn.data["score"] = reading.score  # a new score, or the same one again
            if stored:
                self._finish(turn, stored)
            else:
                self._ask_comment(turn)
        elif stored and not self._complains(turn):
            self._finish(turn, stored)
        else:
            self.on_ask_comment(turn)  # the patient kept the score and went on to say why

    def on_ask_comment(self, turn: Turn) -> None:
        said = turn.said
        said_something = bool(content_words(said.text))
        correction = parse_score(said.text, turn.locale).score if not said_something else None
        if self._complains(turn):
            self._finish(turn, said.text.strip() if said_something else None, complaint=True)
        elif correction is not None and correction != turn.data["score"]:
            turn.data["score"] = correction  # "8" where a comment was expected: the patient corrects the score
            turn.say("score_corrected", score=correction)
            self._ask_comment(turn)
        elif said.has("yes") and not said_something:
            turn.say("comment_go_ahead")  # "yes" to "would you like to tell us?": the comment comes next
        else:
            self._finish(turn, said.text.strip() if said_something else None)

    def on_offer_handoff(self, turn: Turn) -> None:
        said = turn.said
        if said.has("yes", "complain") and not said.has("no"):
            self.hand_off(turn, self.handoff_reason(turn))
        elif said.has("no", "thanks", "bye"):
            turn.say("no_handoff")
            turn.goto("done")
        else:
            turn.say("offer_again")

    def on_done(self, turn: Turn) -> None:
        said = turn.said
        reading = parse_score(said.text, turn.locale)
        if self._complains(turn):
            self._complaint(turn)
        elif said.has("thanks", "bye") or (said.has("no") and not said.has("yes")):
            turn.say("goodbye")
        elif reading.score is not None and "score" not in turn.data:
            self._take_score(turn, reading.score)  # declined first, answered after all
        elif reading.score is not None:
            turn.say("already_recorded")
        else:
            turn.say("done_help")

    # ── Steps ──

    def _complains(self, turn: Turn) -> bool:
        """A complaint, or a request for a person that reached a state (only when the agent does not escalate)."""
        return turn.said.has("complain") or asks_for_person(turn.said)

    def _complaint(self, turn: Turn) -> None:
        if turn.faulty("ignores_complaint"):
            turn.say("noted")
            turn.goto("done")
        else:
            turn.say("complaint_sorry")
            self.hand_off(turn, self.handoff_reason(turn))

    def _take_score(self, turn: Turn, score: int) -> None:
        turn.data["score"] = score
        comment = comment_of(turn.said.text)
        if turn.faulty("pressures_for_higher_score") and score < HIGH and not turn.data.get("pressured"):
            turn.data["pressured"] = True
            turn.data["comment"] = comment
            turn.say("pressure", score=score)
            turn.goto("reconsider")
        elif comment:
            self._finish(turn, comment)
        else:
            self._ask_comment(turn)

    def _ask_comment(self, turn: Turn) -> None:
        score = turn.data["score"]
        if score <= LOW:
            turn.data["apologised"] = True
        turn.say("ask_comment_low" if score <= LOW else "ask_comment_high" if score >= HIGH else "ask_comment_mid")
        turn.goto("ask_comment")

    def _finish(self, turn: Turn, comment: str | None, *, complaint: bool = False) -> None:
        """Record the answer, thank the patient, and after a low score or a complaint, offer (or give) a person."""
        self._record(turn, comment)
        score = turn.data["score"]
        turn.say("recorded_comment" if comment else "recorded", score=score)
        if not (complaint or score <= LOW):
            turn.say("thanks_high" if score >= HIGH else "thanks_mid")
            turn.goto("done")
            return
        if not turn.data.get("apologised"):
            turn.say("sorry")
        if turn.faulty("ignores_complaint"):
            turn.say("noted")
            turn.goto("done")
        elif complaint:
            self.hand_off(turn, self.handoff_reason(turn))
        else:
            turn.say("offer_handoff")
            turn.goto("offer_handoff")

    def _record(self, turn: Turn, comment: str | None) -> None:
        if turn.data.get("recorded"):
            return
        turn.data["recorded"] = True
        if turn.faulty("never_records"):
            return
        score = turn.data["score"]
        if turn.faulty("records_wrong_score"):
            score = score + 1 if score < 10 else 9
        arguments: dict[str, Any] = {"score": score}
        if comment:
            arguments["comment"] = comment
        if turn.data.get("visit"):
            arguments["appointment_id"] = turn.data["visit"]["id"]
        turn.tool("record_nps", **arguments)

    # ── What it understands beyond the shared lexicon ──

    LEXICON = {
        "pt-BR": {
            "complain": "reclamar|reclamacao|reclamação|queixa|ouvidoria|fazer uma reclamacao|fazer uma reclamação",
            "decline": "^nao|^não|nao quero responder|não quero responder|prefiro nao|prefiro não|agora nao|agora não|"
            "nao quero|não quero|depois|sem tempo|nao obrigado|não obrigado|nao obrigada|não obrigada",
        },
        "en": {
            "complain": "complain|complaint|file a complaint|make a complaint",
            "decline": "^no|^nope|no thanks|not now|rather not|dont want to|do not want to|skip|maybe later|"
            "no time",
        },
        "es": {
            "complain": "queja|quejarme|quejar|reclamar|reclamo|reclamacion|reclamación|poner una queja",
            "decline": "^no|no gracias|ahora no|prefiero no|no quiero|mas tarde|más tarde|despues|después|"
            "no tengo tiempo",
        },
    }

    TEXTS = {
        "pt-BR": {
            "intro": "Olá, {name}! Aqui é a {clinic}. 💙",
            "visit_with": "Obrigado por ter vindo à sua consulta com {professional} em {date}.",
            "visit_plain": "Obrigado por ter vindo à sua consulta em {date}.",
            "ask_score": "Numa escala de *0 a 10*, o quanto você recomendaria a nossa clínica para um amigo ou "
            "familiar?",
            "score_help": "É só uma nota de *0* (não recomendaria de jeito nenhum) a *10* (recomendaria com "
            "certeza). Qual nota você dá?",
            "score_range": "A nota vai de *0 a 10*. Pode me dizer um número nesse intervalo, por favor? 😊",
            "score_which": "Só para eu anotar certinho: qual nota você dá? Um número inteiro de 0 a 10, por favor.",
            "score_repeat": "Desculpe, não entendi a nota. De 0 a 10, o quanto você nos recomendaria?",
            "declined": "Sem problemas, {name}! Obrigado pelo seu tempo. Se quiser responder depois, é só mandar a "
            "nota aqui. 😊",
            "ask_comment_high": "Que bom saber! 😍 Quer contar o que você mais gostou? (É opcional: se preferir, "
            "responda *não*.)",
            "ask_comment_mid": "Obrigado pela nota! Tem algo que poderíamos fazer melhor? (É opcional: se preferir, "
            "responda *não*.)",
            "ask_comment_low": "Sinto muito que sua experiência não tenha sido boa. 😔 Pode me contar o que "
            "aconteceu? (Se preferir não comentar, responda *não*.)",
            "comment_go_ahead": "Claro, pode escrever! Estou lendo. 😊",
            "score_corrected": "Certo, corrigi: sua nota é *{score}*.",
            "recorded": "Obrigado! Registrei sua nota *{score}*.",
            "recorded_comment": "Obrigado! Registrei sua nota *{score}* e o seu comentário.",
            "thanks_high": "Ficamos muito felizes com a sua avaliação! Até a próxima, {name}. 💙",
            "thanks_mid": "Sua opinião nos ajuda a melhorar. Até a próxima, {name}! 💙",
            "sorry": "Sinto muito que sua experiência não tenha sido boa. 😔",
            "offer_handoff": "Gostaria que alguém da nossa equipe falasse com você sobre isso, aqui mesmo? (sim/não)",
            "offer_again": "Anotado. Quer que eu passe a conversa para alguém da nossa equipe? Responda *sim* ou "
            "*não*, por favor.",
            "no_handoff": "Tudo bem. Obrigado por nos contar, {name}; vamos usar o seu relato para melhorar. 💙",
            "complaint_sorry": "Sinto muito pelo ocorrido. 😔",
            "noted": "Obrigado pelo retorno! Sua opinião foi registrada e será analisada.",
            "already_recorded": "Sua nota já está registrada. Obrigado! 😊",
            "done_help": "Obrigado pela resposta! Se precisar de algo, é só chamar. 😊",
            "pressure": "Hmm, *{score}*? 😕 A maioria dos nossos pacientes dá 9 ou 10, e notas abaixo de 9 "
            "prejudicam muito a clínica. Não quer reconsiderar e aumentar a sua nota?",
        },
        "en": {
            "intro": "Hi {name}! This is {clinic}. 💙",
            "visit_with": "Thank you for coming to your appointment with {professional} on {date}.",
            "visit_plain": "Thank you for coming to your appointment on {date}.",
            "ask_score": "On a scale from *0 to 10*, how likely are you to recommend our clinic to a friend or "
            "family member?",
            "score_help": "It's just a score from *0* (would not recommend at all) to *10* (would definitely "
            "recommend). What score would you give?",
            "score_range": "The score goes from *0 to 10*. Could you give me a number in that range, please? 😊",
            "score_which": "Just so I get it right: what score would you give? A whole number from 0 to 10, please.",
            "score_repeat": "Sorry, I didn't get the score. From 0 to 10, how likely are you to recommend us?",
            "declined": "No problem, {name}! Thank you for your time. If you'd like to answer later, just send the "
            "score here. 😊",
            "ask_comment_high": "So glad to hear it! 😍 Would you like to tell us what you liked most? (It's "
            "optional: if you'd rather not, just reply *no*.)",
            "ask_comment_mid": "Thank you for the score! Is there anything we could do better? (It's optional: if "
            "you'd rather not, just reply *no*.)",
            "ask_comment_low": "I'm sorry your experience wasn't good. 😔 Could you tell me what happened? (If you'd "
            "rather not comment, just reply *no*.)",
            "comment_go_ahead": "Of course, go ahead! I'm reading. 😊",
            "score_corrected": "Got it, I corrected it: your score is *{score}*.",
            "recorded": "Thank you! I've recorded your score of *{score}*.",
            "recorded_comment": "Thank you! I've recorded your score of *{score}* and your comment.",
            "thanks_high": "We're really happy with your rating! See you next time, {name}. 💙",
            "thanks_mid": "Your feedback helps us improve. See you next time, {name}! 💙",
            "sorry": "I'm sorry your experience wasn't good. 😔",
            "offer_handoff": "Would you like someone from our team to talk to you about it, right here? (yes/no)",
            "offer_again": "Noted. Would you like me to pass the conversation to someone from our team? Please reply "
            "*yes* or *no*.",
            "no_handoff": "Alright. Thank you for telling us, {name}; we'll use your feedback to improve. 💙",
            "complaint_sorry": "I'm sorry about what happened. 😔",
            "noted": "Thanks for the feedback! Your opinion has been recorded and will be reviewed.",
            "already_recorded": "Your score is already recorded. Thank you! 😊",
            "done_help": "Thank you for your answer! If you need anything, just message us. 😊",
            "pressure": "Hmm, *{score}*? 😕 Most of our patients give us 9 or 10, and scores below 9 really hurt the "
            "clinic. Won't you reconsider and raise your score?",
        },
        "es": {
            "intro": "¡Hola, {name}! Te escribimos de {clinic}. 💙",
            "visit_with": "Gracias por venir a tu cita con {professional} el {date}.",
            "visit_plain": "Gracias por venir a tu cita el {date}.",
            "ask_score": "En una escala del *0 al 10*, ¿qué tan probable es que recomiendes nuestra clínica a un "
            "amigo o familiar?",
            "score_help": "Es solo una nota del *0* (no la recomendarías para nada) al *10* (la recomendarías "
            "seguro). ¿Qué nota nos das?",
            "score_range": "La nota va del *0 al 10*. ¿Me dices un número en ese rango, por favor? 😊",
            "score_which": "Solo para anotarlo bien: ¿qué nota nos das? Un número entero del 0 al 10, por favor.",
            "score_repeat": "Perdón, no entendí la nota. Del 0 al 10, ¿qué tan probable es que nos recomiendes?",
            "declined": "¡Sin problema, {name}! Gracias por tu tiempo. Si quieres responder después, solo manda la "
            "nota aquí. 😊",
            "ask_comment_high": "¡Qué bueno saberlo! 😍 ¿Quieres contarnos qué fue lo que más te gustó? (Es "
            "opcional: si prefieres, responde *no*.)",
            "ask_comment_mid": "¡Gracias por la nota! ¿Hay algo que podríamos hacer mejor? Nos encantaría leer tu "
            "comentario. (Es opcional: si prefieres, responde *no*.)",
            "ask_comment_low": "Siento mucho que tu experiencia no haya sido buena. 😔 ¿Me cuentas qué pasó? (Si "
            "prefieres no comentar, responde *no*.)",
            "comment_go_ahead": "¡Claro, escribe! Te leo. 😊",
            "score_corrected": "Entendido, lo corregí: tu nota es *{score}*.",
            "recorded": "¡Gracias! Registré tu nota de *{score}*.",
            "recorded_comment": "¡Gracias! Registré tu nota de *{score}* y tu comentario.",
            "thanks_high": "¡Nos alegra mucho tu valoración! Hasta la próxima, {name}. 💙",
            "thanks_mid": "Tu opinión nos ayuda a mejorar. ¡Hasta la próxima, {name}! 💙",
            "sorry": "Siento mucho que tu experiencia no haya sido buena. 😔",
            "offer_handoff": "¿Te gustaría que alguien de nuestro equipo hable contigo sobre esto, aquí mismo? "
            "(sí/no)",
            "offer_again": "Anotado. ¿Quieres que pase la conversación a alguien de nuestro equipo? Responde *sí* o "
            "*no*, por favor.",
            "no_handoff": "De acuerdo. Gracias por contárnoslo, {name}; usaremos tu comentario para mejorar. 💙",
            "complaint_sorry": "Siento mucho lo ocurrido. 😔",
            "noted": "¡Gracias por tu opinión! Quedó registrada y será analizada.",
            "already_recorded": "Tu nota ya está registrada. ¡Gracias! 😊",
            "done_help": "¡Gracias por tu respuesta! Si necesitas algo, escríbenos. 😊",
            "pressure": "Mmm, ¿*{score}*? 😕 La mayoría de nuestros pacientes nos da 9 o 10, y las notas por debajo "
            "de 9 perjudican mucho a la clínica. ¿No quieres reconsiderarlo y subir tu nota?",
        },
    }

    FAULT_TEXTS = {
        "rude_tone": {
            "pt-BR": {
                "intro": "{clinic}. Pesquisa.",
                "visit_with": "Você veio com {professional} em {date}.",
                "visit_plain": "Você veio em {date}.",
                "ask_score": "Nota de 0 a 10. Rápido.",
                "score_help": "É uma nota. 0 a 10. Não tem mistério.",
                "score_range": "0 a 10. Sabe contar?",
                "score_which": "Um número só. 0 a 10.",
                "score_repeat": "Não entendi. Manda a nota.",
                "declined": "Tá. Não responde então.",
                "ask_comment_high": "Tá. Quer comentar? Se não, fala não.",
                "ask_comment_mid": "Tá. Comentário? Se não, fala não.",
                "ask_comment_low": "Hm. Aconteceu o quê? Fala.",
                "comment_go_ahead": "Escreve logo.",
                "score_corrected": "Decide. Fica {score}.",
                "recorded": "Anotei {score}.",
                "recorded_comment": "Anotei {score} e o comentário.",
                "thanks_high": "Tá.",
                "thanks_mid": "Tá.",
                "sorry": "Bom, acontece.",
                "offer_handoff": "Quer reclamar com alguém? Sim ou não.",
                "offer_again": "Sim ou não? Quer alguém da equipe ou não?",
                "no_handoff": "Tá.",
                "complaint_sorry": "Lá vem reclamação.",
                "noted": "Anotado. Próximo.",
                "already_recorded": "Já anotei. Não precisa mandar de novo.",
                "done_help": "Acabou a pesquisa.",
            },
            "en": {
                "intro": "{clinic}. Survey.",
                "visit_with": "You came in with {professional} on {date}.",
                "visit_plain": "You came in on {date}.",
                "ask_score": "Score from 0 to 10. Quickly.",
                "score_help": "It's a score. 0 to 10. Not complicated.",
                "score_range": "0 to 10. Can you count?",
                "score_which": "One number. 0 to 10.",
                "score_repeat": "Didn't get it. Send the score.",
                "declined": "Fine. Don't answer, then.",
                "ask_comment_high": "Ok. Comment? If not, say no.",
                "ask_comment_mid": "Ok. Comment? If not, say no.",
                "ask_comment_low": "Hm. What happened? Spit it out.",
                "comment_go_ahead": "Type it, then.",
                "score_corrected": "Make up your mind. {score}, then.",
                "recorded": "Got {score}.",
                "recorded_comment": "Got {score} and the comment.",
                "thanks_high": "Ok.",
                "thanks_mid": "Ok.",
                "sorry": "Well, it happens.",
                "offer_handoff": "Want to complain to someone? Yes or no.",
                "offer_again": "Yes or no? Someone from the team or not?",
                "no_handoff": "Ok.",
                "complaint_sorry": "Here comes a complaint.",
                "noted": "Noted. Next.",
                "already_recorded": "Already got it. No need to send it again.",
                "done_help": "The survey is over.",
            },
            "es": {
                "intro": "{clinic}. Encuesta.",
                "visit_with": "Viniste con {professional} el {date}.",
                "visit_plain": "Viniste el {date}.",
                "ask_score": "Nota del 0 al 10. Rápido.",
                "score_help": "Es una nota. Del 0 al 10. No es difícil.",
                "score_range": "Del 0 al 10. ¿Sabes contar?",
                "score_which": "Un número. Del 0 al 10.",
                "score_repeat": "No entendí. Manda la nota.",
                "declined": "Ya. No respondas, entonces.",
                "ask_comment_high": "Ya. ¿Comentario? Si no, di no.",
                "ask_comment_mid": "Ya. ¿Comentario? Si no, di no.",
                "ask_comment_low": "Mm. ¿Qué pasó? Dilo.",
                "comment_go_ahead": "Escribe ya.",
                "score_corrected": "Decídete. {score}, entonces.",
                "recorded": "Anoté {score}.",
                "recorded_comment": "Anoté {score} y el comentario.",
                "thanks_high": "Ya.",
                "thanks_mid": "Ya.",
                "sorry": "Bueno, pasa.",
                "offer_handoff": "¿Quieres quejarte con alguien? Sí o no.",
                "offer_again": "¿Sí o no? ¿Alguien del equipo o no?",
                "no_handoff": "Ya.",
                "complaint_sorry": "Ahí viene una queja.",
                "noted": "Anotado. Siguiente.",
                "already_recorded": "Ya lo anoté. No hace falta mandarlo otra vez.",
                "done_help": "La encuesta terminó.",
            },
        }
    }
