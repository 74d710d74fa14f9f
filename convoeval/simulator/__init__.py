"""The simulated patient: given the conversation so far, write the patient's next WhatsApp message.

The prompt states the persona, goal, traits, locale and the rules of the role, plus the persona's known facts and a rule
not to invent any other fact. Two framings of the conversation are offered (see ``FRAMINGS``):

* ``"chat"`` (the default): role inversion — the patient's own messages are ``assistant`` turns and the agent's are
  ``user`` turns, so the model simply continues the chat;
* ``"transcript"``: the whole dialogue so far in one ``user`` message, labelled by speaker, ending with "write only
  <name>'s next message". Small local models that parrot the agent's last line in chat framing do better with it.

Seeded runs are deterministic: temperature 0 and ``seed + turn`` on every call, with a sample
identity that makes trial 2 a fresh sample rather than a cache replay of trial 1.

Only the patient ends a conversation. A stop marker the agent wrote and the patient merely repeated — a small model
echoing the agent's line, ``[GOAL_COMPLETE]`` included — is not a stop signal: the marker is removed, the echo is
recorded as the patient's message (where the fidelity check ``parroting`` flags it) and the conversation goes on.

The names below load on first use (``convoeval._util.lazy``): importing ``convoeval.simulator.gate``, which every
conversation runs, does not load the patient's prompts and model calls.
"""

from convoeval._util.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "convoeval.simulator.choice": ("SIMULATORS", "SimulatorKind", "resolve_simulator"),
    "convoeval.simulator.patient": (
        "DEFAULT_MAX_TOKENS", "UNSEEDED_TEMPERATURE", "SimulatorError", "apatient_turn", "asimulate", "simulate"
    ),
    "convoeval.simulator.prompts": (
        "AGENT_LABEL", "DEFAULT_FRAMING", "DEFAULT_TRAITS_LINE", "FRAMINGS", "KICKOFF_MESSAGE", "KNOWS_HEADER",
        "NO_INVENT_WITH_FACTS", "NO_INVENT_WITHOUT_FACTS", "SIMULATOR_PROMPT", "SIMULATOR_PROMPT_VERSION",
        "STOP_SIGNALS", "TRANSCRIPT_FRAME", "TRANSCRIPT_KICKOFF", "Framing", "StopSignal", "build_simulator_messages",
        "build_simulator_prompt", "persona_fields"
    ),
    "convoeval.simulator.replies": (
        "ECHO_MIN_RUN", "ECHO_RATIO", "SimulatorTurn", "clean_simulator_reply", "echoed_markers", "is_echo",
        "parse_simulator_response"
    ),
})
