"""One notebook-parameters mechanism (issue #36): every notebook's parameters are a pydantic model, checked by one
checker (a mistyped name refused with the name meant, in one line), shown by one table, refused with one error base."""

from __future__ import annotations

import pytest

from convoeval.agreement.study_params import check_study_parameters
from convoeval.compare.notebook import compare_params
from convoeval.forking.views import check_debug_parameters
from convoeval.pipeline.notebook import notebook_config
from convoeval.redteam.notebook import redteam_params

#: notebook -> (its checker, a namespace with one parameter's name mistyped, the refusal's start, the name meant)
MISTYPED = {
    "run": (notebook_config, {"agnet": "billing"}, "unknown setting(s) agnet", "agent"),
    "compare": (compare_params, {"baseline": "x", "candidate": "y", "alhpa": 0.1},
                "unknown comparison-notebook parameter(s) alhpa", "alpha"),
    "redteam": (redteam_params, {"locale": ["en"]}, "unknown red-team parameter(s) locale", "locales"),
    "agreement": (check_study_parameters, {"judge_sample": 2}, "unknown agreement-notebook parameter(s) judge_sample",
                  "judge_samples"),
    "debug": (check_debug_parameters, {"max_call": 3}, "unknown debug-notebook parameter(s) max_call", "max_calls"),
}


@pytest.mark.parametrize("notebook", MISTYPED)
def test_a_mistyped_parameter_is_refused_in_one_line_with_the_name_meant(notebook):
    check, namespace, refusal, meant = MISTYPED[notebook]
    with pytest.raises(ValueError) as exc:
        check({**namespace, "PAPERMILL_OUTPUT_PATH": "reports/x.ipynb", "pd": pytest})  # papermill's, a module
    line = exc.value._render_traceback_()
    assert len(line) == 1 and "\n" not in line[0]
    assert line[0].startswith(f"{type(exc.value).__name__}: {refusal} (did you mean {meant!r}?); known: ")


def test_every_one_line_error_shares_the_one_base_and_shows_its_class_and_message():
    from convoeval.compare import CompareError
    from convoeval.compare.notebook import RegressionError
    from convoeval.errors import ConvoevalError
    from convoeval.forking import ForkCostError
    from convoeval.labelling.selection import LabelPageError
    from convoeval.pipeline.config import ConfigError, ParameterError
    from convoeval.pipeline.notebook import ReplayMissError, RunError, ThresholdError
    from convoeval.pipeline.notebook_params import OneLineError
    from convoeval.redteam.notebook import LeakError

    errors = [ConfigError, ParameterError, CompareError, RegressionError, ForkCostError, LabelPageError,
              ReplayMissError, RunError, ThresholdError, LeakError]
    for error in errors:
        assert issubclass(error, OneLineError) and "_render_traceback_" not in vars(error), error
        assert error("why")._render_traceback_() == [f"{error.__name__}: why"]
    assert issubclass(ConfigError, ValueError) and issubclass(RunError, RuntimeError)  # the parents callers catch
    assert issubclass(OneLineError, ConvoevalError)


def test_each_model_declares_every_parameter_with_its_meaning_and_shows_them_in_one_table(tmp_path):
    from convoeval._util.html_blocks import esc
    from convoeval.agreement.study_params import StudyConfig
    from convoeval.compare.notebook import CompareParams
    from convoeval.forking.views import DebugParams
    from convoeval.redteam.notebook import RedTeamParams

    (tmp_path / "runs").mkdir()
    checked = [compare_params({"baseline": "x", "aa": True}), redteam_params({"agents": ["billing"]}),
               check_study_parameters({"output_dir": str(tmp_path)}),
               check_debug_parameters({"results_dir": str(tmp_path)})]
    for model, params in zip((CompareParams, RedTeamParams, StudyConfig, DebugParams), checked, strict=True):
        assert type(params) is model
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} says nothing about what it means"
            assert f"<code>{name}</code>" in params._repr_html_() and esc(field.description) in params._repr_html_()


def test_papermills_paths_modules_functions_and_private_names_are_not_parameters():
    from convoeval.pipeline.notebook_params import notebook_values

    namespace = {"agent": "billing", "PAPERMILL_OUTPUT_PATH": "x.ipynb", "PAPERMILL_INPUT_PATH": "y.ipynb",
                 "pytest": pytest, "check": notebook_values, "_hidden": 1, "In": [], "Path": object}
    assert notebook_values(namespace) == {"agent": "billing"}
