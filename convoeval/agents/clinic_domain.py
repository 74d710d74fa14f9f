"""The clinic as a domain (``clinic``): the reference domain, registered beside the others and unchanged.

Its scenarios are the project's scenario files (``evals/scenarios``), its tools the clinic tools
(``convoeval.agents.tools``: ``TOOL_SPECS``, run by ``ClinicTools`` over the fixtures store the run seeded), its
policy the openai-chat agent's clinic prompt (per agent role, so none here). A clinic conversation opens no domain
session: the agents reach its tools through the store on the session, as they always did.

Example:
    >>> from convoeval.domains import get_domain
    >>> clinic = get_domain("clinic")
    >>> clinic.name, len(clinic.specs) > 5, clinic.files()[0].name
    ('clinic', True, 'scenarios')
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoeval._util.paths import default_scenarios_dir
from convoeval.agents.tools import TOOL_SPECS
from convoeval.domains import DomainSession
from convoeval.scenarios import Scenario, load_scenarios

__all__ = ["ClinicDomain", "clinic_domain"]


@dataclass(frozen=True)
class ClinicDomain:
    """The clinic domain: the project's scenarios, the clinic tools on the fixtures store."""

    name: str = "clinic"

    @property
    def specs(self) -> list[dict[str, Any]]:
        """The clinic tools' OpenAI function schemas."""
        return list(TOOL_SPECS)

    def scenarios(self) -> list[Scenario]:
        """The project's scenarios (``evals/scenarios``, or ``$CONVOEVAL_SCENARIOS_DIR``)."""
        return load_scenarios()

    def files(self) -> list[Path]:
        """The scenario folder ``convoeval validate`` checks."""
        return [default_scenarios_dir()]

    def open_session(self, scenario: Scenario, run_id: str) -> DomainSession | None:
        """None: a clinic conversation's tools run on the store its run seeded (``ClinicTools``)."""
        return None


def clinic_domain(rest: str = "") -> ClinicDomain:
    """The clinic domain (``clinic``; it takes no ``:<rest>``).

    Raises:
        ValueError: a name after ``clinic:``.
    """
    if rest:
        raise ValueError(f"the clinic domain takes no name after 'clinic:', got {rest!r}")
    return ClinicDomain()
