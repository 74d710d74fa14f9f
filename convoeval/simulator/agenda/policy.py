"""The patient's policy: from the agenda and the agent's acts, the patient's next act (``AgendaPolicy``).

An agenda in the sense of Schatzmann et al. (2007): the opening request, then the questions still to ask; facts
are pushed on demand (the agent asks, the patient answers from what it ``knows``); the goal is reached when the
agent has stated every outcome the scenario's ``done_when`` names and every question was answered. Impatience is a
counter: ``patience`` agent messages in a row that move nothing, and the patient gives up (``[STUCK]``).

The policy holds no hidden state beyond what the conversation shows: ``AgendaPolicy.replay`` rebuilds it from the
agent's messages, so a resumed, forked or replayed conversation picks up where it was. Seeded choices (which of two
equally good options, which of several facts first, a clarification question) come from one ``random.Random`` per
turn.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from convoeval.scenarios.agenda_models import AgendaAsk, PatientAgenda
from convoeval.scenarios.models import ConversationalScenario
from convoeval.simulator.agenda.acts import AgentActs, PatientAct
from convoeval.simulator.agenda.lexicon import fold
from convoeval.simulator.agenda.matching import best_options, matching_fact, mentions
from convoeval.simulator.agenda.understand import read_agent

__all__ = ["AgendaPolicy", "agenda_of", "turn_rng"]

#: Traits that make a patient ask for a simpler explanation once, before insisting (any of the three languages).
_CONFUSED_TRAITS = ("confus", "nao entende", "no entiende", "doesn't understand", "idos", "elderly", "mayor")
#: Words of a question that asks the patient to pick ("Qual forma você prefere?", "Which works for you?").
_PREFERENCE_CUE = re.compile(r"\b(?:prefer\w*|prefier\w*|escolh\w*|elig\w*|choose|option\w*|opca\w*|opcao|opcion\w*|"
                             r"forma|formas|which one|qual delas|cual de)\b")
#: A question about the person's own data ("sua data de nascimento", "your policy number", "tu DNI").
_ABOUT_THE_PERSON = re.compile(r"\b(?:seu|sua|seus|suas|your|tu|tus|su|sus)\b")
#: Traits that make a patient give up sooner.
_IMPATIENT_TRAITS = ("impacien", "impatient", "apressad", "con prisa", "in a hurry")


def agenda_of(scenario: ConversationalScenario) -> PatientAgenda:
    """The scenario's agenda; without one, the goal text is the opening request and nothing else is known."""
    return scenario.agenda or PatientAgenda(intent=" ".join(scenario.goal.split()))


def turn_rng(scenario: ConversationalScenario, seed: int | None, trial: int, turn: int) -> random.Random:
    """The seeded random source of one patient turn: the same seed, trial and turn always choose the same."""
    return random.Random(f"{scenario.id}|{seed}|{trial}|{turn}")


def _has_trait(scenario: ConversationalScenario, cues: Sequence[str]) -> bool:
    traits = " ".join(fold(t) for t in scenario.persona.traits or ())
    return any(c in traits for c in cues)


@dataclass
class AgendaPolicy:
    """The agenda of one conversation and where it stands.

    Args:
        scenario: the conversational scenario (agenda, persona's facts, traits).
        seed, trial: the conversation's seed and trial (the seeded choices).
    """

    scenario: ConversationalScenario
    seed: int | None = None
    trial: int = 1
    agenda: PatientAgenda = field(init=False)
    questions: list[AgendaAsk] = field(init=False)
    asked: int = 0  # questions asked so far (the intent counts when it is a question)
    answered: int = 0
    seen: set[str] = field(default_factory=set)
    chosen: list[str] = field(default_factory=list)
    unhelpful: int = 0
    asked_other_options: bool = False
    clarified: bool = False
    ended: bool = False
    turn: int = 0
    _agent_said: set[str] = field(default_factory=set)
    insisted: int = 0

    def __post_init__(self) -> None:
        self.agenda = agenda_of(self.scenario)
        opening = [AgendaAsk(say=self.agenda.intent, answer=self.agenda.intent_answer)] \
            if self.agenda.intent_answer else []
        self.questions = opening + list(self.agenda.asks)
        self.patience = max(1, self.agenda.patience - (1 if _has_trait(self.scenario, _IMPATIENT_TRAITS) else 0))

    # ── the conversation, message by message ──

    def opening(self) -> PatientAct:
        """The first message: the intent (the first question, when the intent is one)."""
        self.turn = 1
        if self.agenda.intent_answer:
            self.asked = 1
        return PatientAct("intent", (self.agenda.intent,))

    def respond(self, agent_text: str, *, acts: AgentActs | None = None) -> PatientAct:
        """The patient's act after the agent's message ``agent_text`` (its acts read by rules unless given)."""
        self.turn += 1
        acts = acts or read_agent(agent_text, self.scenario.locale)
        rng = turn_rng(self.scenario, self.seed, self.trial, self.turn)
        progress = self._take_in(acts)
        said = " ".join(agent_text.split())
        repeated = said in self._agent_said
        self._agent_said.add(said)
        if repeated and not self._done():
            # The agent says the same again: whatever the patient answered did not help; patience runs out.
            self.unhelpful += 1
            if self.unhelpful >= self.patience:
                self.ended = True
                return PatientAct("give_up", signal="STUCK")
            saved, act = self.unhelpful, self._decide(acts, rng, progress)
            self.unhelpful = max(self.unhelpful, saved)
        else:
            act = self._decide(acts, rng, progress)
        self.ended = act.signal is not None
        return act

    @classmethod
    def replay(cls, scenario: ConversationalScenario, agent_messages: Sequence[str], *, seed: int | None,
               trial: int = 1, acts: Sequence[AgentActs | None] = ()) -> tuple[AgendaPolicy, PatientAct]:
        """The policy after the agent's messages so far, and the patient's next act."""
        policy = cls(scenario, seed=seed, trial=trial)
        act = policy.opening()
        for i, text in enumerate(agent_messages):
            act = policy.respond(text, acts=acts[i] if i < len(acts) else None)
        return policy, act

    # ── what the agent's message changes ──

    def _take_in(self, acts: AgentActs) -> bool:
        before = (len(self.seen), self.answered)
        self.seen |= acts.outcomes
        if acts.has("close"):
            self.seen.add("closed")
        if self.asked > self.answered and self._answers(acts, self.questions[self.asked - 1]):
            self.answered = self.asked
        return (len(self.seen), self.answered) != before

    @staticmethod
    def _answers(acts: AgentActs, question: AgendaAsk) -> bool:
        if question.answer == "any":
            return "any" in acts.answers and not acts.has("request")
        return question.answer in acts.answers

    def _done(self) -> bool:
        wanted = set(self.agenda.done_when) - {"answered"}
        all_answered = self.answered >= len(self.questions)
        if not self.agenda.done_when:
            return bool(self.questions) and all_answered
        return wanted <= self.seen and ("answered" not in self.agenda.done_when or all_answered) and \
            self.asked >= len(self.questions)

    # ── the next act ──

    def _decide(self, acts: AgentActs, rng: random.Random, progress: bool) -> PatientAct:
        agenda = self.agenda
        if self._done():
            return PatientAct("thank_done", signal="GOAL_COMPLETE")
        if acts.has("handover") and "handoff" not in agenda.done_when:
            return PatientAct("give_up", signal="STUCK")
        if acts.has("offer"):
            self.unhelpful = 0
            return self._choose(acts.options, rng)
        if acts.has("confirm"):
            self.unhelpful = 0
            return self._confirm(acts.proposal)
        if acts.has("request"):
            fact = matching_fact(acts.requested, self._knows(), self._persona(), rng)
            if fact is not None:
                self.unhelpful = 0
                return PatientAct("give_fact", (fact[1],), slot=fact[0])
            if agenda.prefers and _PREFERENCE_CUE.search(fold(acts.requested)):
                self.unhelpful = 0
                return self._choose(acts.options, rng)  # "Qual forma você prefere?": name the wish
            if self.asked > self.answered:
                return self._insist()  # "how can I help?" before the question is answered
            if self.asked < len(self.questions):
                return self._next_question()
            if _ABOUT_THE_PERSON.search(fold(acts.requested)):
                self.unhelpful = 0
                return PatientAct("no_fact", slot="unknown")  # "Qual é a sua data de nascimento?": not at hand
            if not progress and self.turn <= 3:
                return PatientAct("intent", (agenda.intent,))
            return self._unhelpful(acts, rng)
        if self.asked < len(self.questions) and (self.answered >= self.asked or progress):
            self.unhelpful = 0
            return self._next_question()
        if progress:
            self.unhelpful = 0
            return self._insist()
        return self._unhelpful(acts, rng)

    def _unhelpful(self, acts: AgentActs, rng: random.Random) -> PatientAct:
        """The agent's message moved nothing: patience shrinks; clarify once, else insist, else give up."""
        self.unhelpful += 1
        if self.unhelpful >= self.patience:
            return PatientAct("give_up", signal="STUCK")
        if not self.clarified and (acts.has("other") and _has_trait(self.scenario, _CONFUSED_TRAITS)
                                   or rng.random() < 0.15):
            self.clarified = True
            return PatientAct("clarify")
        return self._insist()

    def _insist(self) -> PatientAct:
        """Say again what is still wanted, one part at a time: a patient who repeats a long request word for word
        is a loop (the gate stops it), a person rephrases."""
        parts = _clauses(self._pending())
        self.insisted += 1
        return PatientAct("insist", (parts[(self.insisted - 1) % len(parts)],))

    def _pending(self) -> str:
        """What the patient still wants, in its words: the unanswered question, else the intent."""
        if self.asked > self.answered:
            return self.questions[self.asked - 1].say
        return self.agenda.intent

    def _next_question(self) -> PatientAct:
        question = self.questions[self.asked]
        self.asked += 1
        return PatientAct("ask", (question.say,))

    def _choose(self, options: Sequence[str], rng: random.Random) -> PatientAct:
        agenda = self.agenda
        if not options and agenda.prefers:
            return PatientAct("choose", (agenda.prefers[0],))  # options the rules could not split: name the wish
        wishes = list(agenda.prefers) or _clauses(agenda.intent)  # no preference: what the intent says it wants
        fits = best_options(options, wishes, agenda.refuses)
        if fits:
            choice = options[rng.choice(fits)]
            self.chosen.append(choice)
            return PatientAct("choose", (_short(choice, agenda.prefers),))
        if not agenda.prefers:
            return self._decline(agenda.intent)
        if not self.asked_other_options:
            self.asked_other_options = True
            return PatientAct("ask_other_options", (agenda.prefers[0],))
        allowed = [o for o in options if not any(mentions(o, r) for r in agenda.refuses)]
        if not allowed:
            return self._decline(agenda.prefers[0])
        choice = rng.choice(allowed)
        self.chosen.append(choice)
        return PatientAct("choose", (_short(choice, agenda.prefers),))

    def _confirm(self, proposal: str) -> PatientAct:
        agenda = self.agenda
        refused = [r for r in agenda.refuses if mentions(proposal, r)]
        if not refused:
            return PatientAct("accept")
        # A refused option ("cartão") is answered with the preferred one; a refused action with the intent.
        option = len(refused[0].split()) <= 2 and agenda.prefers
        return self._decline(agenda.prefers[0] if option else agenda.intent)

    def _decline(self, wanted: str) -> PatientAct:
        """No, with what the patient wants instead, one part at a time (as ``_insist``)."""
        parts = _clauses(wanted)
        self.insisted += 1
        return PatientAct("decline", (parts[(self.insisted - 1) % len(parts)],))

    def _knows(self) -> dict[str, str]:
        return dict(self.scenario.persona.knows or {})

    def _persona(self) -> dict[str, str | None]:
        p = self.scenario.persona
        return {"name": p.name, "cpf": p.cpf, "phone": p.phone}


_CLAUSE = re.compile(r"\s*(?:[,;:]|\s(?:mas|but|pero|porque|because|and|e|y)\s)\s*", re.IGNORECASE)


def _clauses(text: str) -> list[str]:
    """The parts of a request ("No puedo ir el jueves, quiero cambiarla al viernes" -> two), each of 3+ words."""
    parts = [p.strip(" .!") for p in _CLAUSE.split(text) if len(p.split()) >= 3]
    return parts or [text.strip(" .!")]


def _short(option: str, prefers: Sequence[str]) -> str:
    """The option as the patient names it. One with numbers (a date, a time) in its own words, up to a dash
    ("terça-feira, 10/03 às 09:00 – Dra. Camila" -> "terça-feira, 10/03 às 09:00"); else a short preference it
    matches ("Você prefere pagar com Pix" -> "Pix"), else its own words."""
    text = re.split(r"\s[–—-]\s", option.strip())[0].strip().rstrip("?.!:").strip()
    if re.search(r"\d", text):
        return text
    for preference in prefers:
        if mentions(option, preference) and len(preference.split()) <= 2:
            return preference
    return text
