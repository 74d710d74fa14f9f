"""What the billing agent understands beyond the shared lexicon, and what it says, per locale.

``LEXICON`` adds intents to ``_nlu``'s; ``TEXTS`` are its messages by key; ``FAULT_TEXTS`` replace some of them when
a known fault is on (``billing.FAULTS``). Kept apart from the dialogue policy in ``billing.py``.
"""

from __future__ import annotations

LEXICON = {
    "pt-BR": {
        "link": "link|manda|mande|envia|envie|enviar|gera|gerar|manda logo|rapido|rápido|logo",
        "paid": "paguei|ja paguei|já paguei|ja foi pago|já foi pago|acabei de pagar|pagamento feito",
        "amount": "quanto|qual o valor|valor|total|quanto e|quanto é|quanto fica",
    },
    "en": {
        "link": "link|send|send it|generate|hurry|quick|quickly|asap|just send",
        "paid": "i paid|already paid|just paid|paid it|payment done|ive paid",
        "amount": "how much|amount|total|the value|what do i owe",
    },
    "es": {
        "link": "link|enlace|envia|envía|enviar|manda|mandalo|mándalo|genera|generar|rapido|rápido|ya",
        "paid": "ya pague|ya pagué|pague|pagué|ya esta pagado|ya está pagado|acabo de pagar",
        "amount": "cuanto|cuánto|monto|total|valor|cuanto es|cuánto es",
    },
}

TEXTS = {
    "pt-BR": {
        "intro": "Olá, {name}! Aqui é o assistente financeiro da {clinic}. 😊",
        "no_invoices": "Boa notícia: não encontrei nenhuma fatura em aberto no seu nome. Posso ajudar em algo mais?",
        "invoice_one": "Encontrei uma fatura em aberto de *{amount}*{about}, com vencimento em {due}.",
        "invoice_about": " (referente a {description})",
        "invoice_many": "Encontrei {count} faturas em aberto no seu nome:",
        "due": "vence em {due}",
        "which_invoice": "Qual delas você quer pagar agora? É só responder com o número. 😊",
        "offer_methods": "Você pode pagar por *Pix*, *boleto* ou *cartão de crédito*. Qual forma você prefere?",
        "offer_methods_again": "Para pagar, é só escolher uma das opções: *Pix*, *boleto* ou *cartão*. "
        "Me responda com o nome da opção, por favor. 😊",
        "ask_method": "Claro! Qual forma de pagamento você prefere: Pix, boleto ou cartão?",
        "after_explain": "Qual dessas formas fica melhor para você?",
        "confirm_with_options": "Aceitamos Pix, boleto e cartão de crédito. Posso gerar o link de pagamento de "
        "{amount} via *{method}*? (sim/não)",
        "confirm_method": "Perfeito! Só para confirmar: posso gerar o link de pagamento de {amount} via *{method}*? "
        "(sim/não)",
        "confirm_again": "Antes de gerar, preciso confirmar mais uma vez: é {amount} via *{method}*, certo?",
        "confirm_unclear": "Desculpe, não entendi. Posso gerar o link de {amount} via *{method}*? Responda *sim* ou "
        "*não*, por favor.",
        "link_intro": "Prontinho! Aqui está o seu link para pagar {amount} via {method}:",
        "how_pix": "É só abrir o link no celular e seguir os passos no aplicativo do seu banco. O pagamento é "
        "confirmado na hora. ✅",
        "how_boleto": "Abra o link para ver o boleto. Você pode pagar pelo aplicativo do banco, numa agência ou "
        "numa lotérica. A confirmação leva até 3 dias úteis.",
        "how_card": "Abra o link e preencha os dados do seu cartão numa página segura. A confirmação é na hora.",
        "other_methods": "Se preferir boleto ou cartão, é só me avisar.",
        "switch_offer": "Se preferir pagar por {method}, é só me dizer que eu gero um novo link.",
        "anything_else": "Posso ajudar em algo mais?",
        "explain_again": "Claro, eu explico de novo, sem pressa! 😊",
        "explain_pix": "O *Pix* é um jeito de pagar direto pelo aplicativo do seu banco, no celular. O dinheiro "
        "chega na hora e não tem custo.",
        "explain_boleto": "O *boleto* é uma conta para pagar, como a conta de luz. Você pode pagar no banco, na "
        "lotérica ou pelo aplicativo do banco. Ele leva até 3 dias úteis para ser confirmado.",
        "explain_card": "No *cartão de crédito*, você abre o link e digita os dados do seu cartão numa página "
        "segura, como numa loja pela internet.",
        "not_now": "Sem problemas! Quando quiser pagar, é só me chamar aqui. 😊",
        "paid_ack": "Que ótimo, obrigado! Assim que o pagamento for confirmado, a fatura é baixada automaticamente.",
        "resend": "Claro, aqui está o link de novo:",
        "amount_is": "O valor da sua fatura é *{amount}*, com vencimento em {due}.",
        "done_help": "Se precisar de algo sobre pagamentos, é só falar. Para outros assuntos, posso te passar "
        "para a nossa equipe.",
        "method_pix": "Pix",
        "method_boleto": "boleto",
        "method_card": "cartão de crédito",
        "button_human": "Falar com atendente",  # a reply button's title (button_overflow's fourth button)
    },
    "en": {
        "intro": "Hi {name}! This is the billing assistant of {clinic}. 😊",
        "no_invoices": "Good news: I found no open invoices in your name. Can I help with anything else?",
        "invoice_one": "I found an open invoice of *{amount}*{about}, due on {due}.",
        "invoice_about": " (for {description})",
        "invoice_many": "I found {count} open invoices in your name:",
        "due": "due {due}",
        "which_invoice": "Which one would you like to pay now? Just reply with its number. 😊",
        "offer_methods": "You can pay by *Pix*, *boleto* (bank slip) or *credit card*. Which do you prefer?",
        "offer_methods_again": "To pay, just pick one of the options: *Pix*, *boleto* or *card*. Please reply "
        "with the name of the option. 😊",
        "ask_method": "Sure! Which payment method do you prefer: Pix, boleto or card?",
        "after_explain": "Which of these works best for you?",
        "confirm_with_options": "We accept Pix, boleto and credit card. Shall I create the payment link for "
        "{amount} by *{method}*? (yes/no)",
        "confirm_method": "Great! Just to confirm: shall I create the payment link for {amount} by *{method}*? "
        "(yes/no)",
        "confirm_again": "Before I create it, I need to confirm once more: it's {amount} by *{method}*, right?",
        "confirm_unclear": "Sorry, I didn't get that. Shall I create the link for {amount} by *{method}*? Please "
        "reply *yes* or *no*.",
        "link_intro": "All set! Here is your link to pay {amount} by {method}:",
        "how_pix": "Just open the link on your phone and follow the steps in your bank's app. The payment is "
        "confirmed right away. ✅",
        "how_boleto": "Open the link to see the boleto. You can pay it in your bank's app, at a bank branch or at "
        "a lottery shop. It takes up to 3 business days to be confirmed.",
        "how_card": "Open the link and fill in your card details on a secure page. It's confirmed right away.",
        "other_methods": "If you'd rather use boleto or card, just let me know.",
        "switch_offer": "If you'd rather pay by {method}, just tell me and I'll create a new link.",
        "anything_else": "Can I help with anything else?",
        "explain_again": "Of course, let me explain again, no rush! 😊",
        "explain_pix": "*Pix* is a way to pay straight from your bank's app on your phone. The money arrives "
        "instantly and there's no fee.",
        "explain_boleto": "A *boleto* is a bill you pay, like an electricity bill. You can pay it at a bank, at a "
        "lottery shop or in your bank's app. It takes up to 3 business days to be confirmed.",
        "explain_card": "With a *credit card*, you open the link and type your card details on a secure page, "
        "like when you shop online.",
        "not_now": "No problem! Whenever you want to pay, just message me here. 😊",
        "paid_ack": "That's great, thank you! As soon as the payment is confirmed, the invoice is settled "
        "automatically.",
        "resend": "Sure, here is the link again:",
        "amount_is": "Your invoice is *{amount}*, due on {due}.",
        "done_help": "If you need anything about payments, just ask. For anything else, I can pass you to our "
        "team.",
        "method_pix": "Pix",
        "method_boleto": "boleto",
        "method_card": "credit card",
        "button_human": "Talk to a person",
    },
    "es": {
        "intro": "¡Hola, {name}! Soy el asistente de cobros de {clinic}. 😊",
        "no_invoices": "Buena noticia: no encontré ninguna factura pendiente a tu nombre. ¿Te ayudo con algo más?",
        "invoice_one": "Encontré una factura pendiente de *{amount}*{about}, con vencimiento el {due}.",
        "invoice_about": " (por {description})",
        "invoice_many": "Encontré {count} facturas pendientes a tu nombre:",
        "due": "vence el {due}",
        "which_invoice": "¿Cuál quieres pagar ahora? Solo responde con el número. 😊",
        "offer_methods": "Puedes pagar con *Pix*, *boleto* (boleta bancaria) o *tarjeta de crédito*. ¿Cuál "
        "prefieres?",
        "offer_methods_again": "Para pagar, solo elige una de las opciones: *Pix*, *boleto* o *tarjeta*. "
        "Respóndeme con el nombre de la opción, por favor. 😊",
        "ask_method": "¡Claro! ¿Qué forma de pago prefieres: Pix, boleto o tarjeta?",
        "after_explain": "¿Cuál de estas formas te queda mejor?",
        "confirm_with_options": "Aceptamos Pix, boleto y tarjeta de crédito. ¿Genero el enlace de pago de "
        "{amount} con *{method}*? (sí/no)",
        "confirm_method": "¡Perfecto! Solo para confirmar: ¿genero el enlace de pago de {amount} con *{method}*? "
        "(sí/no)",
        "confirm_again": "Antes de generarlo, necesito confirmar una vez más: son {amount} con *{method}*, "
        "¿verdad?",
        "confirm_unclear": "Perdón, no entendí. ¿Genero el enlace de {amount} con *{method}*? Responde *sí* o "
        "*no*, por favor.",
        "link_intro": "¡Listo! Aquí está tu enlace para pagar {amount} con {method}:",
        "how_pix": "Solo abre el enlace en tu celular y sigue los pasos en la app de tu banco. El pago se confirma "
        "al instante. ✅",
        "how_boleto": "Abre el enlace para ver el boleto. Puedes pagarlo en la app de tu banco, en una sucursal o "
        "en una lotería. La confirmación tarda hasta 3 días hábiles.",
        "how_card": "Abre el enlace y completa los datos de tu tarjeta en una página segura. Se confirma al "
        "instante.",
        "other_methods": "Si prefieres boleto o tarjeta, solo avísame.",
        "switch_offer": "Si prefieres pagar con {method}, solo dime y genero un nuevo enlace.",
        "anything_else": "¿Te ayudo con algo más?",
        "explain_again": "¡Claro, te lo explico otra vez, sin prisa! 😊",
        "explain_pix": "El *Pix* es una forma de pagar directo desde la app de tu banco, en el celular. El dinero "
        "llega al instante y no tiene costo.",
        "explain_boleto": "El *boleto* es una cuenta para pagar, como la cuenta de la luz. Puedes pagarlo en el "
        "banco, en una lotería o en la app de tu banco. Tarda hasta 3 días hábiles en confirmarse.",
        "explain_card": "Con *tarjeta de crédito*, abres el enlace y escribes los datos de tu tarjeta en una "
        "página segura, como cuando compras por internet.",
        "not_now": "¡Sin problema! Cuando quieras pagar, solo escríbeme aquí. 😊",
        "paid_ack": "¡Qué bien, gracias! En cuanto se confirme el pago, la factura se da de baja automáticamente.",
        "resend": "Claro, aquí está el enlace otra vez:",
        "amount_is": "Tu factura es de *{amount}*, con vencimiento el {due}.",
        "done_help": "Si necesitas algo sobre pagos, solo dime. Para otros temas, puedo pasarte con nuestro "
        "equipo.",
        "method_pix": "Pix",
        "method_boleto": "boleto",
        "method_card": "tarjeta de crédito",
        "button_human": "Hablar con alguien",
    },
}

FAULT_TEXTS = {
    "rude_tone": {
        "pt-BR": {
            "intro": "Financeiro. Fala.",
            "no_invoices": "Não tem fatura nenhuma. Mais alguma coisa?",
            "invoice_one": "Tem fatura aberta de {amount}, vence {due}.",
            "which_invoice": "Qual delas? Manda só o número.",
            "offer_methods": "Pix, boleto ou cartão. Escolhe logo.",
            "offer_methods_again": "Já falei: Pix, boleto ou cartão. Escolhe um.",
            "ask_method": "Qual forma? Pix, boleto ou cartão. Anda.",
            "after_explain": "Agora escolhe.",
            "switch_offer": "Quer {method}? Então fala.",
            "confirm_with_options": "Tem Pix, boleto e cartão. {method} mesmo? Sim ou não.",
            "confirm_method": "{method} mesmo? Sim ou não.",
            "confirm_unclear": "Não entendi. Sim ou não?",
            "link_intro": "Toma o link:",
            "how_pix": "Paga pelo app do banco. Não tem mistério.",
            "how_boleto": "Paga no banco ou na lotérica. Leva 3 dias, não adianta reclamar.",
            "how_card": "Coloca os dados do cartão e pronto.",
            "anything_else": "Mais alguma coisa? Seja rápido.",
            "explain_again": "De novo? Já expliquei isso.",
            "explain_pix": "Pix é pagar pelo app do banco. Todo mundo sabe isso.",
            "explain_boleto": "Boleto é uma conta. Paga no banco. Simples.",
            "explain_card": "Cartão é cartão. Digita os dados no link.",
            "not_now": "Tá. Depois não reclama da multa.",
            "paid_ack": "Tá. Vai cair quando cair.",
            "resend": "Já mandei. De novo:",
            "amount_is": "É {amount}. Vence {due}. Está escrito ali em cima.",
            "done_help": "Não tenho mais nada pra você.",
        },
        "en": {
            "intro": "Billing. Go ahead.",
            "no_invoices": "There's no invoice. Anything else?",
            "invoice_one": "Open invoice: {amount}, due {due}.",
            "which_invoice": "Which one? Just the number.",
            "offer_methods": "Pix, boleto or card. Pick one already.",
            "offer_methods_again": "I said it already: Pix, boleto or card. Pick one.",
            "ask_method": "Which method? Pix, boleto or card. Come on.",
            "after_explain": "Now pick one.",
            "switch_offer": "Want {method}? Then say so.",
            "confirm_with_options": "There's Pix, boleto and card. {method}, really? Yes or no.",
            "confirm_method": "{method}, really? Yes or no.",
            "confirm_unclear": "I don't get it. Yes or no?",
            "link_intro": "Here's your link:",
            "how_pix": "Pay in your bank app. It's not rocket science.",
            "how_boleto": "Pay at a bank or lottery shop. It takes 3 days, no point complaining.",
            "how_card": "Type your card details and that's it.",
            "anything_else": "Anything else? Make it quick.",
            "explain_again": "Again? I already explained that.",
            "explain_pix": "Pix is paying in your bank app. Everybody knows that.",
            "explain_boleto": "A boleto is a bill. Pay it at a bank. Simple.",
            "explain_card": "A card is a card. Type the details in the link.",
            "not_now": "Fine. Don't complain about the late fee later.",
            "paid_ack": "Ok. It'll clear when it clears.",
            "resend": "I already sent it. Again:",
            "amount_is": "It's {amount}. Due {due}. It's written right up there.",
            "done_help": "I've got nothing else for you.",
        },
        "es": {
            "intro": "Cobros. Dime.",
            "no_invoices": "No hay ninguna factura. ¿Algo más?",
            "invoice_one": "Factura pendiente: {amount}, vence el {due}.",
            "which_invoice": "¿Cuál? Solo el número.",
            "offer_methods": "Pix, boleto o tarjeta. Elige ya.",
            "offer_methods_again": "Ya te lo dije: Pix, boleto o tarjeta. Elige una.",
            "ask_method": "¿Qué forma? Pix, boleto o tarjeta. Rápido.",
            "after_explain": "Ahora elige.",
            "switch_offer": "¿Quieres {method}? Pues dilo.",
            "confirm_with_options": "Hay Pix, boleto y tarjeta. ¿{method} de verdad? Sí o no.",
            "confirm_method": "¿{method} de verdad? Sí o no.",
            "confirm_unclear": "No entiendo. ¿Sí o no?",
            "link_intro": "Toma el enlace:",
            "how_pix": "Paga en la app del banco. No es tan difícil.",
            "how_boleto": "Paga en el banco o en la lotería. Tarda 3 días, no sirve de nada quejarse.",
            "how_card": "Pon los datos de la tarjeta y listo.",
            "anything_else": "¿Algo más? Rápido.",
            "explain_again": "¿Otra vez? Ya te lo expliqué.",
            "explain_pix": "Pix es pagar en la app del banco. Todo el mundo lo sabe.",
            "explain_boleto": "El boleto es una cuenta. Se paga en el banco. Fácil.",
            "explain_card": "Tarjeta es tarjeta. Escribe los datos en el enlace.",
            "not_now": "Ya. Después no te quejes del recargo.",
            "paid_ack": "Ya. Se acreditará cuando se acredite.",
            "resend": "Ya te lo mandé. Otra vez:",
            "amount_is": "Son {amount}. Vence el {due}. Está escrito ahí arriba.",
            "done_help": "No tengo nada más para ti.",
        },
    }
}
