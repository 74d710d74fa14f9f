"""What the recall agent understands beyond the shared lexicon, and what it says, per locale.

``LEXICON`` adds intents to ``_nlu``'s; ``TEXTS`` are its messages by key; ``FAULT_TEXTS`` replace some of them when
a known fault is on (``recall.FAULTS``). Kept apart from the dialogue policy in ``recall.py``.
"""

from __future__ import annotations

from convoeval.agents.clinic._slot_dialogue import SLOT_LEXICON, SLOT_RUDE_TEXTS, SLOT_TEXTS, merge_tables

LEXICON = merge_tables(
    SLOT_LEXICON,
    {
        "pt-BR": {
            "book": "marcar|agendar|agendamento|horario|horário|horarios|horários|vaga|vagas|quero marcar|"
            "pode marcar|pode agendar|vamos marcar",
            "optout": "parar de receber|nao quero receber|não quero receber|nao me mande|não me mande|"
            "nao me mandem|não me mandem|pare de mandar|parem de mandar|para de mandar|sair da lista|descadastrar|"
            "remover meu numero|remover meu número|nao enviem|não enviem|nao mande mais|não mande mais|"
            "nao quero mais mensagens|não quero mais mensagens|stop",
            # Not a bare "depois" / "mais tarde": "depois das 14h" and "mais tarde" ask for a later time.
            "later": "deixa pra depois|deixa para depois|fica pra depois|fica para depois|depois eu vejo|"
            "depois eu marco|vejo depois|outra hora|agora nao|agora não|mais pra frente|mais para frente|"
            "outro momento|no momento nao|no momento não|por enquanto nao|por enquanto não|nao posso agora|"
            "não posso agora|nao da agora|não dá agora",
            "decline": "nao tenho interesse|não tenho interesse|sem interesse|nao quero marcar|não quero marcar|"
            "nao precisa|não precisa|dispenso|nao obrigado|não obrigado|nao obrigada|não obrigada",
            "elsewhere": "ja fiz|já fiz|ja marquei|já marquei|outro dentista|outra clinica|outra clínica|"
            "outro medico|outro médico",
            "who": "quem e|quem é|quem fala|quem esta falando|quem está falando|que clinica|que clínica|"
            "qual clinica|qual clínica|por que|porque|pra que|para que|que mensagem e essa|que mensagem é essa",
        },
        "en": {
            "book": "book|schedule|appointment|slot|slots|times|what times|when can i come",
            "optout": "stop|unsubscribe|opt out|dont message|dont text|stop sending|remove me|no more messages|"
            "stop messaging|do not contact|dont contact",
            "later": "not now|another time|some other time|maybe later|later maybe|not right now|"
            "not at the moment|cant right now|busy right now|ill think about it|ill do it later",
            "decline": "not interested|no interest|no thanks|no thank you|dont want to|do not want to|"
            "dont need|do not need|ill pass",
            "elsewhere": "already did|already went|another clinic|another dentist|another doctor|elsewhere",
            "who": "who is this|who are you|whos this|what is this|why|what for|what clinic|which clinic",
        },
        "es": {
            "book": "agendar|reservar|cita|turno|horario|horarios|hora|que horarios|cuando puedo ir",
            "optout": "no me escriban|no me escribas|no me manden|no me envien|no me envíen|dejen de enviar|"
            "dejen de escribir|darme de baja|dar de baja|no quiero recibir|no quiero mas mensajes|"
            "no quiero más mensajes|stop",
            "later": "lo dejo para despues|lo dejo para después|despues veo|después veo|luego veo|otro momento|"
            "ahora no|en otro momento|por ahora no|mas adelante|más adelante|no puedo ahora",
            "decline": "no me interesa|no estoy interesado|no estoy interesada|no quiero agendar|no gracias|"
            "no hace falta|no necesito",
            "elsewhere": "ya lo hice|ya fui|otra clinica|otra clínica|otro dentista|otro medico|otro médico",
            "who": "quien es|quién es|quien habla|quién habla|que clinica|qué clínica|por que|por qué|para que|"
            "para qué",
        },
    },
)

TEXTS = merge_tables(
    SLOT_TEXTS,
    {
        "pt-BR": {
            "reminder": "Olá, {name}! Aqui é da {clinic}. 😊 Sua última consulta de *{service}* foi em {date}, "
            "com {professional}, e já está na hora do seu retorno de {months} meses.",
            "reminder_generic": "Olá, {name}! Aqui é da {clinic}. 😊 Já está na hora do seu retorno de {months} "
            "meses para o check-up de rotina.",
            "already_scheduled": "Olá, {name}! Aqui é da {clinic}. 😊 Vi que você já tem *{service}* marcada para "
            "*{when}*, com {professional}. Então está tudo certo, até lá!",
            "ask_interest": "Quer que eu veja alguns horários para você?",
            "interest_unclear": "Posso ver horários para o seu retorno? É só responder *sim* ou *não*. 😊",
            "why_recall": "Mandamos este lembrete porque o retorno a cada {months} meses ajuda a acompanhar sua "
            "saúde e a prevenir problemas antes que eles apareçam.",
            "respect_refusal": "Tudo bem, {name}, sem problemas! Não vou agendar nada. Quando quiser marcar o "
            "retorno, é só chamar aqui. 😊",
            "opted_out": "Entendido, {name}. Não vamos mais enviar lembretes de retorno para você. Se precisar, é "
            "só chamar aqui. 🙏",
            "insist_health": "Tem certeza, {name}? Cuidar da saúde não pode esperar, e os horários estão acabando.",
            "insist_slots": "Olha, é rapidinho e evita problemas maiores depois. Não deixe para depois!",
            "booked_unasked": "Já reservei para você *{when}*, com {professional}. Se não puder, é só avisar.",
            "cancelled_unasked": "Tudo bem, cancelei a reserva de {when}.",
            "closed_help": "Se quiser marcar o retorno, é só me dizer. 😊",
        },
        "en": {
            "reminder": "Hi {name}! This is {clinic}. 😊 Your last *{service}* was on {date}, with {professional}, "
            "so it's time for your {months}-month check-up.",
            "reminder_generic": "Hi {name}! This is {clinic}. 😊 It's time for your {months}-month routine "
            "check-up.",
            "already_scheduled": "Hi {name}! This is {clinic}. 😊 I see you already have *{service}* booked for "
            "*{when}*, with {professional}. So you're all set, see you then!",
            "ask_interest": "Would you like me to look up some times for you?",
            "interest_unclear": "Shall I look up times for your check-up? Just reply *yes* or *no*. 😊",
            "why_recall": "We sent this reminder because a check-up every {months} months helps keep an eye on "
            "your health and catch problems before they start.",
            "respect_refusal": "That's fine, {name}, no problem! I won't book anything. Whenever you'd like to "
            "schedule your check-up, just message us here. 😊",
            "opted_out": "Understood, {name}. We won't send you any more check-up reminders. If you need us, just "
            "message here. 🙏",
            "insist_health": "Are you sure, {name}? Your health can't wait, and the times are filling up.",
            "insist_slots": "Look, it's quick and it avoids bigger problems later. Don't put it off!",
            "booked_unasked": "I've already booked *{when}* for you, with {professional}. If you can't make it, "
            "just let me know.",
            "cancelled_unasked": "Alright, I've cancelled the booking for {when}.",
            "closed_help": "If you'd like to book your check-up, just tell me. 😊",
        },
        "es": {
            "reminder": "¡Hola, {name}! Te escribimos de {clinic}. 😊 Tu última cita de *{service}* fue el {date}, "
            "con {professional}, y ya es momento de tu control de {months} meses.",
            "reminder_generic": "¡Hola, {name}! Te escribimos de {clinic}. 😊 Ya es momento de tu control de "
            "rutina de {months} meses.",
            "already_scheduled": "¡Hola, {name}! Te escribimos de {clinic}. 😊 Veo que ya tienes *{service}* "
            "agendada para el *{when}*, con {professional}. ¡Así que todo listo, nos vemos!",
            "ask_interest": "¿Quieres que te busque algunos horarios?",
            "interest_unclear": "¿Te busco horarios para tu control? Solo responde *sí* o *no*. 😊",
            "why_recall": "Te enviamos este recordatorio porque un control cada {months} meses ayuda a cuidar tu "
            "salud y a prevenir problemas antes de que aparezcan.",
            "respect_refusal": "¡Está bien, {name}, sin problema! No voy a agendar nada. Cuando quieras agendar tu "
            "control, solo escríbenos aquí. 😊",
            "opted_out": "Entendido, {name}. No te enviaremos más recordatorios de control. Si nos necesitas, "
            "solo escribe aquí. 🙏",
            "insist_health": "¿Estás seguro, {name}? Tu salud no puede esperar y los horarios se están acabando.",
            "insist_slots": "Mira, es rápido y evita problemas mayores después. ¡No lo dejes para después!",
            "booked_unasked": "Ya te reservé el *{when}*, con {professional}. Si no puedes, solo avísame.",
            "cancelled_unasked": "Está bien, cancelé la reserva del {when}.",
            "closed_help": "Si quieres agendar tu control, solo dime. 😊",
        },
    },
)

FAULT_TEXTS = {
    "rude_tone": merge_tables(
        SLOT_RUDE_TEXTS,
        {
            "pt-BR": {
                "reminder": "{clinic}. Sua última {service} foi em {date}, com {professional}. Já passou dos "
                "{months} meses, tem que voltar.",
                "reminder_generic": "{clinic}. Tem que fazer o check-up de {months} meses.",
                "already_scheduled": "{clinic}. Você já tem {service} marcada pra {when}. Não precisava escrever.",
                "ask_interest": "Vai marcar ou não?",
                "interest_unclear": "Sim ou não? Não é difícil.",
                "why_recall": "Porque faz {months} meses. Era óbvio.",
                "respect_refusal": "Tá. Depois não reclama.",
                "opted_out": "Tá, não mando mais nada.",
                "booked_unasked": "Marquei {when}, com {professional}. Se não puder, avisa.",
                "cancelled_unasked": "Tá, cancelei {when}.",
                "closed_help": "Se quiser marcar, fala. Senão, tchau.",
            },
            "en": {
                "reminder": "{clinic}. Your last {service} was on {date}, with {professional}. It's been over "
                "{months} months, you have to come back.",
                "reminder_generic": "{clinic}. You need your {months}-month check-up.",
                "already_scheduled": "{clinic}. You already have {service} on {when}. No need to write.",
                "ask_interest": "Booking or not?",
                "interest_unclear": "Yes or no? It's not hard.",
                "why_recall": "Because it's been {months} months. Obviously.",
                "respect_refusal": "Fine. Don't complain later.",
                "opted_out": "Fine, no more messages.",
                "booked_unasked": "Booked {when}, with {professional}. If you can't, say so.",
                "cancelled_unasked": "Fine, cancelled {when}.",
                "closed_help": "If you want to book, say so. Otherwise, bye.",
            },
            "es": {
                "reminder": "{clinic}. Tu última {service} fue el {date}, con {professional}. Ya pasaron los "
                "{months} meses, tienes que volver.",
                "reminder_generic": "{clinic}. Te toca el control de {months} meses.",
                "already_scheduled": "{clinic}. Ya tienes {service} el {when}. No hacía falta escribir.",
                "ask_interest": "¿Vas a agendar o no?",
                "interest_unclear": "¿Sí o no? No es difícil.",
                "why_recall": "Porque pasaron {months} meses. Era obvio.",
                "respect_refusal": "Ya. Después no te quejes.",
                "opted_out": "Ya, no te escribo más.",
                "booked_unasked": "Agendé el {when}, con {professional}. Si no puedes, avisa.",
                "cancelled_unasked": "Ya, cancelé el {when}.",
                "closed_help": "Si quieres agendar, dilo. Si no, chao.",
            },
        },
    )
}
