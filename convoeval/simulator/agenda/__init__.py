"""The agenda-based simulated patient: rules decide what the patient does, the model only voices it.

The classic design of task-oriented dialogue research (Schatzmann et al., 2007), for the small embedded model that
cannot play a patient by itself: the agent's message is read as dialogue acts (``understand``; the model as a
constrained classifier where the rules find nothing, ``classify``), a seeded policy over the scenario's agenda picks
the patient's next act (``policy``), a template says it (``templates``) and the model rewrites it in the persona's
style, kept only when it passes the checks (``voice``). ``aagenda_turn`` is one turn. See docs/simulator.md.
"""

from convoeval.simulator.agenda.acts import AGENT_ACTS, PATIENT_ACTS, AgentActs, PatientAct
from convoeval.simulator.agenda.patient import aagenda_turn
from convoeval.simulator.agenda.policy import AgendaPolicy, agenda_of
from convoeval.simulator.agenda.understand import read_agent

__all__ = ["AGENT_ACTS", "PATIENT_ACTS", "AgendaPolicy", "AgentActs", "PatientAct", "aagenda_turn", "agenda_of",
           "read_agent"]
