"""Deprecated: the run notebook's parameters are ``convoeval.pipeline.EvalConfig``'s fields.

Kept for one release so existing imports work: ``check_parameters`` is ``convoeval.pipeline.configure``.
"""

from __future__ import annotations

from pathlib import Path

from convoeval.pipeline.config import ConfigError, EvalConfig, _is_parameter_like, project_root  # noqa: F401
from convoeval.pipeline.notebook import configure as check_parameters  # noqa: F401

__all__ = ["NOTEBOOK_PARAMETERS", "ParameterError", "check_parameters", "project_root"]

class ParameterError(ConfigError):
    """A notebook parameter that cannot work (the agreement notebook's); one line, like any configuration mistake."""

    def _render_traceback_(self) -> list[str]:
        return [f"ParameterError: {self}"]

#: The run notebook's parameter names (``EvalConfig``'s fields).
NOTEBOOK_PARAMETERS = tuple(EvalConfig.model_fields)


def _resolve(root: Path, path: str | Path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else root / p
