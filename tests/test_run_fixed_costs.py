"""A run's fixed costs that are moved off its critical path: the language model's load and the exit's last walk
over the heap (issue #28, benchmarks/RESULTS.md). What each test pins is the behaviour that makes the move safe."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import py3langid.langid

from convoeval.fidelity import text
from convoeval.pipeline.config import EvalConfig
from convoeval.pipeline.execute import _checks_language_here, select_scenarios
from convoeval.pipeline.jobs import plan

REPO = Path(__file__).resolve().parents[1]


def test_a_language_check_during_the_background_load_waits_for_it_instead_of_loading_a_second_copy(monkeypatch):
    loads = []
    original = py3langid.langid.LanguageIdentifier.from_model_file.__func__
    started = threading.Event()

    def slow_load(cls, *args, **kwargs):
        loads.append(threading.current_thread().name)
        started.set()
        time.sleep(0.3)  # long enough for the check below to arrive while this load runs
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(py3langid.langid.LanguageIdentifier, "from_model_file", classmethod(slow_load))
    text._load_identifier.cache_clear()
    try:
        thread = text.load_language_model_meanwhile()
        assert started.wait(10)
        assert text.detect_language("Olá, eu gostaria de pagar a minha fatura hoje")[0] == "pt"
        thread.join(10)
        assert loads == ["convoeval-load-language-model"]
    finally:
        text._load_identifier.cache_clear()  # the next test loads the real model again, unpatched


def test_the_language_model_is_loaded_ahead_only_when_conversations_here_check_the_language():
    config = EvalConfig(scenarios_dir=str(REPO / "evals" / "scenarios"), agent="billing")
    scenarios = select_scenarios(config)
    conversational = plan([s for s in scenarios if s.type == "conversational"])
    scripted = plan([s for s in scenarios if s.type == "scripted"])
    assert conversational and scripted
    assert _checks_language_here(config, conversational)
    assert not _checks_language_here(config, scripted)  # no simulated patient, no gate
    assert not _checks_language_here(config.model_copy(update={"simulator_gate": False}), conversational)
    without = config.model_copy(update={"simulator_gate": {"checks": ["parroting", "loop"]}})
    assert not _checks_language_here(EvalConfig.model_validate(without.model_dump()), conversational)


def test_the_console_script_exits_with_the_heap_frozen_and_the_commands_exit_code(tmp_path):
    """The script's entry freezes the heap before the interpreter's last collection (~0.4 s at a run's exit)."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["convoeval"] == "convoeval.cli:console"
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: [not, a, scenario\n")
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
             "from convoeval.cli import console\n"
             "sys.argv = ['convoeval', *sys.argv[1:]]\n"
             "console()\n")
    for paths, code in (([str(REPO / "evals" / "scenarios")], 0), ([str(bad)], 1)):
        done = subprocess.run([sys.executable, "-c", probe, "validate", "--quiet", *paths], capture_output=True,
                              text=True, cwd=REPO, timeout=120)
        assert done.returncode == code, done.stderr[-2000:]
        frozen = int(done.stderr.rsplit("frozen ", 1)[1].split()[0])
        assert frozen > 10_000, done.stderr[-2000:]
