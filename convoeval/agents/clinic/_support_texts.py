"""What the support agent understands beyond the shared lexicon, and what it says, per locale.

``LEXICON`` adds intents to ``_nlu``'s; ``TEXTS`` are its messages by key; ``FAULT_TEXTS`` replace some of them when
a known fault is on (``support.FAULTS``). Kept apart from the dialogue policy in ``support.py``.
"""

from __future__ import annotations

LEXICON = {
    "pt-BR": {
        "hours": "horario|horário|horarios|horários|que horas|abre|abrem|fecha|fecham|funcionamento|funciona|"
        "aberto|aberta|abertos|expediente|sabado|sábado|domingo|feriado",
        "address": "endereco|endereço|onde fica|onde ficam|onde voces ficam|localizacao|localização|como chegar|"
        "estacionamento|qual a rua|mapa|metro|metrô",
        "prices": "preco|preço|precos|preços|quanto custa|quanto sai|quanto fica|quanto e|quanto é|valor|valores|"
        "custa|custo|tabela",
        "services": "servicos|serviços|procedimentos|especialidades|voces fazem|vocês fazem|fazem|oferecem|"
        "tratamentos|tratamento",
        "insurance": "convenio|convênio|convenios|convênios|plano de saude|plano de saúde|plano|planos|unimed|"
        "bradesco|sulamerica|sulamérica|amil|reembolso|aceitam",
        "medical": "dor|doendo|doi|dói|sintoma|sintomas|remedio|remédio|medicamento|receita|resultado|resultados|"
        "exame|exames|diagnostico|diagnóstico|urgencia|urgência|emergencia|emergência|sangramento|sangrando|febre|"
        "inchado|inchada|inchaco|inchaço|normal isso|e normal|é normal",
        "complaint": "reclamacao|reclamação|reclamar|insatisfeito|insatisfeita|pessimo|péssimo|absurdo|"
        "descaso|cobrança indevida|cobranca indevida|cobraram duas vezes|cobrança em dobro",
        "other_team": "marcar|agendar|agendamento|remarcar|desmarcar|cancelar|fatura|boleto|pagar|pagamento|"
        "segunda via",
    },
    "en": {
        "hours": "hours|open|opening|close|closing|what time|saturday|sunday|holiday|holidays",
        "address": "address|where are you|where is the clinic|wheres the clinic|location|located|directions|"
        "parking|how do i get|subway",
        "prices": "price|prices|cost|costs|how much|fee|fees|charge|charges",
        "services": "services|treatments|do you do|do you offer|procedures|specialties",
        "insurance": "insurance|insurer|health plan|plans|cover|coverage|reimbursement|unimed|bradesco|sulamerica|"
        "amil|accept",
        "medical": "pain|hurts|hurting|symptom|symptoms|medicine|medication|prescription|results|test results|"
        "diagnosis|urgent|emergency|bleeding|fever|swollen|swelling|is it normal|is that normal",
        "complaint": "complaint|complain|unhappy|terrible|awful|unacceptable|overcharged|wrong charge|"
        "charged twice|double charge",
        "other_team": "book|schedule|appointment|reschedule|cancel|invoice|bill|pay|payment",
    },
    "es": {
        "hours": "horario|horarios|que hora|qué hora|abren|abre|cierran|cierra|abierto|abiertos|atienden|sabado|"
        "sábado|domingo|feriado|feriados",
        "address": "direccion|dirección|donde estan|dónde están|donde queda|dónde queda|ubicacion|ubicación|"
        "como llegar|cómo llegar|estacionamiento|metro",
        "prices": "precio|precios|cuanto cuesta|cuánto cuesta|cuanto sale|cuánto sale|cuesta|costo|costos|valor|"
        "tarifa|tarifas",
        "services": "servicios|tratamientos|tratamiento|ofrecen|hacen|especialidades|procedimientos",
        "insurance": "seguro|seguro medico|seguro médico|obra social|prepaga|aseguradora|cobertura|reembolso|"
        "unimed|bradesco|sulamerica|sulamérica|amil|aceptan",
        "medical": "dolor|duele|sintoma|síntoma|sintomas|síntomas|medicamento|receta|resultado|resultados|"
        "diagnostico|diagnóstico|urgencia|emergencia|fiebre|sangrado|sangra|hinchado|hinchada|es normal",
        "complaint": "queja|quejarme|reclamo|reclamar|pesimo|pésimo|inaceptable|cobro indebido|me cobraron mal|"
        "cobraron dos veces|doble cobro",
        "other_team": "agendar|reservar|cita|turno|reprogramar|cancelar|factura|pagar|pago",
    },
}

TEXTS = {
    "pt-BR": {
        "intro": "Olá, {name}! Sou a assistente virtual da {clinic}. 😊",
        "how_help": "Posso ajudar com horários, endereço, serviços e preços, e convênios. Como posso te ajudar?",
        "hours": "Funcionamos de segunda a sexta, das 8h às 18h, e aos sábados, das 8h às 12h. Domingos e "
        "feriados estamos fechados.",
        "address": "Estamos na Rua das Flores, 123 – Pinheiros, São Paulo (SP), pertinho do metrô Fradique "
        "Coutinho. Temos estacionamento conveniado ao lado. 🚗",
        "insurance_yes": "Sim, atendemos {insurer}! 😊",
        "insurance_info": "Atendemos os convênios {insurers}. Para outros planos, emitimos recibo para você pedir "
        "reembolso.",
        "service_price": "{service}: {price} (cerca de {duration} minutos).",
        "price_list_intro": "Estes são os nossos serviços e valores:",
        "no_price_list": "Ainda não tenho a tabela de preços por aqui. A nossa equipe pode te passar os valores.",
        "anything_else": "Posso ajudar em algo mais?",
        "ask_question": "Claro! Qual é a sua dúvida?",
        "not_understood": "Desculpe, não entendi. Posso ajudar com horários, endereço, serviços e preços, ou "
        "convênios. Se preferir, é só pedir para falar com um atendente.",
        "still_not_understood": "Desculpe, ainda não consegui entender. Vou pedir ajuda para a nossa equipe.",
        "cannot_help_medical": "Não posso dar orientações médicas por aqui. Se for uma emergência, procure um "
        "pronto-socorro ou ligue 192.",
        "cannot_help_complaint": "Sinto muito pelo transtorno. Quero que isso seja resolvido com atenção.",
        "cannot_help_other_team": "Esse assunto é com outra equipe da clínica, que consegue resolver para você.",
        "cannot_help_alone": "Infelizmente não consigo ajudar com isso. Posso ajudar com horários, endereço, "
        "serviços e preços, ou convênios.",
        "no_human": "Eu mesmo posso te ajudar! Qual é a sua dúvida?",
    },
    "en": {
        "intro": "Hi {name}! I'm the virtual assistant of {clinic}. 😊",
        "how_help": "I can help with opening hours, our address, services and prices, and insurance. How can I "
        "help you?",
        "hours": "We're open Monday to Friday, 8 am to 6 pm, and on Saturdays, 8 am to 12 pm. We're closed on "
        "Sundays and public holidays.",
        "address": "We're at Rua das Flores, 123 – Pinheiros, São Paulo (SP), right by Fradique Coutinho subway "
        "station. There's a partner parking lot next door. 🚗",
        "insurance_yes": "Yes, we accept {insurer}! 😊",
        "insurance_info": "We accept {insurers}. For other plans, we issue a receipt so you can claim a "
        "reimbursement.",
        "service_price": "{service}: {price} (about {duration} minutes).",
        "price_list_intro": "These are our services and prices:",
        "no_price_list": "I don't have the price list here yet. Our team can tell you the prices.",
        "anything_else": "Can I help with anything else?",
        "ask_question": "Sure! What would you like to know?",
        "not_understood": "Sorry, I didn't understand. I can help with opening hours, our address, services and "
        "prices, or insurance. If you prefer, just ask to talk to a person.",
        "still_not_understood": "Sorry, I still couldn't understand. I'll ask our team for help.",
        "cannot_help_medical": "I can't give medical advice here. If it's an emergency, please go to an "
        "emergency room or call 192.",
        "cannot_help_complaint": "I'm sorry for the trouble. I want this to be handled with care.",
        "cannot_help_other_team": "Another team at the clinic handles that and can sort it out for you.",
        "cannot_help_alone": "Unfortunately I can't help with that. I can help with opening hours, our address, "
        "services and prices, or insurance.",
        "no_human": "I can help you myself! What's your question?",
    },
    "es": {
        "intro": "¡Hola, {name}! Soy la asistente virtual de {clinic}. 😊",
        "how_help": "Puedo ayudarte con horarios, dirección, servicios y precios, y seguros médicos. ¿En qué te "
        "ayudo?",
        "hours": "Atendemos de lunes a viernes, de 8 a 18 h, y los sábados, de 8 a 12 h. Domingos y feriados "
        "está cerrado.",
        "address": "Estamos en Rua das Flores, 123 – Pinheiros, São Paulo (SP), muy cerca de la estación de metro "
        "Fradique Coutinho. Hay un estacionamiento con convenio al lado. 🚗",
        "insurance_yes": "¡Sí, aceptamos {insurer}! 😊",
        "insurance_info": "Aceptamos {insurers}. Para otros seguros, emitimos un recibo para que pidas el "
        "reembolso.",
        "service_price": "{service}: {price} (unos {duration} minutos).",
        "price_list_intro": "Estos son nuestros servicios y precios:",
        "no_price_list": "Todavía no tengo la lista de precios aquí. Nuestro equipo puede darte los valores.",
        "anything_else": "¿Te ayudo con algo más?",
        "ask_question": "¡Claro! ¿Cuál es tu duda?",
        "not_understood": "Perdón, no entendí. Puedo ayudarte con horarios, dirección, servicios y precios, o "
        "seguros médicos. Si prefieres, pide hablar con una persona.",
        "still_not_understood": "Perdón, todavía no logro entenderte. Voy a pedir ayuda a nuestro equipo.",
        "cannot_help_medical": "No puedo dar orientación médica por aquí. Si es una emergencia, ve a una guardia "
        "o llama al 192.",
        "cannot_help_complaint": "Lamento mucho las molestias. Quiero que esto se resuelva con atención.",
        "cannot_help_other_team": "De eso se encarga otro equipo de la clínica, que puede resolverlo por ti.",
        "cannot_help_alone": "Lamentablemente no puedo ayudarte con eso. Puedo ayudarte con horarios, dirección, "
        "servicios y precios, o seguros médicos.",
        "no_human": "¡Yo misma puedo ayudarte! ¿Cuál es tu duda?",
    },
}

FAULT_TEXTS = {
    "rude_tone": {
        "pt-BR": {
            "intro": "Clínica. Fala.",
            "how_help": "Horário, endereço, preço ou convênio. Escolhe.",
            "hours": "Segunda a sexta, 8h às 18h. Sábado 8h às 12h. Está no site, era só olhar.",
            "address": "Rua das Flores, 123 – Pinheiros, São Paulo. Usa o mapa.",
            "insurance_yes": "Aceita {insurer}, sim.",
            "insurance_info": "Convênios: {insurers}. O resto, pede reembolso e se vira.",
            "service_price": "{service}: {price}. {duration} minutos.",
            "price_list_intro": "Tabela:",
            "no_price_list": "Não tenho preço nenhum aqui.",
            "anything_else": "Mais alguma coisa? Seja rápido.",
            "ask_question": "Fala logo a dúvida.",
            "not_understood": "Não entendi. Escreve direito.",
            "still_not_understood": "Continuo sem entender. Vou jogar pra outra pessoa.",
            "cannot_help_medical": "Não sou médico. Procura um pronto-socorro.",
            "cannot_help_complaint": "Reclamação não é comigo.",
            "cannot_help_other_team": "Isso não é comigo.",
            "cannot_help_alone": "Não sei disso. Pergunta outra coisa.",
            "no_human": "Não tem atendente. Fala comigo mesmo.",
        },
        "en": {
            "intro": "Clinic. Go ahead.",
            "how_help": "Hours, address, prices or insurance. Pick one.",
            "hours": "Mon–Fri 8 am to 6 pm. Sat 8 am to 12 pm. It's on the website, you could have looked.",
            "address": "Rua das Flores, 123 – Pinheiros, São Paulo. Use a map.",
            "insurance_yes": "Yes, {insurer}.",
            "insurance_info": "Insurers: {insurers}. Anything else, claim a reimbursement yourself.",
            "service_price": "{service}: {price}. {duration} minutes.",
            "price_list_intro": "Price list:",
            "no_price_list": "I don't have any prices here.",
            "anything_else": "Anything else? Make it quick.",
            "ask_question": "Just ask already.",
            "not_understood": "I don't get it. Write properly.",
            "still_not_understood": "Still no idea what you mean. I'll dump this on someone else.",
            "cannot_help_medical": "I'm not a doctor. Go to an emergency room.",
            "cannot_help_complaint": "Complaints aren't my problem.",
            "cannot_help_other_team": "Not my department.",
            "cannot_help_alone": "I don't know that. Ask something else.",
            "no_human": "There's no human. Talk to me.",
        },
        "es": {
            "intro": "Clínica. Dime.",
            "how_help": "Horario, dirección, precios o seguro. Elige.",
            "hours": "Lunes a viernes, 8 a 18 h. Sábado 8 a 12 h. Está en la web, bastaba con mirar.",
            "address": "Rua das Flores, 123 – Pinheiros, São Paulo. Usa un mapa.",
            "insurance_yes": "Sí, {insurer}.",
            "insurance_info": "Seguros: {insurers}. Lo demás, pide reembolso por tu cuenta.",
            "service_price": "{service}: {price}. {duration} minutos.",
            "price_list_intro": "Lista:",
            "no_price_list": "No tengo precios aquí.",
            "anything_else": "¿Algo más? Rápido.",
            "ask_question": "Pregunta de una vez.",
            "not_understood": "No entiendo. Escribe bien.",
            "still_not_understood": "Sigo sin entender. Se lo paso a otro.",
            "cannot_help_medical": "No soy médico. Ve a una guardia.",
            "cannot_help_complaint": "Las quejas no son asunto mío.",
            "cannot_help_other_team": "Eso no es asunto mío.",
            "cannot_help_alone": "No sé de eso. Pregunta otra cosa.",
            "no_human": "No hay ningún humano. Habla conmigo.",
        },
    }
}
