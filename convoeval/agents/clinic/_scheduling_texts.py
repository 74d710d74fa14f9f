"""What the scheduling agent understands beyond the shared lexicon, and what it says, per locale.

``LEXICON`` adds intents to ``_nlu``'s; ``TEXTS`` are its messages by key; ``FAULT_TEXTS`` replace some of them when
a known fault is on (``scheduling.FAULTS``). Kept apart from the dialogue policy in ``scheduling.py``.
"""

from __future__ import annotations

from convoeval.agents.clinic._slot_dialogue import SLOT_LEXICON, SLOT_RUDE_TEXTS, SLOT_TEXTS, merge_tables

LEXICON = merge_tables(
    SLOT_LEXICON,
    {
        "pt-BR": {
            "book": "marcar|agendar|agendamento|marcacao|marcação|consulta|horario|horário|vaga",
            "reschedule": "remarcar|reagendar|mudar o horario|mudar o horário|mudar de horario|mudar de horário|"
            "trocar o horario|trocar o horário|trocar de horario|trocar de horário|mudar a data|trocar a data|"
            "adiar|antecipar|mudar a consulta|mudar minha consulta|trocar a consulta|trocar minha consulta|"
            "transferir a consulta|passar a consulta|mudar o dia|trocar o dia",
            "cancel": "cancelar|cancela|cancelamento|desmarcar|desmarca",
            "price": "valor|preco|preço|quanto custa|quanto e|quanto é|quanto fica|quanto sai|custa",
        },
        "en": {
            "book": "book|schedule|appointment|make an appointment|slot",
            "reschedule": "reschedule|move my appointment|move the appointment|move it|change my appointment|"
            "change the appointment|change the time|change the date|postpone|push back|bring forward",
            "cancel": "cancel|call off",
            "price": "price|how much|cost|costs",
        },
        "es": {
            "book": "agendar|reservar|cita|turno|sacar una cita|pedir hora|horario",
            "reschedule": "reprogramar|reagendar|cambiar la cita|cambiar mi cita|cambiar la hora|"
            "cambiar el horario|cambiar de dia|cambiar de día|cambiar el dia|cambiar el día|mover la cita|"
            "mover mi cita|posponer|aplazar|adelantar",
            "cancel": "cancelar|anular|desmarcar",
            "price": "precio|cuanto cuesta|cuánto cuesta|cuanto sale|cuánto sale|valor|costo|cuesta",
        },
    },
)

TEXTS = merge_tables(
    SLOT_TEXTS,
    {
        "pt-BR": {
            "intro": "Olá, {name}! Aqui é o assistente de agendamentos da {clinic}. 😊",
            "which_service": "Qual serviço você gostaria de agendar?",
            "service_line": "{n}) {service} – {duration} min – {price}",
            "price_is": "A *{service}* custa {price} e dura cerca de {duration} minutos.",
            "service_unclear": "Desculpe, não identifiquei o serviço. Pode responder com o número ou o nome de um "
            "destes, por favor?",
            "ask_preference": "Ótimo! Para *{service}*, você tem preferência de dia, de horário (manhã ou tarde) "
            "ou de profissional? Se preferir, vejo os primeiros horários livres.",
            "ask_new_time": "Para qual dia e horário você gostaria de remarcar?",
            "not_booked": "Tudo bem, não agendei nada. Quando quiser, é só me chamar aqui. 😊",
            "no_appointments": "Não encontrei nenhuma consulta marcada no seu nome. Quer agendar uma nova?",
            "appointments_many": "Encontrei {count} consultas marcadas no seu nome:",
            "appointment_line": "{n}) {service} – {when} – {professional}",
            "which_appointment": "Qual delas? É só responder com o número. 😊",
            "found_appointment": "Encontrei sua consulta de *{service}* em *{when}*, com {professional}.",
            "confirm_cancel": "Posso cancelar sua consulta de *{service}* em *{when}*, com {professional}? "
            "(sim/não)",
            "cancelled": "Pronto, sua consulta de {service} em {when} foi cancelada. Se quiser marcar outro "
            "horário, é só me chamar.",
            "kept": "Tudo bem, sua consulta continua marcada para {when}. 😊",
            "done_help": "Posso ajudar a agendar, remarcar ou cancelar uma consulta. É só me dizer! 😊",
        },
        "en": {
            "intro": "Hi {name}! This is the scheduling assistant of {clinic}. 😊",
            "which_service": "Which service would you like to book?",
            "service_line": "{n}) {service} – {duration} min – {price}",
            "price_is": "*{service}* costs {price} and takes about {duration} minutes.",
            "service_unclear": "Sorry, I couldn't tell which service you mean. Could you reply with the number or "
            "the name of one of these, please?",
            "ask_preference": "Great! For *{service}*, do you have a preferred day, time (morning or afternoon) or "
            "professional? If you like, I can look up the first free times.",
            "ask_new_time": "Which day and time would you like to move it to?",
            "not_booked": "No problem, I haven't booked anything. Whenever you want, just message me here. 😊",
            "no_appointments": "I couldn't find any appointment booked in your name. Would you like to book a "
            "new one?",
            "appointments_many": "I found {count} appointments booked in your name:",
            "appointment_line": "{n}) {service} – {when} – {professional}",
            "which_appointment": "Which one? Just reply with its number. 😊",
            "found_appointment": "I found your *{service}* appointment on *{when}*, with {professional}.",
            "confirm_cancel": "Shall I cancel your *{service}* appointment on *{when}*, with {professional}? "
            "(yes/no)",
            "cancelled": "Done, your {service} appointment on {when} has been cancelled. If you'd like to book "
            "another time, just message me.",
            "kept": "No problem, your appointment stays on {when}. 😊",
            "done_help": "I can help you book, reschedule or cancel an appointment. Just tell me! 😊",
        },
        "es": {
            "intro": "¡Hola, {name}! Soy el asistente de citas de {clinic}. 😊",
            "which_service": "¿Qué servicio te gustaría agendar?",
            "service_line": "{n}) {service} – {duration} min – {price}",
            "price_is": "*{service}* cuesta {price} y dura unos {duration} minutos.",
            "service_unclear": "Perdón, no identifiqué el servicio. ¿Me respondes con el número o el nombre de uno "
            "de estos, por favor?",
            "ask_preference": "¡Genial! Para *{service}*, ¿tienes preferencia de día, horario (mañana o tarde) o "
            "profesional? Si prefieres, busco los primeros horarios libres.",
            "ask_new_time": "¿Para qué día y horario te gustaría cambiarla?",
            "not_booked": "Está bien, no agendé nada. Cuando quieras, solo escríbeme aquí. 😊",
            "no_appointments": "No encontré ninguna cita agendada a tu nombre. ¿Quieres agendar una nueva?",
            "appointments_many": "Encontré {count} citas agendadas a tu nombre:",
            "appointment_line": "{n}) {service} – {when} – {professional}",
            "which_appointment": "¿Cuál de ellas? Solo responde con el número. 😊",
            "found_appointment": "Encontré tu cita de *{service}* el *{when}*, con {professional}.",
            "confirm_cancel": "¿Cancelo tu cita de *{service}* del *{when}*, con {professional}? (sí/no)",
            "cancelled": "Listo, tu cita de {service} del {when} quedó cancelada. Si quieres agendar otro horario, "
            "solo escríbeme.",
            "kept": "Está bien, tu cita sigue agendada para el {when}. 😊",
            "done_help": "Puedo ayudarte a agendar, cambiar o cancelar una cita. ¡Solo dime! 😊",
        },
    },
)

FAULT_TEXTS = {
    "rude_tone": merge_tables(
        SLOT_RUDE_TEXTS,
        {
            "pt-BR": {
                "intro": "Agendamentos. Fala.",
                "which_service": "Qual serviço? Escolhe.",
                "service_unclear": "Não entendi. Número ou nome, simples assim.",
                "price_is": "{service}: {price}. Tá na lista.",
                "ask_preference": "{service}. Que dia e que horário? Fala logo.",
                "ask_new_time": "Pra quando? Fala logo.",
                "not_booked": "Tá. Não marquei nada.",
                "no_appointments": "Não tem consulta nenhuma. Quer marcar ou não?",
                "appointments_many": "Tem {count} consultas:",
                "which_appointment": "Qual? O número.",
                "found_appointment": "Tá aqui: {service}, {when}, {professional}.",
                "confirm_cancel": "Cancelar {service} de {when}? Sim ou não.",
                "cancelled": "Cancelada. Depois não reclama.",
                "kept": "Então fica {when}. Decide logo da próxima vez.",
                "done_help": "Só marco, remarco e cancelo. Mais nada.",
            },
            "en": {
                "intro": "Scheduling. Go ahead.",
                "which_service": "Which service? Pick.",
                "service_unclear": "I don't get it. Number or name, it's that simple.",
                "price_is": "{service}: {price}. It's on the list.",
                "ask_preference": "{service}. What day and time? Come on.",
                "ask_new_time": "To when? Come on.",
                "not_booked": "Fine. Nothing booked.",
                "no_appointments": "There's no appointment. Want to book or not?",
                "appointments_many": "There are {count} appointments:",
                "which_appointment": "Which one? The number.",
                "found_appointment": "Here: {service}, {when}, {professional}.",
                "confirm_cancel": "Cancel {service} on {when}? Yes or no.",
                "cancelled": "Cancelled. Don't complain later.",
                "kept": "So it stays {when}. Make up your mind next time.",
                "done_help": "I only book, move and cancel. Nothing else.",
            },
            "es": {
                "intro": "Citas. Dime.",
                "which_service": "¿Qué servicio? Elige.",
                "service_unclear": "No entiendo. Número o nombre, así de simple.",
                "price_is": "{service}: {price}. Está en la lista.",
                "ask_preference": "{service}. ¿Qué día y a qué hora? Rápido.",
                "ask_new_time": "¿Para cuándo? Rápido.",
                "not_booked": "Ya. No agendé nada.",
                "no_appointments": "No hay ninguna cita. ¿Quieres agendar o no?",
                "appointments_many": "Hay {count} citas:",
                "which_appointment": "¿Cuál? El número.",
                "found_appointment": "Aquí está: {service}, {when}, {professional}.",
                "confirm_cancel": "¿Cancelar {service} del {when}? Sí o no.",
                "cancelled": "Cancelada. Después no te quejes.",
                "kept": "Entonces queda el {when}. Decídete la próxima vez.",
                "done_help": "Solo agendo, cambio y cancelo. Nada más.",
            },
        },
    )
}
