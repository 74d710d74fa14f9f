"""The simulator-failure gate: stop a conversation as soon as its simulated patient breaks, and say so.

``convoeval.fidelity`` flags a broken patient after the fact; the gate runs the same kind of deterministic checks
*while* the conversation runs (``convoeval.pipeline.conversation``), after every simulated patient message:

* ``invented_fact``: a message states a personal fact the persona does not hold and the agent never said;
* ``role_reversal``: a message speaks as the assistant (offers help, introduces itself as the clinic) or greets
  the persona's own name as the other party (``convoeval.fidelity.roles``);
* ``parroting``: ``parrot_turns`` patient messages in a row mostly copy one of the agent's messages;
* ``loop``: ``loop_turns`` patient messages in a row repeat one of the patient's own earlier messages, in a loop
  the patient started (a patient repeating itself to an agent that repeats itself first is the agent's problem);
* ``wrong_language``: ``language_turns`` patient messages in a row read as another language than the scenario's,
  unless the agent wrote in that language first;
* ``premature_goal``: ``[GOAL_COMPLETE]`` while an outcome assertion failed and the agent never claimed that
  outcome (``convoeval.fidelity.claims``), decided after the assertions;
* ``false_goal_complete`` (off by default, see ``DEFAULT_GATE_CHECKS``): any ``[GOAL_COMPLETE]`` the database
  contradicts, claimed by the agent or not.

A message that ends the conversation (``[GOAL_COMPLETE]``, ``[STUCK]``) is checked before its stop signal counts,
and one such message that parrots the agent is enough: the stop signal never outranks the gate.

A stopped conversation ends with status ``simulator_failure`` (check, turn and a sentence in its run row): not judged,
not scored, counted by no rate, mean or threshold (``AGENT_STATUSES``). ``RunOptions.resimulate`` reruns it with the
next seed, sampled, up to K times (failed attempts stay, ``superseded``). ``GateSettings`` holds every threshold;
``GateSettings(checks=())`` or ``gate=None`` switches the gate off. See docs/fidelity.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from convoeval import frames as F
from convoeval.fidelity import (
    LANGUAGE_OF_LOCALE,
    THRESHOLDS,
    KnownFacts,
    copied_share,
    detect_language,
    message_words,
    unknown_facts,
)
from convoeval.fidelity.claims import agent_claims
from convoeval.fidelity.goal import claimed_kinds_phrase, unearned
from convoeval.fidelity.roles import name_words, role_reversal, self_named
from convoeval.scenarios.path_models import PATH_PREFIXES
from convoeval.stats.goal import PROCESS_ASSERTIONS

if TYPE_CHECKING:
    import pandas as pd

    from convoeval.frames import RunFrames

__all__ = ["DEFAULT_GATE_CHECKS", "GATE_CHECKS", "RESIMULATION_TEMPERATURE", "SIMULATOR_FAILURE_SCHEMA",
           "GateSettings", "SimulatorFailure", "SimulatorGate", "exclude_simulator_failures", "gate_settings",
           "simulator_failures", "stopped_run_ids"]

GateCheck = Literal["invented_fact", "role_reversal", "parroting", "loop", "wrong_language", "premature_goal",
                    "false_goal_complete"]
#: Every check the gate can run, in the order a message is checked (the goal checks last, after the assertions).
GATE_CHECKS: tuple[GateCheck, ...] = ("invented_fact", "role_reversal", "parroting", "loop", "wrong_language",
                                      "premature_goal", "false_goal_complete")
#: The checks on by default. ``false_goal_complete`` is not: the database says the goal was not done, not who is
#: wrong. An agent that tells the patient "done" without doing it (the reference agent's known fault
#: ``invented_payment_url``) gets a correct ``[GOAL_COMPLETE]`` from a good simulator, and must be scored ``fail``.
#: ``premature_goal`` asks the agent's own messages who is wrong: nothing claimed, the patient was premature.
DEFAULT_GATE_CHECKS: tuple[GateCheck, ...] = ("invented_fact", "role_reversal", "parroting", "loop",
                                              "wrong_language", "premature_goal")
#: A re-simulation samples (at the temperature of unseeded runs): at temperature 0 the next seed would replay
#: the same greedy conversation.
RESIMULATION_TEMPERATURE = 0.7
_QUOTE = 60


class GateSettings(BaseModel):
    """The gate's checks and thresholds, in one place; every field has a default.

    The per-message thresholds are ``convoeval.fidelity.THRESHOLDS`` (the same words, the same defaults), so a
    message the gate counts is one the fidelity check would count.

    Attributes:
        checks: which of ``GATE_CHECKS`` run (empty: the gate is off).
        parrot_turns: patient messages in a row that copy the agent before the conversation stops.
        loop_turns: patient messages in a row that repeat the patient's own earlier ones.
        language_turns: patient messages in a row (among those long and clear enough to tell) in another language.
        parrot_ratio, parrot_min_words, parrot_min_run: when one message copies an agent message (``fidelity``).
        loop_ratio, loop_min_words: when one message repeats an earlier patient message (copied share, words).
        language_min_words, language_min_confidence: when one message's language is decided (``fidelity``).
        fact_min_digits: digit runs shorter than this are not personal facts (``fidelity``).

    Example:
        >>> GateSettings(parrot_turns=3).loop_turns
        2
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    checks: tuple[GateCheck, ...] = DEFAULT_GATE_CHECKS
    parrot_turns: int = Field(default=2, ge=1)
    loop_turns: int = Field(default=2, ge=1)
    language_turns: int = Field(default=2, ge=1)
    parrot_ratio: float = Field(default=THRESHOLDS["parrot_ratio"], ge=0, le=1)
    parrot_min_words: int = Field(default=int(THRESHOLDS["parrot_min_words"]), ge=1)
    parrot_min_run: int = Field(default=int(THRESHOLDS["parrot_min_run"]), ge=1)
    loop_ratio: float = Field(default=0.8, ge=0, le=1)
    loop_min_words: int = Field(default=4, ge=1)
    language_min_words: int = Field(default=int(THRESHOLDS["language_min_words"]), ge=1)
    language_min_confidence: float = Field(default=THRESHOLDS["language_min_confidence"], ge=0, le=1)
    fact_min_digits: int = Field(default=int(THRESHOLDS["fact_min_digits"]), ge=1)


def gate_settings(value: bool | Mapping[str, Any] | GateSettings | None) -> GateSettings | None:
    """The gate a setting asks for: ``True`` the defaults, ``False``/``None`` off, a mapping its thresholds.

    Example:
        >>> gate_settings({"parrot_turns": 3}).parrot_turns, gate_settings(False)
        (3, None)
    """
    if value is None or value is False:
        return None
    if value is True:
        return GateSettings()
    return value if isinstance(value, GateSettings) else GateSettings(**value)


@dataclass(frozen=True)
class SimulatorFailure:
    """Why the gate stopped a conversation: the check, the patient turn, and one sentence quoting the patient."""

    check: str
    turn: int
    detail: str

    def run_fields(self) -> dict[str, Any]:
        """The run row's ``simulator_failure*`` columns."""
        return {"simulator_failure": self.check, "simulator_failure_turn": self.turn,
                "simulator_failure_detail": self.detail}


class SimulatorGate:
    """The gate of one conversation: fed every message in order, it answers whether the patient just broke.

    Args:
        scenario: the conversational scenario (its persona's facts and locale).
        settings: the checks and thresholds.

    Example:
        >>> from convoeval.scenarios import load_scenario_file
        >>> gate = SimulatorGate(load_scenario_file("evals/scenarios/billing/conv-happy-payment.yaml"), GateSettings())
        >>> gate.agent("Olá! Você pode pagar por Pix ou boleto.")
        >>> [gate.patient(t, "Olá! Você pode pagar por Pix ou boleto.") for t in (2, 3)]  # one copy, then two in a row
        [None, SimulatorFailure(check='parroting', turn=3, detail=...)]
    """

    def __init__(self, scenario: Any, settings: GateSettings):
        self.settings = settings
        self._checks = frozenset(settings.checks)
        self._known = KnownFacts(scenario)
        self._locale = scenario.locale
        self._language = LANGUAGE_OF_LOCALE.get(scenario.locale)
        self._persona = scenario.persona.name
        self._names = message_words(scenario.persona.name)
        self._agent: list[list[str]] = []  # every agent message's words, in order
        self._agent_text = ""
        self._agent_named_itself = False  # the agent introduced itself with the persona's name (role_reversal)
        self._claimed: dict[str, str] = {}  # claim kind -> the agent's first quote of it (premature_goal)
        self._patient: list[list[str]] = []
        self._patient_text: dict[int, str] = {}
        self._streaks = {"parroting": 0, "loop": 0, "wrong_language": 0}
        self._first = dict.fromkeys(self._streaks, 0)  # the turn each streak started at

    def agent(self, text: str) -> None:
        """Record an agent message (what the patient may repeat, quote or answer, and what the agent claims)."""
        self._known.add(text)
        self._agent.append(message_words(text))
        self._agent_text = text
        self._agent_named_itself = self._agent_named_itself or self_named(text, self._persona)
        for claim in agent_claims(text, self._locale):
            self._claimed.setdefault(claim.kind, claim.quote)

    def patient(self, turn: int, text: str, *, recorded: bool = False, final: bool = False
                ) -> SimulatorFailure | None:
        """Check a patient message; returns the failure when the patient just broke, else ``None``.

        Args:
            turn: the message's turn (1-based).
            text: the message, stop markers removed.
            recorded: a replayed, recorded message: kept as history, never checked (it is not the simulator's).
            final: the message carries a stop signal (``[GOAL_COMPLETE]``, ``[STUCK]``) and would end the
                conversation: one parroting message is then enough, since no later message could make the streak.
        """
        words = message_words(text)
        failure = None
        if recorded:
            self._streaks = dict.fromkeys(self._streaks, 0)
        else:
            self._patient_text[turn] = text
            failure = (self._ends_unheard(turn, text, final) or self._invented_fact(turn, text)
                       or self._role_reversal(turn, text)
                       or self._parroting(turn, text, words, final) or self._loop(turn, text, words)
                       or self._wrong_language(turn, text))
        self._patient.append(words)
        return failure

    def goal_claim(self, turn: int, assertions: Sequence[Mapping[str, Any]]) -> SimulatorFailure | None:
        """After the assertions: the patient's ``[GOAL_COMPLETE]`` at ``turn``, when an outcome assertion failed.

        ``premature_goal`` (on by default): every failed outcome assertion asked for something the database shows
        not done (a link, a booking, a hand-off that does not exist) and the agent never claimed it in any message
        (``EARNED_BY``): the patient declared a goal nobody said was reached. An assertion the agent claimed, one
        that failed because the agent did what it must not (``escalated_to_human: false`` with a hand-off), or one
        whose claims are unknown (``EARNED_BY`` has no entry) leaves the conversation the agent's.

        ``false_goal_complete`` (off by default): any failed outcome assertion, whatever the agent said.

        The tool-use assertions are about the process and never count. An assertion that could not be checked
        decides nothing.
        """
        outcome = [a for a in assertions if a.get("assertion") not in PROCESS_ASSERTIONS
                   and not str(a.get("assertion")).startswith(PATH_PREFIXES)]  # path rows are process too
        failed = [a for a in outcome if a.get("passed") is False]
        if not failed:
            return None
        reasons = "; ".join(str(a.get("message") or a.get("assertion")) for a in failed[:2])
        if "premature_goal" in self._checks and unearned(failed, self._claimed):
            said = _quote(self._patient_text.get(turn, ""))
            return SimulatorFailure("premature_goal", turn, f"turn {turn}: the patient claimed [GOAL_COMPLETE] "
                                    f"({said}) but {reasons}, and the agent never claimed it (no "
                                    f"{claimed_kinds_phrase(failed)} in its messages)")
        if "false_goal_complete" not in self._checks:
            return None
        return SimulatorFailure("false_goal_complete", turn, f"turn {turn}: the patient claimed [GOAL_COMPLETE] but "
                                f"the database shows the goal not done ({reasons})")

    # ── the checks; each returns a failure or None and keeps its own streak ──

    def _invented_fact(self, turn: int, text: str) -> SimulatorFailure | None:
        if "invented_fact" not in self._checks:
            return None
        facts = unknown_facts(text, self._known, self.settings.fact_min_digits)
        if not facts:
            return None
        return SimulatorFailure("invented_fact", turn, f"turn {turn}: the patient states {facts[0]}, which the "
                                f"persona does not hold and the agent never said: {_quote(text)}")

    def _ends_unheard(self, turn: int, text: str, final: bool) -> SimulatorFailure | None:
        """A stop signal before the agent said anything: no goal could be reached, nothing could get stuck."""
        if not final or self._agent or "premature_goal" not in self._checks:
            return None
        return SimulatorFailure("premature_goal", turn, f"turn {turn}: the patient ended the conversation before the "
                                f"agent said anything: {_quote(text) if text.strip() else 'an empty message'}")

    def _role_reversal(self, turn: int, text: str) -> SimulatorFailure | None:
        if "role_reversal" not in self._checks:
            return None
        quote = role_reversal(text, self._persona, agent_names_itself=self._agent_named_itself)
        if quote is None or self._copied(quote):
            return None
        greets = set(name_words(quote)) & set(name_words(self._persona))
        how = "greets its own persona's name as the other party" if greets else "speaks as the assistant"
        return SimulatorFailure("role_reversal", turn, f"turn {turn}: the patient {how} (\"{quote}\"): {_quote(text)}")

    def _copied(self, quote: str) -> bool:
        """Whether ``quote`` repeats words of an agent message: copying is ``parroting``'s to judge, not this."""
        said = f" {' '.join(message_words(quote))} "
        return any(said in f" {' '.join(a)} " for a in self._agent)

    def _parroting(self, turn: int, text: str, words: list[str], final: bool) -> SimulatorFailure | None:
        s = self.settings
        share = 0.0
        if len(words) >= s.parrot_min_words:
            share = max((copied_share(a, words, s.parrot_min_run) for a in self._agent), default=0.0)
        if not self._step("parroting", turn, share >= s.parrot_ratio):
            return None
        if final and self._streaks["parroting"] < s.parrot_turns:
            # The conversation would end here: one copy is all the streak will ever be, so it decides.
            return SimulatorFailure("parroting", turn, f"turn {turn}: the patient's last message, which would end "
                                    f"the conversation, copies the agent's words ({share:.0%}: {_quote(text)})")
        if self._streaks["parroting"] < s.parrot_turns:
            return None
        return SimulatorFailure("parroting", turn, f"turns {self._first['parroting']}–{turn}: {s.parrot_turns} "
                                f"patient messages in a row copy the agent's words ({share:.0%} of the last: "
                                f"{_quote(text)})")

    def _loop(self, turn: int, text: str, words: list[str]) -> SimulatorFailure | None:
        s = self.settings
        repeats = len(words) >= s.loop_min_words and any(
            copied_share(p, words, s.parrot_min_run) >= s.loop_ratio for p in self._patient)
        if repeats and self._streaks["loop"] == 0 and self._agent_repeats():
            repeats = False  # the agent loops first; the patient repeating itself answers that, not a break
        if not self._step("loop", turn, repeats) or self._streaks["loop"] < s.loop_turns:
            return None
        return SimulatorFailure("loop", turn, f"turns {self._first['loop']}–{turn}: {s.loop_turns} patient messages "
                                f"in a row repeat its own earlier ones: {_quote(text)}")

    def _agent_repeats(self) -> bool:
        """Whether the agent's last message repeats one of its earlier ones."""
        if len(self._agent) < 2 or not self._agent[-1]:
            return False
        last, s = self._agent[-1], self.settings
        return any(copied_share(a, last, s.parrot_min_run) >= s.loop_ratio for a in self._agent[:-1])

    def _wrong_language(self, turn: int, text: str) -> SimulatorFailure | None:
        if "wrong_language" not in self._checks or self._language is None:
            return None
        s = self.settings
        lang, probability = detect_language(text, ignore=self._names, min_words=s.language_min_words)
        if lang is None or probability < s.language_min_confidence:
            return None  # undecided: neither extends nor breaks the streak
        foreign = lang != self._language and not self._agent_wrote(lang)
        if not self._step("wrong_language", turn, foreign) or self._streaks["wrong_language"] < s.language_turns:
            return None
        return SimulatorFailure("wrong_language", turn, f"turns {self._first['wrong_language']}–{turn}: "
                                f"{s.language_turns} patient messages in a row read as {lang}, not "
                                f"{self._language}: {_quote(text)}")

    def _agent_wrote(self, lang: str) -> bool:
        """Whether the agent's last message reads as ``lang`` (a patient following the agent's language)."""
        s = self.settings
        said, probability = detect_language(self._agent_text, min_words=s.language_min_words)
        return said == lang and probability >= s.language_min_confidence

    def _step(self, check: str, turn: int, hit: bool) -> bool:
        """Extend or break ``check``'s streak; True when this message extends it (and the check is on)."""
        if check not in self._checks or not hit:
            self._streaks[check] = 0
            return False
        if self._streaks[check] == 0:
            self._first[check] = turn
        self._streaks[check] += 1
        return True


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= _QUOTE else f'"{flat[:_QUOTE - 1]}…"'


# ── Results: the conversations the gate stopped, and frames without them ──

#: One row per conversation (attempt) the gate stopped.
SIMULATOR_FAILURE_SCHEMA: dict[str, str] = {
    "run_id": "string",
    "scenario": "string",
    "seed": "Int64",
    "trial": "Int64",
    "attempt": "Int64",
    "check": "string",
    "turn": "Int64",
    "detail": "string",
    "resimulated": "boolean",  # True: a later attempt replaced it (superseded)
}


def simulator_failures(frames: RunFrames) -> pd.DataFrame:
    """Every attempt the gate stopped, from a results' ``runs`` frame: ``SIMULATOR_FAILURE_SCHEMA`` rows.

    ``resimulated`` attempts were replaced by a later one (the job's kept result); the others are conversations
    that ended ``simulator_failure``.

    Example:
        >>> from convoeval import load_results
        >>> simulator_failures(load_results("reports/example").frames)[["check", "turn"]].values.tolist()
        [['loop', 4], ['parroting', 3], ['loop', 4]]
    """
    runs = frames.runs
    if runs.empty or "simulator_failure" not in runs:
        return F.empty_frame(SIMULATOR_FAILURE_SCHEMA)
    hit = runs[runs["simulator_failure"].notna()]
    rows = [{"run_id": r["run_id"], "scenario": r["scenario"], "seed": r["seed"], "trial": r["trial"],
             "attempt": r.get("attempt"), "check": r["simulator_failure"], "turn": r.get("simulator_failure_turn"),
             "detail": r.get("simulator_failure_detail"), "resimulated": bool(r.get("superseded"))}
            for r in F.records(hit)]
    return F.typed_frame(rows, SIMULATOR_FAILURE_SCHEMA)


def exclude_simulator_failures(frames: RunFrames) -> RunFrames:
    """The same frames without the runs the gate stopped (and their superseded attempts): what judges the agent.

    Every frame with a ``run_id`` column loses those runs' rows; ``calls`` is returned unchanged.
    """
    return frames.without(stopped_run_ids(frames))


def stopped_run_ids(frames: RunFrames) -> set[str]:
    """Run ids of simulator failures: by the runs frame (superseded attempts included) and by the scores frame."""
    ids: set[str] = set()
    runs, scores = frames.runs, frames.scores
    if len(runs) and "status" in runs:
        stopped = (runs["status"] == F.SIMULATOR_FAILURE).astype("boolean")
        if "superseded" in runs:
            stopped = stopped | runs["superseded"].astype("boolean")
        ids |= set(runs.loc[stopped.fillna(False).astype(bool), "run_id"].astype(str))
    if len(scores) and "status" in scores:
        ids |= set(scores.loc[(scores["status"] == F.SIMULATOR_FAILURE).fillna(False).astype(bool), "run_id"]
                   .astype(str))
    return ids
