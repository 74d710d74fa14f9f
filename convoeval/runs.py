"""Deprecated: a whole run is ``convoeval.pipeline.execute(EvalConfig)`` (this alias goes after one release)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from convoeval.frames import to_parquet as _to_parquet  # noqa: F401
from convoeval.pipeline.config import ConfigError as RunConfigError  # noqa: F401
from convoeval.pipeline.config import EvalConfig
from convoeval.pipeline.execute import (  # noqa: F401 - re-exported for existing imports
    LOCAL_MODEL_NOTE,
    build_agents,
    describe_model,
    execute,
    exit_code,
    save_outputs,
)
from convoeval.pipeline.results import EvalResult


def execute_run(config: EvalConfig, out_dir: Path | str, **kwargs: Any) -> EvalResult:
    """``execute`` into ``out_dir``."""
    return execute(config.model_copy(update={"output_dir": str(out_dir)}), **kwargs)
