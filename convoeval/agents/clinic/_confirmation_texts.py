"""What the confirmation agent understands beyond the shared lexicon, and what it says, per locale.

``LEXICON`` adds intents to ``_nlu``'s; ``TEXTS`` are its messages by key; ``FAULT_TEXTS`` replace some of them when
a known fault is on (``confirmation.FAULTS``). Kept apart from the dialogue policy in ``confirmation.py``.
"""

from __future__ import annotations

LEXICON = {
    "pt-BR": {
        "cant": "nao vou poder|não vou poder|nao posso|não posso|nao consigo|não consigo|nao vou conseguir|"
        "não vou conseguir|nao vai dar|não vai dar|nao da|não dá|nao poderei|não poderei|imprevisto|"
        "nao vou ir|não vou ir|nao tenho como|não tenho como",
        "reschedule": "remarcar|remarca|remarque|reagendar|reagenda|outro dia|outro horario|outro horário|"
        "outra data|mudar o horario|mudar o horário|mudar a data|mudar o dia|mudar para|trocar o horario|"
        "trocar o horário|trocar a data|trocar o dia|adiar|mais pra frente|passar para|passar pra|passa pra|"
        "passa para|mudar pra",
        "cancel": "cancelar|cancela|cancele|cancelo|desmarcar|desmarca|desmarque",
        "attend": "vou sim|estarei la|estarei lá|vou comparecer|compareço|compareco|pode confirmar|confirmar|"
        "confirmada|vou estar la|vou estar lá|vou ir|eu vou|to dentro|tô dentro",
        "details": "que horas|qual horario|qual horário|quando e|quando é|que dia|qual dia|com quem|qual medico|"
        "qual médico|qual doutor|qual dentista|qual consulta",
        # Whether something was done ("Pode confirmar que cancelou?"): a question, not a yes nor a request.
        "done": "cancelou|cancelaram|foi cancelada|foi cancelado|ja cancelou|já cancelou|esta cancelada|está cancelada|"
        "ficou cancelada|confirmou|confirmaram|foi confirmada|ja confirmou|já confirmou|ficou confirmada",
        "confirm_that": "confirmar que|confirma que|confirme que|confirmar se|confirma se",
    },
    "en": {
        "cant": "cant make it|cannot make it|cant come|cannot come|cant go|wont be able|will not be able|"
        "unable to|cant attend|cannot attend|not able to|cant be there|wont make it|something came up",
        "reschedule": "reschedule|another day|another time|different day|different time|move it|move my|"
        "change the time|change the date|change the day|postpone|rebook|later date|push it|move to",
        "cancel": "cancel|call off|cancel it",
        "attend": "ill be there|i will be there|will attend|i will come|ill come|see you then|count me in|"
        "i can make it|i can come|attending",
        "details": "what time|when is|which day|what day|with whom|who is|which doctor|which dentist|"
        "what appointment|which appointment",
        "done": "cancelled|canceled|did you cancel|has it been cancelled|is it cancelled|did you confirm|"
        "has it been confirmed|is it confirmed|was it confirmed",
        "confirm_that": "confirm that|confirm you|confirm if|confirm whether",
    },
    "es": {
        "cant": "no puedo|no voy a poder|no podre|no podré|no voy a ir|no llego|no me es posible|imprevisto|"
        "no podria|no podría|no puedo ir",
        "reschedule": "reprogramar|reagendar|cambiar la cita|cambiar la fecha|cambiar la hora|cambiar el dia|"
        "cambiar el día|cambiar de dia|cambiar de día|cambiarla|cambiar|otro dia|otro día|otra hora|"
        "otro horario|otra fecha|mover|moverla|aplazar|posponer|pasarla|pasar la cita|pasar al|pasar para",
        "cancel": "cancelar|cancela|cancele|cancelala|cancélala|anular|anula|anulala",
        "attend": "ahi estare|ahí estaré|alli estare|allí estaré|voy a ir|asistire|asistiré|confirmo|si voy|"
        "sí voy|puedo ir|nos vemos",
        "details": "a que hora|a qué hora|que hora|qué hora|cuando es|cuándo es|que dia|qué día|con quien|"
        "con quién|que doctor|qué doctor|que cita|qué cita",
        # "canceló" and "confirmó" fold to "cancelo" and "confirmo" (I cancel, I confirm): left out.
        "done": "cancelaste|la cancelaste|cancelaron|fue cancelada|esta cancelada|está cancelada|quedo cancelada|"
        "quedó cancelada|confirmaste|confirmaron|fue confirmada|quedo confirmada|quedó confirmada",
        "confirm_that": "confirmar que|confirmas que|confirma que|confirmarme que|confirmar si|confirmas si",
    },
}

TEXTS = {
    "pt-BR": {
        "intro": "Olá, {name}! Aqui é o assistente de agendamentos da {clinic}. 😊",
        "what_service": "consulta de {service}",
        "what_plain": "consulta",
        "with_professional": " com {professional}",
        "appointment": "Sua {what}{with} está marcada para *{when}*.",
        "ask_confirm": "Você confirma sua presença? (sim/não)",
        "confirmed": ["Prontinho, sua consulta está confirmada! ✅", "Até {when}! Se precisar de algo, é só "
                      "chamar aqui. 😊"],
        "already_confirmed": "Sua consulta de {when} já está confirmada. ✅ Se precisar remarcar ou cancelar, é "
        "só me dizer.",
        "confirm_unclear": "Desculpe, não entendi. Você confirma sua presença em {when}? Responda *sim* ou *não*, "
        "por favor. Se não puder vir, posso remarcar ou cancelar.",
        "confirm_again": "Só para eu registrar certinho: você confirma presença em {when}? (sim/não)",
        "confirm_again_alt": "Preciso da sua confirmação mais uma vez: você vem em {when}, certo?",
        "cant_attend": "Tudo bem, imprevistos acontecem! 😊 Prefere *remarcar* para outro dia ou *cancelar* a "
        "consulta?",
        "choose_cant": "Me diga, por favor: quer *remarcar* para outro horário ou *cancelar* a consulta?",
        "kept": "Tudo bem! Sua consulta continua marcada para {when}. Se mudar de ideia, é só chamar.",
        "slots_intro": "Claro! Estes são os próximos horários disponíveis:",
        "slots_found": "Encontrei estes horários:",
        "slot_found": "Encontrei este horário:",
        "slots_none_then": "Não tenho horário livre em {asked}. Estes são os próximos disponíveis:",
        "slot_unclear": "Desculpe, não entendi qual horário você prefere. Estas são as opções:",
        "slots_pick": "Qual fica melhor para você? É só responder com o número ou o dia e horário. 😊",
        "slot_one": "Posso remarcar sua consulta para esse horário? (sim/não)",
        "no_slots": "Infelizmente não há horários livres na agenda agora. Sua consulta continua marcada para "
        "{when}. Se preferir, posso cancelar, ou passar você para a nossa equipe.",
        "rescheduled": ["Pronto, remarquei! ✅ Sua consulta agora é em *{when}* com {professional}.",
                        "Você vai receber um lembrete perto da data. Obrigado por avisar! 😊"],
        "reschedule_check": "Só para confirmar: posso mudar sua consulta para {when}? (sim/não)",
        "reschedule_check_alt": "Antes de mudar, preciso confirmar de novo: fica para {when}, certo?",
        "cancel_ask": "Quer mesmo que eu cancele sua consulta de {when}? (sim/não)",
        "cancel_again": "Preciso confirmar mais uma vez: cancelo a sua consulta de {when}? (sim/não)",
        "cancel_again_alt": "Só para ter certeza: é para cancelar a consulta de {when}, certo?",
        "cancelled": ["Consulta cancelada. ✅", "Quando quiser marcar de novo, é só chamar aqui. Obrigado por "
                      "avisar! 😊"],
        "cancelled_rebook_later": "Cancelei sua consulta de {when}. Para marcar outro horário, fale com a gente "
        "outro dia.",
        "not_cancelled": "Tudo bem, não cancelei. Sua consulta continua em {when}.",
        "no_appointment": "Não encontrei nenhuma consulta marcada no seu nome. Se quiser, posso passar você para "
        "a nossa equipe.",
        "done_help": "Se precisar remarcar ou cancelar, é só me dizer. 😊",
        "status_scheduled": "Ainda não cancelei nem confirmei nada: sua consulta de {when} continua marcada.",
        "status_cancelled": "Sim: sua consulta de {when} está cancelada.",
        "status_confirmed": "Sim: sua consulta de {when} está confirmada. ✅",
    },
    "en": {
        "intro": "Hi {name}! This is the appointments assistant of {clinic}. 😊",
        "what_service": "appointment for {service}",
        "what_plain": "appointment",
        "with_professional": " with {professional}",
        "appointment": "Your {what}{with} is on *{when}*.",
        "ask_confirm": "Can you confirm you'll attend? (yes/no)",
        "confirmed": ["All set, your appointment is confirmed! ✅", "See you on {when}! If you need anything, "
                      "just message us here. 😊"],
        "already_confirmed": "Your appointment on {when} is already confirmed. ✅ If you need to reschedule or "
        "cancel, just tell me.",
        "confirm_unclear": "Sorry, I didn't get that. Can you confirm you'll attend on {when}? Please reply *yes* "
        "or *no*. If you can't come, I can reschedule or cancel it.",
        "confirm_again": "Just so I record it properly: do you confirm you'll attend on {when}? (yes/no)",
        "confirm_again_alt": "I need your confirmation once more: you're coming on {when}, right?",
        "cant_attend": "No problem, things come up! 😊 Would you like to *reschedule* to another day or *cancel* "
        "the appointment?",
        "choose_cant": "Please tell me: would you like to *reschedule* to another time or *cancel* the "
        "appointment?",
        "kept": "Alright! Your appointment is still booked for {when}. If you change your mind, just message me.",
        "slots_intro": "Of course! These are the next available times:",
        "slots_found": "I found these times:",
        "slot_found": "I found this time:",
        "slots_none_then": "There's no free time on {asked}. These are the next available ones:",
        "slot_unclear": "Sorry, I didn't get which time you prefer. These are the options:",
        "slots_pick": "Which one works best for you? Just reply with its number or the day and time. 😊",
        "slot_one": "Shall I move your appointment to this time? (yes/no)",
        "no_slots": "Unfortunately there are no free times in the agenda right now. Your appointment is still "
        "booked for {when}. If you prefer, I can cancel it or pass you to our team.",
        "rescheduled": ["Done, it's rescheduled! ✅ Your appointment is now on *{when}* with {professional}.",
                        "You'll get a reminder closer to the date. Thank you for letting us know! 😊"],
        "reschedule_check": "Just to confirm: shall I move your appointment to {when}? (yes/no)",
        "reschedule_check_alt": "Before I move it, I need to confirm again: {when}, right?",
        "cancel_ask": "Are you sure you want me to cancel your appointment on {when}? (yes/no)",
        "cancel_again": "I need to confirm once more: shall I cancel your appointment on {when}? (yes/no)",
        "cancel_again_alt": "Just to be sure: you want the appointment on {when} cancelled, right?",
        "cancelled": ["Your appointment is cancelled. ✅", "Whenever you'd like to book again, just message us "
                      "here. Thank you for letting us know! 😊"],
        "cancelled_rebook_later": "I cancelled your appointment on {when}. To book another time, contact us "
        "another day.",
        "not_cancelled": "Alright, I didn't cancel it. Your appointment is still on {when}.",
        "no_appointment": "I couldn't find any upcoming appointment in your name. If you like, I can pass you to "
        "our team.",
        "done_help": "If you need to reschedule or cancel, just tell me. 😊",
        "status_scheduled": "I haven't cancelled or confirmed anything yet: your appointment on {when} is still booked.",
        "status_cancelled": "Yes: your appointment on {when} is cancelled.",
        "status_confirmed": "Yes: your appointment on {when} is confirmed. ✅",
    },
    "es": {
        "intro": "¡Hola, {name}! Soy el asistente de citas de {clinic}. 😊",
        "what_service": "cita de {service}",
        "what_plain": "cita",
        "with_professional": " con {professional}",
        "appointment": "Tu {what}{with} está programada para el *{when}*.",
        "ask_confirm": "¿Confirmas tu asistencia? (sí/no)",
        "confirmed": ["¡Listo, tu cita está confirmada! ✅", "¡Te esperamos el {when}! Si necesitas algo, "
                      "escríbenos aquí. 😊"],
        "already_confirmed": "Tu cita del {when} ya está confirmada. ✅ Si necesitas reprogramarla o cancelarla, "
        "solo dime.",
        "confirm_unclear": "Perdón, no entendí. ¿Confirmas tu asistencia el {when}? Responde *sí* o *no*, por "
        "favor. Si no puedes venir, puedo reprogramar o cancelar la cita.",
        "confirm_again": "Solo para registrarlo bien: ¿confirmas tu asistencia el {when}? (sí/no)",
        "confirm_again_alt": "Necesito tu confirmación una vez más: vienes el {when}, ¿verdad?",
        "cant_attend": "¡No hay problema, a veces pasan imprevistos! 😊 ¿Prefieres *reprogramar* la cita para "
        "otro día o *cancelarla*?",
        "choose_cant": "Dime, por favor: ¿quieres *reprogramar* la cita para otro horario o *cancelarla*?",
        "kept": "¡De acuerdo! Tu cita sigue programada para el {when}. Si cambias de idea, escríbeme.",
        "slots_intro": "¡Claro! Estos son los próximos horarios disponibles:",
        "slots_found": "Encontré estos horarios:",
        "slot_found": "Encontré este horario:",
        "slots_none_then": "No tengo horario libre el {asked}. Estos son los próximos disponibles:",
        "slot_unclear": "Perdón, no entendí qué horario prefieres. Estas son las opciones:",
        "slots_pick": "¿Cuál te queda mejor? Solo responde con el número o el día y la hora. 😊",
        "slot_one": "¿Cambio tu cita a ese horario? (sí/no)",
        "no_slots": "Lamentablemente no hay horarios libres en la agenda ahora. Tu cita sigue programada para el "
        "{when}. Si prefieres, puedo cancelarla o pasarte con nuestro equipo.",
        "rescheduled": ["¡Listo, la reprogramé! ✅ Tu cita ahora es el *{when}* con {professional}.",
                        "Recibirás un recordatorio cerca de la fecha. ¡Gracias por avisar! 😊"],
        "reschedule_check": "Solo para confirmar: ¿cambio tu cita al {when}? (sí/no)",
        "reschedule_check_alt": "Antes de cambiarla, necesito confirmar otra vez: queda el {when}, ¿verdad?",
        "cancel_ask": "¿Seguro que quieres que cancele tu cita del {when}? (sí/no)",
        "cancel_again": "Necesito confirmar una vez más: ¿cancelo tu cita del {when}? (sí/no)",
        "cancel_again_alt": "Solo para estar seguro: quieres cancelar la cita del {when}, ¿verdad?",
        "cancelled": ["Tu cita quedó cancelada. ✅", "Cuando quieras agendar otra vez, escríbenos aquí. ¡Gracias "
                      "por avisar! 😊"],
        "cancelled_rebook_later": "Cancelé tu cita del {when}. Para agendar otro horario, contáctanos otro día.",
        "not_cancelled": "De acuerdo, no la cancelé. Tu cita sigue el {when}.",
        "no_appointment": "No encontré ninguna cita programada a tu nombre. Si quieres, puedo pasarte con nuestro "
        "equipo.",
        "done_help": "Si necesitas reprogramar o cancelar, solo dime. 😊",
        "status_scheduled": "Todavía no cancelé ni confirmé nada: tu cita del {when} sigue agendada.",
        "status_cancelled": "Sí: tu cita del {when} está cancelada.",
        "status_confirmed": "Sí: tu cita del {when} está confirmada. ✅",
    },
}

FAULT_TEXTS = {
    "rude_tone": {
        "pt-BR": {
            "intro": "Agendamentos. Fala.",
            "appointment": "Sua {what}{with} é {when}. Está no lembrete.",
            "ask_confirm": "Vem ou não vem? Sim ou não.",
            "confirmed": "Tá confirmado. Não se atrase.",
            "already_confirmed": "Já está confirmado, {when}. Não precisa perguntar de novo.",
            "confirm_unclear": "Não entendi. Sim ou não? É só isso.",
            "confirm_again": "Vem em {when} ou não? Sim ou não.",
            "confirm_again_alt": "De novo: vem em {when}? Responde.",
            "cant_attend": "Sempre a mesma coisa. Remarcar ou cancelar? Escolhe.",
            "choose_cant": "Remarcar ou cancelar. Decide logo.",
            "kept": "Então fica {when}. Depois não reclama.",
            "slots_intro": "Tem isso aqui:",
            "slots_found": "Achei isso:",
            "slot_found": "Tem esse:",
            "slots_none_then": "Em {asked} não tem nada. Tem isso:",
            "slot_unclear": "Não entendi. Escolhe uma dessas:",
            "slots_pick": "Manda o número. Anda.",
            "slot_one": "Serve ou não? Sim ou não.",
            "no_slots": "Não tem horário nenhum. Fica {when} mesmo ou cancela.",
            "rescheduled": "Mudei pra {when} com {professional}. Dessa vez aparece.",
            "reschedule_check": "Muda pra {when}? Sim ou não.",
            "reschedule_check_alt": "{when} então? Responde.",
            "cancel_ask": "Cancelar {when}? Sim ou não.",
            "cancel_again": "Cancela {when} ou não? Decide.",
            "cancel_again_alt": "E aí, cancela {when}? Responde.",
            "cancelled": "Cancelado. Próxima vez avisa antes.",
            "not_cancelled": "Então não cancelei. Fica {when}.",
            "no_appointment": "Não tem consulta nenhuma no seu nome.",
            "done_help": "Não tenho mais nada pra você.",
        },
        "en": {
            "intro": "Appointments. Go ahead.",
            "appointment": "Your {what}{with} is {when}. It's in the reminder.",
            "ask_confirm": "Coming or not? Yes or no.",
            "confirmed": "It's confirmed. Don't be late.",
            "already_confirmed": "It's already confirmed, {when}. No need to ask again.",
            "confirm_unclear": "I don't get it. Yes or no? That's all I need.",
            "confirm_again": "Coming on {when} or not? Yes or no.",
            "confirm_again_alt": "Again: coming on {when}? Answer.",
            "cant_attend": "Always the same. Reschedule or cancel? Pick one.",
            "choose_cant": "Reschedule or cancel. Decide already.",
            "kept": "Then it stays {when}. Don't complain later.",
            "slots_intro": "There's this:",
            "slots_found": "Found these:",
            "slot_found": "There's this one:",
            "slots_none_then": "Nothing on {asked}. There's this:",
            "slot_unclear": "I don't get it. Pick one of these:",
            "slots_pick": "Send the number. Come on.",
            "slot_one": "Does it work or not? Yes or no.",
            "no_slots": "There's no time free. Keep {when} or cancel.",
            "rescheduled": "Moved to {when} with {professional}. Show up this time.",
            "reschedule_check": "Move it to {when}? Yes or no.",
            "reschedule_check_alt": "{when}, then? Answer.",
            "cancel_ask": "Cancel {when}? Yes or no.",
            "cancel_again": "Cancel {when} or not? Decide.",
            "cancel_again_alt": "So, cancel {when}? Answer.",
            "cancelled": "Cancelled. Next time tell us earlier.",
            "not_cancelled": "Then I didn't cancel it. It stays {when}.",
            "no_appointment": "There's no appointment in your name.",
            "done_help": "I've got nothing else for you.",
        },
        "es": {
            "intro": "Citas. Dime.",
            "appointment": "Tu {what}{with} es el {when}. Está en el recordatorio.",
            "ask_confirm": "¿Vienes o no? Sí o no.",
            "confirmed": "Está confirmada. No llegues tarde.",
            "already_confirmed": "Ya está confirmada, el {when}. No hace falta preguntar otra vez.",
            "confirm_unclear": "No entiendo. ¿Sí o no? Es lo único que necesito.",
            "confirm_again": "¿Vienes el {when} o no? Sí o no.",
            "confirm_again_alt": "Otra vez: ¿vienes el {when}? Responde.",
            "cant_attend": "Siempre lo mismo. ¿Reprogramar o cancelar? Elige.",
            "choose_cant": "Reprogramar o cancelar. Decide ya.",
            "kept": "Entonces queda el {when}. Después no te quejes.",
            "slots_intro": "Hay esto:",
            "slots_found": "Encontré esto:",
            "slot_found": "Hay este:",
            "slots_none_then": "El {asked} no hay nada. Hay esto:",
            "slot_unclear": "No entiendo. Elige una de estas:",
            "slots_pick": "Manda el número. Rápido.",
            "slot_one": "¿Sirve o no? Sí o no.",
            "no_slots": "No hay ningún horario. Queda el {when} o cancelas.",
            "rescheduled": "La cambié al {when} con {professional}. Esta vez ven.",
            "reschedule_check": "¿La cambio al {when}? Sí o no.",
            "reschedule_check_alt": "¿El {when}, entonces? Responde.",
            "cancel_ask": "¿Cancelar el {when}? Sí o no.",
            "cancel_again": "¿Cancelo el {when} o no? Decide.",
            "cancel_again_alt": "¿Y? ¿Cancelo el {when}? Responde.",
            "cancelled": "Cancelada. La próxima vez avisa antes.",
            "not_cancelled": "Entonces no la cancelé. Queda el {when}.",
            "no_appointment": "No hay ninguna cita a tu nombre.",
            "done_help": "No tengo nada más para ti.",
        },
    }
}
