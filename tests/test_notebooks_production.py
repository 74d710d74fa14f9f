"""notebooks/production.ipynb executed by papermill against the fake OpenAI-compatible server (a real kernel; slow):
it imports the shipped samples, scrubs them, judges them, shows the worst conversations with their pin and fork
commands and the Sim2Real table and plot. The known answers are in tests/test_production_*.py (in process)."""

from __future__ import annotations

from pathlib import Path

import papermill
import pytest
from test_reliability_support import llm_responder

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "production.ipynb"

pytestmark = pytest.mark.notebook


def _text(nb, source: str) -> str:
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and c["source"] == source)
    return "".join(o.get("text", "") + "".join(o.get("data", {}).get(k, "") for k in ("text/plain", "text/html"))
                   for o in cell["outputs"])


def test_the_production_notebook_imports_scrubs_judges_and_shows_the_worst(fake_llm, tmp_path):
    fake_llm.responder = llm_responder
    out = tmp_path / "production"
    nb = papermill.execute_notebook(str(NOTEBOOK), str(tmp_path / "production.ipynb"), progress_bar=False,
                                    cwd=str(ROOT), parameters={"out_dir": str(out)})
    assert "imported 4 conversation(s)" in _text(nb, "summary = production.import_step(params)")
    assert "cpf" in _text(nb, "production.scrub_report(summary)")
    worst = _text(nb, "production.worst_conversations(result, params)")
    assert f"convoeval pin {out}/runs/" in worst and "--turn 1 -n 5" in worst
    assert "Mariana" not in _text(nb, "production.show_conversations(result)")  # scrubbed
    assert "channel.bursts" in _text(nb, "production.sim2real_step(result, params)")
    assert "image/png" in str(next(c for c in nb["cells"] if c["source"] == "production.sim2real_plot(result, params)"))
    assert (out / "report.json").is_file() and any((out / "runs").glob("*.json"))
