"""notebooks/debug.ipynb executed by papermill against the fake OpenAI-compatible server (a real kernel; slow).

The fake server's cooperative patient and judges (tests/test_reliability_support.py) make every continuation pass,
so this checks the plumbing: the notebook shows the transcript, the cost, the profile plot under it, the
continuations and the pinned test, and its profile is the library's. The known answers are in
tests/test_fork_profile.py and tests/test_pin.py (in process, fast).
"""

from __future__ import annotations

from pathlib import Path

import papermill
import pytest
from test_reliability_support import PATIENT_LINES, fake_responder

from convoeval.llm import models as model_registry
from convoeval.pipeline.conversation import RunOptions, run_any
from convoeval.pipeline.jobs import Job
from convoeval.pipeline.results import write_conversation
from convoeval.scenarios import load_scenarios
from convoeval.store import open_store
from convoeval.testing import FakeChatModel

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "debug.ipynb"

pytestmark = pytest.mark.notebook


@pytest.fixture
def results(fake_llm, tmp_path):
    """A results folder holding one happy-path billing conversation."""
    from test_reliability_support import llm_responder

    fake_llm.responder = llm_responder
    happy = load_scenarios(scenario="billing-conv-happy-payment")[0]
    with open_store() as store:
        opts = RunOptions(simulator_model=FakeChatModel(replies=list(PATIENT_LINES)),
                          judge_model=FakeChatModel(responder=fake_responder), store=store)
        result = run_any(Job(happy, 42), opts)
    assert result.status == "pass"
    write_conversation(tmp_path / "results", "happy", result.payload())
    model_registry.clear_model_cache()
    return tmp_path / "results"


def _outputs(nb) -> dict[str, list[dict]]:
    return {c["source"]: c.get("outputs", []) for c in nb["cells"] if c["cell_type"] == "code"}


def test_the_debug_notebook_shows_the_conversation_and_its_profile_under_it(results, tmp_path):
    nb = papermill.execute_notebook(str(NOTEBOOK), str(tmp_path / "debug.ipynb"), progress_bar=False, cwd=str(ROOT),
                                    parameters={"results_dir": str(results), "conversation": "happy", "n": 2,
                                                "concurrency": 2})
    outputs = _outputs(nb)
    html = lambda source: "".join(o["data"].get("text/html", "") for o in outputs[source] if "data" in o)
    sources = list(outputs)
    assert "Oi, quero pagar minha fatura" in html("debug.show_transcript(original)")
    assert sources.index("debug.show_transcript(original)") < sources.index("debug.plot_profile(profile)")
    cost = "".join(o["data"]["text/plain"] for o in outputs["debug.profile_cost(original, params)"])
    assert "5 fork point(s) × 2 continuation(s) = 10 conversation(s)" in cost
    plot = [o for o in outputs["debug.plot_profile(profile)"] if o["output_type"] == "execute_result"]
    assert plot[0]["data"]["image/png"]
    assert "not reproduced" in html("debug.summary(profile)")  # the cooperative fake patient always pays
    assert "fork_turn" in html("debug.continuations(profile)")
    assert "type: scripted" in html("debug.pin_preview(original, params)")


def test_a_profile_above_the_bound_stops_the_notebook_with_the_one_line_reason(results, tmp_path):
    with pytest.raises(papermill.PapermillExecutionError) as exc:
        papermill.execute_notebook(str(NOTEBOOK), str(tmp_path / "debug.ipynb"), progress_bar=False, cwd=str(ROOT),
                                   parameters={"results_dir": str(results), "conversation": "happy", "n": 50})
    assert exc.value.ename == "ForkCostError" and "confirm=True" in exc.value.evalue


def test_a_mistyped_parameter_or_a_folder_without_results_is_one_line(tmp_path):
    from convoeval.forking.views import check_debug_parameters
    from convoeval.pipeline.config import ConfigError

    (tmp_path / "runs").mkdir()
    assert check_debug_parameters({"results_dir": str(tmp_path), "n": 3}).n == 3
    with pytest.raises(ConfigError, match="unknown debug-notebook parameter.*forks"):
        check_debug_parameters({"results_dir": str(tmp_path), "forks": 3})
    with pytest.raises(ConfigError, match="is not a results folder"):
        check_debug_parameters({"results_dir": str(tmp_path / "nope")})
    with pytest.raises(ConfigError, match="n must be a whole number"):
        check_debug_parameters({"results_dir": str(tmp_path), "n": 0})
