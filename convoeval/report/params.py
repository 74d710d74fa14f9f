"""Deprecated: the run notebook's parameters are ``convoeval.pipeline.EvalConfig``'s fields.

Kept for one release so existing imports work: ``check_parameters`` is ``convoeval.pipeline.configure``.
"""

from __future__ import annotations

from convoeval.paths import under as _resolve  # noqa: F401 - its old name
from convoeval.pipeline.config import ConfigError, EvalConfig, ParameterError, project_root  # noqa: F401
from convoeval.pipeline.config import is_parameter_like as _is_parameter_like  # noqa: F401 - its old name
from convoeval.pipeline.notebook import configure as check_parameters  # noqa: F401

__all__ = ["NOTEBOOK_PARAMETERS", "ParameterError", "check_parameters", "project_root"]

#: The run notebook's parameter names (``EvalConfig``'s fields).
NOTEBOOK_PARAMETERS = tuple(EvalConfig.model_fields)
