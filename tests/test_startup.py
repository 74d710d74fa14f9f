"""Start-up budget: what ``import convoeval``, ``convoeval --help`` and ``convoeval run`` load, and how long it takes.

The module counts are deterministic for one environment: a function-level import moved to the top of a module on
the start-up path shows up here as more modules (and is what ruff's PLC0415 allow-list in pyproject.toml protects).
A run's first conversation is held too: the third-party packages loaded when it starts (a list), and no pandas,
PyArrow or dateutil until it has ended (issue #28). The figures are recorded in benchmarks/RESULTS.md (issues #26
and #28); ``benchmarks/bench_startup.py`` and ``benchmarks/bench_first_conversation.py`` measure them again. Lower
the budgets when start-up gets cheaper.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from test_reliability_support import clean_env, llm_responder, run_args

from convoeval.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]

#: probe -> (Python run in a fresh interpreter, most modules it may load, most CPU seconds it may take).
#: Modules: 103 and 1,042 before issue #26 (1,057 after it, with issues #24 and #25's small modules); 81 and 605 since
#: issue #28's start-up part: the frames, pipeline packages export lazily and pandas (with NumPy, PyArrow, dateutil)
#: loads where frames are built (613 with issue #25's path assertions merged: `pathcheck` and its models); 81 and 589
#: once `run_eval` loaded lazily like the package's other names (no eager `execute`, issue #26). CPU limits: ~4x the
#: medians measured on 2 cores at load ~4 (0.8 s for both `--help`s, 2.0 s before; benchmarks/RESULTS.md).
BUDGETS = {
    # + 1 (#36): the private package `convoeval._util` the loose top-level modules (`_lazy`, `_aio`, `paths`, ...)
    # moved into: the same modules, one package more.
    "import convoeval": ("import convoeval", 82, 0.5),
    # 589 + 2 (2026-11-27): the scenario's agenda model (scenarios/agenda_models.py, #34) and the ETA's pace
    # (pipeline/pace.py, #39), both small and of convoeval's own; + 1: `convoeval validate`'s kinds of file
    # (cli/validate_command.py, #36); + 1: the errors' base class (convoeval/errors.py, #36); + 1: the notebooks'
    # parameters mechanism `EvalConfig` is built on (pipeline/notebook_params.py, #36); + 1: `convoeval sweep`'s
    # parser in a module of its own, like every other command's (cli/sweep_command.py, #36); + 1: the package
    # `convoeval._util` (#36); + 5: a scenario's WhatsApp fields (#37) need the message parts and the channel block
    # (convoeval.channel, .parts, .settings; the limits stay lazy), and a scripted turn's models left
    # scenarios/models.py for the 400-line rule (turn_models, strict); + 1: `convoeval import`'s parser in a module of
    # its own (cli/import_command.py, #44)
    "convoeval --help": ("import sys; sys.argv = ['convoeval', '--help']; from convoeval.cli import main; main()",
                         602, 3.5),
    "convoeval run --help": ("import sys; sys.argv = ['convoeval', 'run', '--help']; from convoeval.cli import main; "
                             "main()", 602, 3.5),
}
#: Third-party packages ``convoeval --help`` must not load (each is loaded on first use by the command that needs it).
NOT_AT_START = ("openai", "langchain_openai", "sqlalchemy", "supabase", "scipy", "sklearn", "matplotlib", "papermill",
                "distributed", "dask", "llama_cpp", "statsmodels", "tqdm", "pandas", "numpy", "pyarrow", "dateutil",
                "langsmith", "aiohttp")

_DUMP = ("import atexit, sys, json, os\n"
         "atexit.register(lambda: open(os.environ['MODULES_OUT'], 'w').write(json.dumps(sorted(sys.modules))))\n")


def _run(code: str, out: Path) -> tuple[list[str], float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "MODULES_OUT": str(out)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", _DUMP + code], env=env, capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds, not wall time: on a shared machine the wall clock measures the neighbours.
    elapsed = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert done.returncode in (0, None), done.stderr[-2000:]
    return json.loads(out.read_text()), elapsed


@pytest.mark.parametrize("probe", BUDGETS)
def test_start_up_stays_within_its_budget(probe, tmp_path):
    code, max_modules, max_seconds = BUDGETS[probe]
    modules, elapsed = _run(code, tmp_path / "modules.json")
    assert len(modules) <= max_modules, f"{probe} loads {len(modules)} modules (budget {max_modules})"
    assert elapsed <= max_seconds, f"{probe} took {elapsed:.2f} CPU s (budget {max_seconds})"
    loaded = {m.split(".")[0] for m in modules}
    assert loaded.isdisjoint(NOT_AT_START), sorted(loaded & set(NOT_AT_START))


def test_the_budget_can_fail(tmp_path):
    """The probe sees an import: loading one heavy package adds modules beyond the budget."""
    code, max_modules, _ = BUDGETS["import convoeval"]
    modules, _ = _run(code + "; import sqlalchemy", tmp_path / "modules.json")
    assert len(modules) > max_modules


#: Packages a run needs only for its results (frames, Parquet): none is loaded before its first conversation starts.
FRAMES_PACKAGES = ("pandas", "numpy", "pyarrow", "dateutil")
#: The third-party packages loaded when a run's first conversation starts, and no other: the model client stack
#: (LangChain, whose tracers import langsmith and its HTTP stack; openai, which imports aiohttp; tiktoken), the
#: scenarios' YAML and pydantic. Not SQLAlchemy: the default SQLite store is the standard library's sqlite3
#: (SQLAlchemy serves Postgres). A new one here is a start-up cost.
FIRST_CONVERSATION_PACKAGES = {
    "aiohappyeyeballs", "aiohttp", "aiosignal", "annotated_types", "anyio", "attr", "certifi", "charset_normalizer",
    "cython_runtime", "distro", "frozenlist", "h11", "h2", "hpack", "httpcore2", "httpx2", "hyperframe", "idna",
    "jiter", "jsonpatch", "jsonpointer", "langchain_core", "langchain_openai", "langchain_protocol", "langsmith",
    "multidict", "openai", "opentelemetry", "orjson", "packaging", "propcache", "psutil", "pydantic",
    "pydantic_core", "regex", "requests", "requests_toolbelt", "sniffio", "tenacity", "tiktoken",
    "tiktoken_ext", "tornado", "truststore", "typing_extensions", "typing_inspection", "urllib3", "uuid_utils",
    "xxhash", "yaml", "yarl", "zstandard"
}
#: Most modules loaded when the first conversation starts (stdlib, third-party and convoeval's own).
FIRST_CONVERSATION_MODULES = 1870  # 1,756 when SQLite moved to sqlite3 (1,900 with SQLAlchemy); + 65 (#38): where
# the OpenTelemetry SDK is installed (the otel extra, which make setup installs), langsmith imports it in every run,
# export on or off; a plain `pip install convoeval` has no SDK and does not pay them

#: Runs in the `convoeval run` process before the CLI: when ``convoeval.pipeline.conversation`` is loaded, its
#: ``arun_any`` is wrapped to write ``sys.modules`` as the first conversation starts and as it ends; the background
#: loads (pandas in ``execute.load_frames_meanwhile``, the language model in ``load_language_model_meanwhile``) are
#: recorded and left out, so the lists are the run path's own and not a race with those threads.
_FIRST_CONVERSATION = """
import functools, gc, importlib.abc, importlib.machinery, json, os, sys

OUT = os.environ["MODULES_OUT"]
WRAP = {"convoeval.pipeline.conversation": "arun_any", "convoeval.pipeline.execute": "load_frames_meanwhile"}


class Probe(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in WRAP:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        exec_module = spec.loader.exec_module

        def patched(module):
            exec_module(module)
            if name == "convoeval.pipeline.execute":
                module.load_frames_meanwhile = lambda: open(OUT + ".preload", "w").close()
                module.load_language_model_meanwhile = lambda: open(OUT + ".language", "w").close()
                return
            first = module.arun_any

            @functools.wraps(first)
            async def arun_any(*args, **kwargs):
                first_one = not os.path.exists(OUT)
                if first_one:
                    with open(OUT, "w") as f:
                        json.dump(sorted(sys.modules), f)
                    with open(OUT + ".gc", "w") as f:
                        json.dump({"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()}, f)
                result = await first(*args, **kwargs)
                if first_one:
                    with open(OUT + ".end", "w") as f:
                        json.dump(sorted(sys.modules), f)
                return result

            module.arun_any = arun_any

        spec.loader.exec_module = patched
        return spec


sys.meta_path.insert(0, Probe())
sys.argv = ["convoeval", *sys.argv[1:]]
from convoeval.cli import main
main()
"""


def _third_party(modules: list[str]) -> set[str]:
    tops = {m.split(".")[0] for m in modules}
    return {m for m in tops if m not in sys.stdlib_module_names and not m.startswith("_") and m != "convoeval"}


@pytest.mark.reliability
def test_a_runs_first_conversation_starts_without_the_frames_packages(tmp_path):
    """`convoeval run` against a fake server: what is loaded when its first conversation starts, and the run ends."""
    out, modules_out = tmp_path / "out", tmp_path / "modules.json"
    with FakeOpenAIServer(responder=llm_responder, latency=0.02) as server:
        env = clean_env(tmp_path, OPENAI_BASE_URL=server.base_url, CONVOEVAL_LLM_TIMEOUT="10",
                        CONVOEVAL_STORE_URL=f"sqlite:///{tmp_path / 'store.db'}", MODULES_OUT=str(modules_out))
        done = subprocess.run([sys.executable, "-c", _FIRST_CONVERSATION,
                               *run_args(out, "--seed", "1", "--scenario", "billing-conv-happy-payment")],
                              env=env, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "data" / "scores.parquet").exists()  # the end of the run did load pandas and PyArrow
    assert Path(str(modules_out) + ".preload").exists()  # ... which the run starts loading beside its conversations
    assert Path(str(modules_out) + ".language").exists()  # and the gate's language model, while the run imports
    modules = json.loads(modules_out.read_text())
    assert len(modules) <= FIRST_CONVERSATION_MODULES, f"{len(modules)} modules (budget {FIRST_CONVERSATION_MODULES})"
    assert not [m for m in modules if m.split(".")[0] in FRAMES_PACKAGES]
    assert not [m for m in modules if m.startswith(("convoeval.frames.",
                                                    "convoeval.pipeline.summary", "convoeval.store.supabase"))
                and m != "convoeval.frames.schemas"]
    unexpected = _third_party(modules) - FIRST_CONVERSATION_PACKAGES
    assert not unexpected, sorted(unexpected)
    # The whole first conversation (patient turns, agent, assertions, judges, score) runs on plain rows: no pandas,
    # PyArrow or dateutil yet. NumPy is loaded by then: the gate's language check (py3langid's model is NumPy arrays).
    during = json.loads(Path(str(modules_out) + ".end").read_text())
    assert "numpy" in during and "py3langid" in _third_party(during)
    assert not [m for m in during if m.split(".")[0] in FRAMES_PACKAGES and m.split(".")[0] != "numpy"]
    # The objects of the start-up imports are out of the cyclic collector's sight, and full collections are rarer
    # (each walked every object of ~2,300 modules: 0.38-0.48 s of CPU per run, benchmarks/RESULTS.md).
    heap = json.loads(Path(str(modules_out) + ".gc").read_text())
    assert heap["frozen"] > 20_000 and heap["threshold"][2] == 100, heap


def test_plain_rows_are_read_while_pandas_is_half_imported(monkeypatch):
    """`execute.load_frames_meanwhile` imports pandas on a thread: meanwhile `sys.modules` holds it half-initialised
    (no ``NA``, no ``DataFrame`` yet), and a conversation's scoring and entries must neither fail nor load it."""
    import types

    from convoeval.frames.entries import as_entries
    from convoeval.judges.scoring import _missing

    monkeypatch.setitem(sys.modules, "pandas", types.ModuleType("pandas"))
    assert _missing(None) and _missing(float("nan")) and not _missing("a reason")
    assert as_entries([{"role": "patient", "text": "oi"}]) == [{"role": "patient", "text": "oi", "tools": []}]
