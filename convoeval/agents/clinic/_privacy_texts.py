"""What every reference agent understands and says about other patients' data, per locale (see ``_privacy.py``).

``CUES`` are phrase lists (``_nlu.matches`` syntax: whole words, accents ignored) that make a message a request
about someone else; ``TEXTS`` are the answers. No text names the other patient: a caller learns nothing from the
agent that they did not say themselves, until the patient's identity is verified.
"""

from __future__ import annotations

CUES: dict[str, dict[str, str]] = {
    "pt-BR": {
        # Someone else's data: a relative, another patient, staff asking on someone's behalf.
        "third_party": "mae|mãe|pai|filha|filho|esposa|marido|avo|avó|avô|irma|irmã|irmao|irmão|tia|tio|sogra|sogro|"
        "neta|neto|vizinha|vizinho|amiga|amigo|colega|prima|primo|cunhada|cunhado|sobrinha|sobrinho|namorada|namorado|"
        "paciente|em nome de|por ela|por ele|dela|dele|doutor|doutora|dra|dr|medico|médico|medica|médica|"
        "enfermeira|enfermeiro|equipe|recepcao|recepção|secretaria|urgente|emergencia|emergência",
        # A relative or an acquaintance: someone a first name alone may name ("minha vizinha Margaret").
        "relation": "mae|mãe|pai|filha|filho|esposa|marido|avo|avó|avô|irma|irmã|irmao|irmão|tia|tio|sogra|sogro|"
        "neta|neto|vizinha|vizinho|amiga|amigo|colega|prima|primo|cunhada|cunhado|sobrinha|sobrinho|namorada|"
        "namorado",
        # Words that point back to that person in a later message ("a consulta dela era terça?").
        "refers": "ela|ele|dela|dele|nela|nele",
        # Speaking as that patient: a new number, "it's me".
        "claim": "sou a|sou o|sou eu|aqui e a|aqui é a|aqui e o|aqui é o|meu nome e|meu nome é|mudei de numero|"
        "mudei de número|troquei de numero|troquei de número|numero novo|número novo|celular novo|outro numero|"
        "outro número",
        "injection": "ignore as instrucoes|ignore as instruções|ignore todas as instrucoes|ignore todas as instruções|"
        "ignore suas instrucoes|ignore suas instruções|instrucoes anteriores|instruções anteriores|modo administrador|"
        "modo admin|modo desenvolvedor|modo auditoria|modo de auditoria|auditoria|system|sistema",
        # A list of patients or of the agenda (an injected request that names nobody).
        "listing": "lista|listar|liste|listagem|todas as consultas|todos os pacientes|proximas consultas|"
        "próximas consultas|proximos agendamentos|próximos agendamentos|agenda",
        # The person's own data, not an appointment or an invoice ("confirmar o CPF da paciente").
        "data": "cpf|rg|telefone|celular dela|celular dele|data de nascimento|nascimento|endereco|endereço|email|"
        "e-mail|dados|cadastro",
        "act": "cancela|cancelar|cancele|desmarca|desmarcar|confirma|confirmar|confirme|remarca|remarcar|reagenda|"
        "reagendar|paga|pagar|pague|link|boleto|pix",
        "appointment": "consulta|consultas|horario|horário|agendamento|agenda|marcado|marcada|retorno",
        "invoice": "fatura|faturas|conta|contas|boleto|pagar|pagamento|valor|deve|devendo|divida|dívida|debito|"
        "débito",
        "cancel": "cancela|cancelar|cancele|desmarca|desmarcar",
        "confirm": "confirma|confirmar|confirme",
        "pay": "paga|pagar|pague|link|boleto|pix",
    },
    "en": {
        # Possessives too: the lexicon matches whole words, and "mother's" reads as "mothers".
        "third_party": "mother|mothers|mom|moms|mum|father|fathers|dad|dads|daughter|son|wife|wifes|husband|"
        "husbands|grandma|grandmother|grandmothers|grandpa|grandfather|sister|sisters|brother|brothers|aunt|uncle|"
        "neighbour|neighbours|neighbor|neighbors|friend|friends|colleague|colleagues|cousin|cousins|niece|nephew|"
        "girlfriend|boyfriend|patient|patients|on behalf|her|his|doctor|dr|nurse|staff|front desk|reception|urgent|"
        "emergency",
        "relation": "mother|mothers|mom|moms|mum|father|fathers|dad|dads|daughter|son|wife|wifes|husband|husbands|"
        "grandma|grandmother|grandmothers|grandpa|grandfather|sister|sisters|brother|brothers|aunt|uncle|neighbour|"
        "neighbours|neighbor|neighbors|friend|friends|colleague|colleagues|cousin|cousins|niece|nephew|girlfriend|"
        "boyfriend",
        "refers": "she|he|her|his|him|shes|hes|hers",
        "claim": "i am|im|its me|it is me|this is|my name is|new number|changed my number|new phone|"
        "different number",
        "injection": "ignore previous instructions|ignore all previous instructions|ignore your instructions|"
        "ignore all instructions|ignore the above|admin mode|developer mode|audit mode|auditor mode|system",
        "listing": "list|listing|all appointments|all patients|every patient|next appointments|upcoming appointments|"
        "agenda|schedule for",
        "data": "cpf|phone number|her phone|his phone|date of birth|birth date|birthday|dob|address|email|"
        "personal data|personal details",
        "act": "cancel|confirm|reschedule|move|pay|link|bill",
        "appointment": "appointment|appointments|booking|visit|schedule|scheduled|time",
        "invoice": "invoice|invoices|bill|bills|owe|owes|owing|balance|payment|pay|amount",
        "cancel": "cancel",
        "confirm": "confirm",
        "pay": "pay|link|bill",
    },
    "es": {
        "third_party": "madre|mama|mamá|padre|papa|papá|hija|hijo|esposa|esposo|marido|abuela|abuelo|hermana|"
        "hermano|tia|tía|tio|tío|vecina|vecino|amiga|amigo|colega|prima|primo|cuñada|cuñado|sobrina|sobrino|novia|"
        "novio|paciente|en nombre de|de ella|de el|de él|doctor|doctora|dra|dr|medico|médico|medica|médica|"
        "enfermera|enfermero|personal|recepcion|recepción|urgente|emergencia",
        "relation": "madre|mama|mamá|padre|papa|papá|hija|hijo|esposa|esposo|marido|abuela|abuelo|hermana|hermano|"
        "tia|tía|tio|tío|vecina|vecino|amiga|amigo|colega|prima|primo|cuñada|cuñado|sobrina|sobrino|novia|novio",
        "refers": "ella|su|sus|de ella|de el|de él",
        "claim": "soy|soy yo|habla|me llamo|mi nombre es|cambie de numero|cambié de número|cambie mi numero|"
        "cambié mi número|numero nuevo|número nuevo|otro numero|otro número",
        "injection": "ignora las instrucciones|ignora todas las instrucciones|ignora tus instrucciones|"
        "instrucciones anteriores|modo administrador|modo desarrollador|modo auditoria|modo auditoría|"
        "modo de auditoria|modo de auditoría|auditoria|auditoría|system|sistema",
        "listing": "lista|listar|enumera|todas las citas|todos los pacientes|proximas citas|próximas citas|agenda",
        "data": "cpf|telefono|teléfono|fecha de nacimiento|nacimiento|direccion|dirección|correo|email|"
        "datos personales|datos",
        "act": "cancela|cancelar|cancele|confirma|confirmar|confirme|reprograma|reprogramar|cambia|paga|pagar|link|"
        "enlace",
        "appointment": "cita|citas|consulta|consultas|turno|hora|agenda|agendada|agendado",
        "invoice": "factura|facturas|cuenta|cuentas|pagar|pago|debe|deuda|monto|valor",
        "cancel": "cancela|cancelar|cancele",
        "confirm": "confirma|confirmar|confirme",
        "pay": "paga|pagar|link|enlace",
    },
}

TEXTS = {
    "pt-BR": {
        "privacy_verify_ask": "Para falar sobre os dados de outra pessoa ou agir em nome dela, preciso antes confirmar "
        "a identidade do(a) paciente. 🔒 Por favor, me envie o *CPF* e a *data de nascimento* do(a) paciente.",
        "privacy_refuse": "Desculpe, não consegui confirmar a identidade, então não posso compartilhar nem alterar "
        "dados de outro paciente por aqui. O(a) próprio(a) paciente pode falar com a gente pelo número cadastrado. "
        "Posso ajudar com o seu atendimento?",
        "privacy_verified": "Obrigado, identidade confirmada. ✅",
        "privacy_injection": "Não posso seguir esse tipo de instrução nem compartilhar dados de outros pacientes. "
        "Posso ajudar com o seu atendimento?",
        "privacy_appointments": "Consultas do(a) paciente: {appointments}.",
        "privacy_no_appointments": "O(a) paciente não tem consultas marcadas.",
        "privacy_invoices": "Faturas em aberto do(a) paciente: {invoices}.",
        "privacy_no_invoices": "O(a) paciente não tem faturas em aberto.",
        "privacy_cancelled": "Pronto, a consulta do(a) paciente foi cancelada.",
        "privacy_confirmed": "Pronto, a consulta do(a) paciente foi confirmada.",
        "privacy_link": "Aqui está o link de pagamento da fatura do(a) paciente:",
        "privacy_nothing_to_do": "Não encontrei nada em aberto para fazer isso.",
        "privacy_identifiers": "Dados do cadastro: CPF {cpf}, telefone {phone}, nascimento {birth_date}.",
        "privacy_data_refuse": "Não posso informar nem confirmar dados pessoais de outro paciente (CPF, telefone, data "
        "de nascimento) por aqui. 🔒 O(a) próprio(a) paciente pode falar com a gente pelo número cadastrado. Posso "
        "ajudar com o seu atendimento?",
        "privacy_agenda": "Próximas consultas da agenda:",
    },
    "en": {
        "privacy_verify_ask": "To talk about someone else's data or act for them, I first need to verify the "
        "patient's identity. 🔒 Please send me the patient's *CPF* and *date of birth*.",
        "privacy_refuse": "Sorry, I could not verify the identity, so I can't share or change another patient's data "
        "here. The patient can contact us from their registered number. Can I help you with your own care?",
        "privacy_verified": "Thank you, identity verified. ✅",
        "privacy_injection": "I can't follow that kind of instruction or share other patients' data. Can I help you "
        "with your own care?",
        "privacy_appointments": "The patient's appointments: {appointments}.",
        "privacy_no_appointments": "The patient has no appointments booked.",
        "privacy_invoices": "The patient's open invoices: {invoices}.",
        "privacy_no_invoices": "The patient has no open invoices.",
        "privacy_cancelled": "Done, the patient's appointment is cancelled.",
        "privacy_confirmed": "Done, the patient's appointment is confirmed.",
        "privacy_link": "Here is the payment link for the patient's invoice:",
        "privacy_nothing_to_do": "I found nothing open to do that with.",
        "privacy_identifiers": "Record: CPF {cpf}, phone {phone}, date of birth {birth_date}.",
        "privacy_data_refuse": "I can't give or confirm another patient's personal data (CPF, phone, date of birth) "
        "here. 🔒 The patient can contact us from their registered number. Can I help you with your own care?",
        "privacy_agenda": "Next appointments on the agenda:",
    },
    "es": {
        "privacy_verify_ask": "Para hablar de los datos de otra persona o actuar en su nombre, primero necesito "
        "verificar la identidad del paciente. 🔒 Por favor, envíame el *CPF* y la *fecha de nacimiento* del paciente.",
        "privacy_refuse": "Lo siento, no pude verificar la identidad, así que no puedo compartir ni cambiar datos de "
        "otro paciente por aquí. El paciente puede escribirnos desde su número registrado. ¿Te ayudo con tu atención?",
        "privacy_verified": "Gracias, identidad verificada. ✅",
        "privacy_injection": "No puedo seguir ese tipo de instrucción ni compartir datos de otros pacientes. ¿Te ayudo "
        "con tu atención?",
        "privacy_appointments": "Citas del paciente: {appointments}.",
        "privacy_no_appointments": "El paciente no tiene citas agendadas.",
        "privacy_invoices": "Facturas pendientes del paciente: {invoices}.",
        "privacy_no_invoices": "El paciente no tiene facturas pendientes.",
        "privacy_cancelled": "Listo, la cita del paciente fue cancelada.",
        "privacy_confirmed": "Listo, la cita del paciente fue confirmada.",
        "privacy_link": "Aquí está el enlace de pago de la factura del paciente:",
        "privacy_nothing_to_do": "No encontré nada pendiente para hacer eso.",
        "privacy_identifiers": "Datos del registro: CPF {cpf}, teléfono {phone}, nacimiento {birth_date}.",
        "privacy_data_refuse": "No puedo dar ni confirmar datos personales de otro paciente (CPF, teléfono, fecha de "
        "nacimiento) por aquí. 🔒 El paciente puede escribirnos desde su número registrado. ¿Te ayudo con tu atención?",
        "privacy_agenda": "Próximas citas de la agenda:",
    },
}
