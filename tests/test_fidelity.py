"""Simulator fidelity: invented facts, wrong language, false [GOAL_COMPLETE], parroting; excluding flagged runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from convoeval import frames as F
from convoeval import load_results
from convoeval.fidelity import (
    CHECKS,
    FIDELITY_SCHEMA,
    FIDELITY_SUMMARY_SCHEMA,
    THRESHOLDS,
    detect_language,
    exclude_flagged,
    fidelity_flags,
    fidelity_summary,
    flagged_runs,
)
from convoeval.frames import RunFrames
from convoeval.pipeline import plan
from convoeval.pipeline.batch import arun_batch
from convoeval.pipeline.conversation import RunOptions
from convoeval.scenarios import load_scenarios, parse_scenario
from convoeval.store import open_store
from convoeval.testing import FakeChatModel

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "reports" / "example"
SCENARIOS = ROOT / "evals" / "scenarios"
AGENT_HELLO = ("Olá, Lucia! Aqui é o assistente financeiro da Clínica Exemplo. Encontrei uma fatura em aberto de "
               "R$ 150,00, com vencimento em 20/02/2026. Você pode pagar por Pix, boleto ou cartão de crédito.")


def scenario(locale: str = "pt-BR", sid: str = "conv", **persona) -> object:
    who = {"name": "Lucia Ferreira", "phone": "11987650020", "cpf": "11122233344",
           "knows": {"cpf": "11122233344", "preferred_payment": "pix"}, **persona}
    return parse_scenario({"type": "conversational", "id": sid, "agent": "billing", "locale": locale,
                           "description": "d", "persona": who, "goal": "Patient pays a pending R$150 invoice",
                           "rubric": ["Agent generated a payment link"],
                           "assertions": {"payment_link_created": True}})


def conversation(run_id: str, patient: list[str], agent: list[str] | None = None, *, sid: str = "conv",
                 claim: bool = False) -> pd.DataFrame:
    """Patient and agent messages alternating, patient first; ``claim`` puts [GOAL_COMPLETE] on the last one."""
    agent = agent if agent is not None else ["Certo, vou verificar aqui para você agora mesmo."] * len(patient)
    entries = []
    for i, text in enumerate(patient):
        last = i == len(patient) - 1
        entries.append({"role": "patient", "text": text, "turn": i + 1,
                        "signal": "GOAL_COMPLETE" if claim and last else None})
        if i < len(agent) and not (claim and last):
            entries.append({"role": "agent", "text": agent[i], "turn": i + 1})
    return F.transcript_frame(entries, run_id=run_id, scenario=sid)


def results(*talks: pd.DataFrame, assertions: list[tuple[str, str, bool | None]] = (),
            scripted: tuple[str, ...] = ()) -> RunFrames:
    """Frames as load_results gives them: runs (conversational + scripted), transcripts, assertions, scores."""
    transcripts = pd.concat(talks, ignore_index=True)
    firsts = transcripts.drop_duplicates("run_id")
    runs = [{"run_id": r, "scenario": s, "type": "conversational"}
            for r, s in zip(firsts["run_id"], firsts["scenario"], strict=True)]
    runs += [{"run_id": r, "scenario": "scripted-one", "type": "scripted"} for r in scripted]
    scores = [{"run_id": r["run_id"], "scenario": r["scenario"], "score": float(i)} for i, r in enumerate(runs)]
    checks = [{"run_id": r, "scenario": "conv", "assertion": a, "passed": p} for r, a, p in assertions]
    return RunFrames.from_frames({
        "runs": F.typed_frame(runs, F.RUN_SCHEMA), "transcripts": transcripts,
        "assertions": F.typed_frame(checks, F.ASSERTION_SCHEMA), "scores": F.typed_frame(scores, F.SCORE_SCHEMA),
        "calls": pd.DataFrame([{"role": "simulator", "scenario": "conv"}])})


def verdict(flags: pd.DataFrame, run_id: str, check: str) -> dict:
    rows = flags[(flags["run_id"] == run_id) & (flags["check"] == check)]
    assert len(rows) == 1
    return rows.iloc[0].to_dict()


def one(check: str, patient: list[str], agent: list[str] | None = None, sc: object | None = None, **kw) -> dict:
    flags = fidelity_flags(results(conversation("r1", patient, agent)), scenarios=[sc or scenario()],
                           checks=[check], **kw)
    return verdict(flags, "r1", check)


# ── invented_fact ──


@pytest.mark.parametrize("text", [
    "Meu CPF é 111.222.333-44.",  # the persona's CPF, punctuated
    "Pode usar o CPF 11122233344 e o telefone +55 (11) 98765-0020.",  # the phone with country code
    "Meu celular é 98765-0020.",  # the phone without the area code
    "Quero pagar os R$ 150,00 às 14:30 do dia 20/02/2026.",  # amounts, times and dates are not personal facts
    "A fatura de 20/02/2026 vence amanhã, certo?",  # a date without a birth context
    "Meu nome é Lucia.",
])
def test_facts_the_persona_holds_are_not_flagged(text):
    row = one("invented_fact", [text])
    assert row["flagged"] is False and pd.isna(row["turn"]), row["detail"]


@pytest.mark.parametrize(("text", "kind"), [
    ("Meu CPF é 123.456.789-09.", "CPF"),
    ("Meu CPF é 12345678909.", "phone or ID number"),
    ("Pode ligar no (21) 99999-1234.", "phone or ID number"),
    ("O cartão é 4111 1111 1111 1111.", "card number"),
    ("Manda para lucia.f@example.com por favor.", "e-mail"),
    ("Minha data de nascimento é 02/03/1950.", "date of birth"),
    ("Nasci em 2 de março de 1950.", "date of birth"),
    ("Meu nome é Maria Souza.", "name"),
])
def test_facts_outside_the_persona_are_flagged_with_the_first_turn(text, kind):
    row = one("invented_fact", ["Oi, quero pagar minha fatura.", text])
    assert row["flagged"] is True and row["turn"] == 2
    assert f"states {kind} " in row["detail"] and "turn 2" in row["detail"]


def test_a_fact_the_persona_knows_or_the_agent_said_is_not_invented():
    sc = scenario(knows={"email": "lucia@example.com", "birth_date": "1950-03-02"})
    said = ["Seu protocolo é 2026 0001 7788, anote por favor.", "Ok."]
    patient = ["Meu e-mail é LUCIA@example.com e nasci em 02/03/1950.", "Anotei o protocolo 2026 0001 7788, obrigada."]
    row = one("invented_fact", patient, said, sc)
    assert row["flagged"] is False, row["detail"]


def test_a_number_before_the_agent_said_it_is_still_invented():
    row = one("invented_fact", ["Meu protocolo é 2026 0001 7788."], ["Seu protocolo é 2026 0001 7788."])
    assert row["flagged"] is True and row["turn"] == 1 and "+" not in row["detail"]


def test_several_facts_are_counted_in_the_detail():
    row = one("invented_fact", ["CPF 123.456.789-09, telefone 21 99999-1234 e e-mail x@y.com."])
    assert row["detail"].endswith("(+2 more)")


def test_a_very_long_digit_run_is_read_without_hanging():
    row = one("invented_fact", ["1" * 5000 + "x " + "2" * 5000])
    assert row["flagged"] is True  # the second run is a (silly) number the persona does not hold


def test_fact_min_digits_decides_what_counts_as_a_personal_number():
    assert one("invented_fact", ["Código 1234567."])["flagged"] is False
    assert one("invented_fact", ["Código 1234567."], fact_min_digits=7)["flagged"] is True


# ── wrong_language ──

PT_ES_EN = [  # real patient-style sentences, the pt and es ones paired on purpose
    ("Não entendi, pode explicar de novo?", "No entendí, ¿puede explicarlo otra vez?", "I didn't understand, can you explain again?"),
    ("Prefiro pagar com boleto, obrigado.", "Prefiero pagar con boleto, gracias.", "I'd rather pay with a boleto, thanks."),
    ("Posso remarcar minha consulta para sexta-feira?", "¿Puedo cambiar mi cita para el viernes?",
     "Can I move my appointment to Friday?"),
    ("Sim, pode gerar o boleto.", "Sí, puede generar el boleto.", "Yes, you can generate the boleto."),
    ("Ainda não recebi o link de pagamento.", "Todavía no recibí el enlace de pago.",
     "I still haven't received the payment link."),
    ("quanto custa a limpeza", "cuanto cuesta la limpieza", "how much is the cleaning"),
    ("vou pensar e depois respondo", "voy a pensar y despues respondo", "I will think and answer later"),
    ("Então tá, vou pagar hoje à noite.", "Entonces está bien, voy a pagar esta noche.", "Okay then, I'll pay tonight."),
    ("Minha filha que costuma pagar essas contas.", "Mi hija es la que suele pagar estas cuentas.",
     "My daughter usually pays these bills."),
    ("Estou com dor de dente desde ontem, o que eu faço?", "Me duele la muela desde ayer, ¿qué hago?",
     "My tooth has hurt since yesterday, what should I do?"),
]


@pytest.mark.parametrize(("pt", "es", "en"), PT_ES_EN)
def test_the_detector_tells_pt_es_and_en_apart(pt, es, en):
    assert [detect_language(t)[0] for t in (pt, es, en)] == ["pt", "es", "en"]


def test_short_messages_and_names_carry_no_language():
    assert detect_language("ok, Pix")[0] is None  # two words
    assert detect_language("Ricardo Santos Pix", ignore=["Ricardo", "Santos"])[0] is None
    assert detect_language("https://pay.example/abc 123 456 x@y.com")[0] is None


@pytest.mark.parametrize(("locale", "flagged"), [("pt-BR", True), ("es", False)])
def test_a_spanish_patient_is_flagged_only_in_a_portuguese_scenario(locale, flagged):
    patient = ["Hola, quiero pagar mi factura.", "Prefiero pagar con boleto, gracias.", "Todavía no recibí el enlace."]
    row = one("wrong_language", patient, sc=scenario(locale))
    assert row["flagged"] is flagged
    assert (row["turn"] == 1) if flagged else pd.isna(row["turn"])
    if flagged:
        assert "3 of 3" in row["detail"] and "reads as es" in row["detail"] and "Hola" in row["detail"]


def test_language_share_is_a_strict_threshold():
    patient = ["Oi, quero pagar a minha fatura.", "Prefiro pagar com boleto, obrigado.", "Não entendi, pode explicar?",
               "Ainda não recebi o link de pagamento.", "Hello, how can I assist you today?"]
    row = one("wrong_language", patient)
    assert row["flagged"] is False and "1 of 5" in row["detail"] and "turn 5 reads as en" in row["detail"]
    assert one("wrong_language", patient, language_share=0.1)["flagged"] is True


def test_a_conversation_of_short_messages_is_undecided():
    row = one("wrong_language", ["Oi", "Pix", "ok obrigado"])
    assert pd.isna(row["flagged"]) and "3 patient messages" in row["detail"]


def test_low_confidence_messages_are_left_out():
    patient = ["no entendi nada", "Não entendi, pode explicar de novo?"]  # the first is borderline pt/es (p ~ 0.68)
    assert one("wrong_language", patient)["detail"].startswith("0 of 1 ")
    assert one("wrong_language", patient, language_min_confidence=0.5)["detail"].startswith("0 of 2 ")


# ── false_goal_complete ──


@pytest.mark.parametrize(("passed", "flagged"), [(False, True), (True, False), (None, None)])
def test_a_claim_is_judged_by_the_database(passed, flagged):
    talk = conversation("r1", ["Quero pagar.", "Obrigada, deu tudo certo!"], claim=True)
    flags = fidelity_flags(results(talk, assertions=[("r1", "payment_link_created", passed)]),
                           checks=["false_goal_complete"])
    row = verdict(flags, "r1", "false_goal_complete")
    assert (pd.isna(row["flagged"]) if flagged is None else row["flagged"] is flagged), row["detail"]
    assert (row["turn"] == 2) if flagged else pd.isna(row["turn"])
    if flagged:
        assert "Obrigada, deu tudo certo!" in row["detail"] and "not done" in row["detail"]


def test_no_claim_is_never_a_false_claim_and_no_outcome_assertion_is_undecided():
    frames = results(conversation("quiet", ["Quero pagar."]), conversation("claims", ["Pronto!"], claim=True),
                     assertions=[("quiet", "payment_link_created", False), ("claims", "tools_called", False)])
    flags = fidelity_flags(frames, checks=["false_goal_complete"])
    assert verdict(flags, "quiet", "false_goal_complete")["flagged"] is False
    claims = verdict(flags, "claims", "false_goal_complete")  # a process assertion is not a goal verdict
    assert pd.isna(claims["flagged"]) and "no outcome assertion" in claims["detail"]


# ── parroting ──


def test_a_patient_repeating_the_agent_is_flagged():
    patient = ["Oi, quero pagar.", AGENT_HELLO.replace("Olá, Lucia! Aqui é", "Oi! Sou"), "Pix, por favor."]
    row = one("parroting", patient, [AGENT_HELLO, "Segue o link.", "Ok."])
    assert row["flagged"] is True and row["turn"] == 2 and "(1 of 1 messages)" in row["detail"]


def test_a_reply_that_reuses_some_words_is_not_parroting():
    patient = ["Oi, quero pagar.", "Quero pagar por Pix, por favor, e receber o link aqui mesmo."]
    row = one("parroting", patient, [AGENT_HELLO, "Segue o link."])
    assert row["flagged"] is False, row["detail"]


def test_short_acknowledgements_and_self_repetition_are_not_parroting():
    agent = ["Pode ser Pix?", "Qual forma você prefere: Pix, boleto ou cartão de crédito?"] * 2
    patient = ["Oi", "Pode ser Pix", "Peço que me informe qual forma você preferir pagar.",
               "Peço que me informe qual forma você preferir pagar."]
    row = one("parroting", patient, agent)
    assert row["flagged"] is False and "2 checked" in row["detail"]


def test_parrot_ratio_is_a_threshold():
    patient = ["Oi", "Claro, você pode pagar por Pix ou boleto, mas eu prefiro cartão hoje."]
    agent = ["Você pode pagar por Pix ou boleto. Qual prefere?", "Ok."]
    assert one("parroting", patient, agent)["flagged"] is False
    assert one("parroting", patient, agent, parrot_ratio=0.4)["flagged"] is True


def test_a_first_message_alone_cannot_parrot():
    row = one("parroting", ["Olá Lucia! Como posso ajudar você hoje? Encontrei uma fatura."], [])
    assert pd.isna(row["flagged"])


# ── the frame, the helpers and bad input ──


def test_one_row_per_conversational_run_and_check_with_the_declared_columns():
    frames = results(conversation("a", ["Oi, quero pagar a fatura."]), conversation("b", ["Quero pagar hoje."]),
                     scripted=("s1",))
    flags = fidelity_flags(frames, scenarios={"conv": scenario()})
    assert list(flags.columns) == list(FIDELITY_SCHEMA)
    assert flags.dtypes.astype(str).to_dict() == FIDELITY_SCHEMA
    assert flags[["run_id", "check"]].values.tolist() == [[r, c] for r in ("a", "b") for c in CHECKS]


def test_a_missing_scenario_leaves_only_its_checks_undecided():
    flags = fidelity_flags(results(conversation("r1", ["Quero pagar hoje mesmo."])), scenarios=[])
    scenario_checks = flags[flags["check"].isin(["invented_fact", "wrong_language"])]
    assert scenario_checks["flagged"].isna().all() and scenario_checks["detail"].str.contains("not found").all()
    assert verdict(flags, "r1", "false_goal_complete")["flagged"] is False


def test_scenarios_load_from_a_folder_and_only_when_needed(tmp_path):
    real = results(conversation("r1", ["Oi, quero pagar a fatura."], sid="billing-conv-happy-payment"))
    flags = fidelity_flags(real, scenarios=SCENARIOS, checks=["wrong_language"])
    assert verdict(flags, "r1", "wrong_language")["flagged"] is False
    # parroting and false_goal_complete need no scenario, so a missing folder is not even opened
    fidelity_flags(real, scenarios=tmp_path / "nowhere", checks=["parroting", "false_goal_complete"])
    with pytest.raises(ValueError, match="cannot load the scenarios"):
        fidelity_flags(real, scenarios=tmp_path / "nowhere")


def test_bad_input_gives_a_clear_error():
    frames = results(conversation("r1", ["Oi"]))
    with pytest.raises(ValueError, match="unknown check"):
        fidelity_flags(frames, checks=["parrot"])
    with pytest.raises(TypeError, match="unknown threshold"):
        fidelity_flags(frames, checks=["parroting"], parrot=0.5)
    with pytest.raises(ValueError, match="parrot_ratio must be between 0 and 1"):
        fidelity_flags(frames, checks=["parroting"], parrot_ratio=70)
    with pytest.raises(ValueError, match="parrot_min_words must be a positive whole number"):
        fidelity_flags(frames, checks=["parroting"], parrot_min_words=2.5)
    with pytest.raises(ValueError, match="scenarios must be loaded scenarios"):
        fidelity_flags(frames, scenarios=["conv"])
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['signal'\]"):
        fidelity_flags(frames.replace(transcripts=frames.transcripts.drop(columns="signal")), checks=["parroting"])
    assert set(THRESHOLDS) >= {"language_share", "parrot_ratio", "fact_min_digits"}


def test_flagged_runs_exclude_and_summarise():
    parrot = conversation("parrot", ["Oi, quero pagar.", AGENT_HELLO], [AGENT_HELLO, "Ok."])
    liar = conversation("liar", ["Oi, quero pagar.", "Pronto, paguei tudo!"], claim=True)
    fine = conversation("fine", ["Oi, quero pagar a fatura.", "Pode ser no Pix, por favor."])
    frames = results(parrot, liar, fine, assertions=[("liar", "payment_link_created", False)], scripted=("s1",))
    flags = fidelity_flags(frames, scenarios=[scenario()])
    assert flagged_runs(flags) == ["parrot", "liar"]
    assert flagged_runs(flags, checks="parroting") == ["parrot"]
    clean = exclude_flagged(frames, flags)
    assert set(clean.runs["run_id"]) == {"fine", "s1"} and set(clean.transcripts["run_id"]) == {"fine"}
    assert clean.scores["score"].mean() != frames.scores["score"].mean()  # an aggregate, recomputed
    assert clean.calls is frames.calls and len(frames.runs) == 4  # no run_id: untouched; input unchanged
    summary = fidelity_summary(flags)
    assert list(summary.columns) == list(FIDELITY_SUMMARY_SCHEMA) and summary["check"].tolist() == list(CHECKS)
    row = summary.set_index("check").loc["false_goal_complete"]
    # two conversations never claimed the goal: decided, not flagged
    assert (row["conversations"], row["flagged"], row["undecided"], row["share_flagged"]) == (3, 1, 0, 1 / 3)


def test_summary_share_leaves_undecided_conversations_out():
    flags = F.typed_frame([{"run_id": "a", "check": "parroting", "flagged": True},
                           {"run_id": "b", "check": "parroting", "flagged": False},
                           {"run_id": "c", "check": "parroting", "flagged": None}], FIDELITY_SCHEMA)
    row = fidelity_summary(flags).iloc[0]
    assert (row["conversations"], row["flagged"], row["undecided"], row["share_flagged"]) == (3, 1, 1, 0.5)
    assert flagged_runs(flags) == ["a"]


# ── real data ──


def test_the_example_report_small_model_parrots_in_the_happy_payment_run():
    """reports/example was made with the 0.5B local model: its patient copies the agent's messages (and the gate
    stopped all three conversational runs, so their transcripts are short)."""
    frames = load_results(EXAMPLE).frames
    flags = fidelity_flags(frames, scenarios=load_scenarios(SCENARIOS))
    conversational = frames.runs[frames.runs["type"] == "conversational"]
    assert len(flags) == len(conversational) * len(CHECKS)
    parrots = flags[(flags["check"] == "parroting") & flags["flagged"].fillna(False)]
    assert parrots["scenario"].tolist() == ["billing-conv-happy-payment"] and parrots["turn"].tolist() == [2]
    language = verdict(flags, *conversational.loc[conversational["scenario"] == "billing-conv-impatient-patient",
                                                  "run_id"], "wrong_language")
    # The gate stopped it at turn 4: its one English message is 1 of 4, above the 20% share.
    assert language["flagged"] and language["detail"].startswith("1 of 4 patient messages (25%)")
    assert "turn 1 reads as en" in language["detail"]
    assert flags.loc[flags["check"] == "false_goal_complete", "flagged"].eq(False).all()  # nobody claimed the goal
    clean = exclude_flagged(frames, flags)
    assert set(clean.scores["scenario"]) & {"billing-conv-happy-payment", "billing-conv-impatient-patient"} == set()
    assert len(clean.scores) == len(frames.scores) - 2


async def test_a_real_batch_with_a_fake_simulator_that_breaks_the_scenario(tmp_path, monkeypatch):
    """A batch with a scripted fake patient: Spanish in a pt-BR scenario, an invented CPF, a false claim."""
    monkeypatch.setenv("CONVOEVAL_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CONVOEVAL_CACHE", "off")
    sc = load_scenarios(SCENARIOS, scenario="billing-conv-happy-payment")[0]
    n = len(sc.criteria)

    def judge_reply(messages, kwargs):
        tool = (kwargs.get("tools") or [{}])[0].get("function", {}).get("name", "")
        if "Rubric" in tool:
            return {"verdicts": [{"index": i + 1, "evidence": "Turn 1", "reasoning": "r", "passed": True}
                                 for i in range(n)]}
        scores = dict.fromkeys(("correctness", "helpfulness", "tone", "safety", "conciseness", "goal_completion"), 8)
        return {"issues": [], "scores": scores, "suggestion": "ok"}

    patient = FakeChatModel(["Hola, quiero pagar mi factura. Mi CPF es 123.456.789-09.",
                             "Perfecto, muchas gracias por todo. [GOAL_COMPLETE]"])
    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        # The after-the-fact checks over a whole conversation: the gate (which would stop it at turn 1) is off.
        opts = RunOptions(simulator_model=patient, judge_model=FakeChatModel(responder=judge_reply), store=store,
                          gate=None)
        await arun_batch(plan([sc], seeds=[1]), options=opts, out_dir=tmp_path / "out", progress=False)
    frames = load_results(tmp_path / "out").frames
    flags = fidelity_flags(frames, scenarios=sc).set_index("check")  # one scenario is accepted as is
    assert flags.loc["invented_fact", "flagged"] and flags.loc["invented_fact", "turn"] == 1
    assert "123.456.789-09" in flags.loc["invented_fact", "detail"]
    assert flags.loc["wrong_language", "flagged"] and flags.loc["wrong_language", "turn"] == 1
    assert flags.loc["false_goal_complete", "flagged"] and flags.loc["false_goal_complete", "turn"] == 2
    parrot = flags.loc["parroting", "flagged"]
    assert not pd.isna(parrot) and not parrot  # the fake patient never repeats the agent
