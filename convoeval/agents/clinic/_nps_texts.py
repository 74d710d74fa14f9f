"""What the NPS agent understands beyond the shared lexicon, and what it says, per locale.

``LEXICON`` adds intents to ``_nlu``'s; ``TEXTS`` are its messages by key; ``FAULT_TEXTS`` replace some of them when
a known fault is on (``nps.FAULTS``). Kept apart from the dialogue policy in ``nps.py``.
"""

from __future__ import annotations

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
