"""Every command the README and docs/ show exists as written (issue #39, item 10).

A newcomer copies commands from the docs. Each line of a shell block is checked against what it names: a
``convoeval`` command line must parse with the real parser (its command, flags and values: a renamed flag or a
removed command fails here), a notebook's ``-p``/``-y`` parameters must be declared by that notebook, ``make``
targets must be in the Makefile, and scripts, files and modules must exist; ``convoeval validate`` (on the shipped
scenarios) and ``convoeval schema`` are run, they are cheap. A command quoted in the prose is often a fragment
(``convoeval fork``, ``convoeval llm serve --idle-timeout``): its command and flags must exist.
The commands' behaviour is tested where it lives (the CLI's, notebooks' and sweep's own tests); this file holds the
docs to the code.

``docs/decisions*.md`` are left out: they record what was decided and rejected, old commands included.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import papermill
import pytest
import yaml

from convoeval import cli
from convoeval.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "reports" / "README.md",
        *sorted(p for p in (ROOT / "docs").glob("*.md") if not p.name.startswith("decisions"))]
FENCE = re.compile(r"```(?:bash|sh|shell)\n(.*?)```", re.S)
INLINE = re.compile(r"`((?:convoeval|make|papermill) [^`]+)`")
#: What stands for a value the reader supplies, and what the check puts in its place.
PLACEHOLDERS = {"K": "1", "N": "1", "SECONDS": "1", "SCORE": "7", "<agent>": "billing", "<seed>": "1"}
#: Papermill's own options (not notebook parameters), with how many values each takes.
PAPERMILL_OPTIONS = {"--inject-output-path": 0, "--log-output": 0, "--cwd": 1, "-k": 1, "--kernel": 1}
EXTERNAL = ("dask", "pip", "uv", ".", "source", "export", "cd", "open", "xdg-open", "ls", "git", "docker")


def commands(path: Path) -> list[str]:
    """The command lines of ``path``'s shell blocks (continuations joined, comments dropped, ``&&`` chains split)."""
    found = []
    for block in FENCE.findall(path.read_text(encoding="utf-8")):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                found.extend(part.strip() for part in re.split(r"\s&&\s|\s;\s", line))
    return found


def quoted(path: Path) -> list[str]:
    """The ``convoeval …`` commands quoted in ``path``'s prose (inline code)."""
    return [span for span in INLINE.findall(path.read_text(encoding="utf-8")) if span.startswith("convoeval ")]


def _tokens(line: str) -> list[str]:
    tokens = shlex.split(line, comments=True)
    while tokens and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", tokens[0]):
        tokens.pop(0)  # VAR=value before a command
    # "serve|status|stop" offers alternatives: the first stands for them all.
    return [PLACEHOLDERS.get(t, t.split("|")[0] if "|" in t and " " not in t else t) for t in tokens]


def problem(line: str) -> str | None:
    """What is wrong with one documented command line, or ``None``."""
    tokens = _tokens(line)
    if not tokens:
        return None
    head, args = tokens[0], tokens[1:]
    if head == "convoeval":
        return _convoeval(args)
    if head == "papermill":
        return _notebook_parameters(args[0], _papermill_parameters(args[2:]))
    if head == "make":
        targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M))
        return None if set(args) <= targets else f"no make target {sorted(set(args) - targets)}"
    if head == "bash" or head.endswith("python") or head.startswith(".venv/bin/"):
        if args[:1] == ["-m"]:
            return None if importlib.util.find_spec(args[1]) else f"no module {args[1]}"
        script = args[0] if head == "bash" or head.endswith("python") else head
        return None if (ROOT / script).exists() else f"no file {script}"
    if head in EXTERNAL or "/" not in head and head not in {"convoeval", "papermill", "make", "bash"}:
        return None  # another program's command (dask, pip, …): not ours to check
    return f"unknown kind of command {head!r}"


def fragment_problem(span: str) -> str | None:
    """What is wrong with a ``convoeval …`` command quoted in prose: a command or a flag that does not exist."""
    tokens = _tokens(span)[1:]
    if tokens[:1] in ([], ["--help"], ["-h"]):
        return None
    commands = _subparsers()
    if tokens[0] not in commands:
        return f"no command {tokens[0]!r}"
    options = commands[tokens[0]]._option_string_actions
    unknown = [t.split("=")[0] for t in tokens[1:] if t.startswith("-") and t.split("=")[0] not in options]
    return f"convoeval {tokens[0]} has no option {unknown}" if unknown else None


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _convoeval(args: list[str]) -> str | None:
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            parsed = build_parser().parse_args(args)
    except SystemExit as exc:
        return None if exc.code == 0 else "refused by convoeval's argument parser"  # --help exits 0
    if parsed.command == "notebook":
        source = parsed.notebook or "notebooks/run.ipynb"
        parameters = dict(yaml.safe_load(parsed.yaml) or {}) if parsed.yaml else {}
        parameters.update({name: value for name, value in parsed.parameters or []})
        return _notebook_parameters(source, parameters)
    if parsed.command == "validate" and not parsed.paths or parsed.command == "schema" and "--out" not in args:
        proc = subprocess.run([sys.executable, "-m", "convoeval.cli", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        return None if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
    return None


def _papermill_parameters(args: list[str]) -> dict[str, object]:
    parameters: dict[str, object] = {}
    i = 0
    while i < len(args):
        if args[i] in ("-p", "--parameters"):
            parameters[args[i + 1]] = args[i + 2]
            i += 3
        elif args[i] in ("-y", "--parameters_yaml"):
            parameters.update(yaml.safe_load(args[i + 1]) or {})
            i += 2
        else:
            i += 1 + PAPERMILL_OPTIONS.get(args[i], 0)
    return parameters


def _notebook_parameters(source: str, parameters: dict[str, object]) -> str | None:
    if not (ROOT / source).exists():
        return f"no notebook {source}"
    unknown = sorted(set(parameters) - set(papermill.inspect_notebook(str(ROOT / source))))
    return f"{source} declares no parameter {unknown}" if unknown else None


CASES = [(path.relative_to(ROOT).as_posix(), line) for path in DOCS for line in commands(path)]
QUOTED = [(path.relative_to(ROOT).as_posix(), span) for path in DOCS for span in quoted(path)]


def test_the_docs_show_commands_to_check():
    shown = {doc for doc, _ in CASES}
    assert {"README.md", "docs/reports.md", "docs/redteam.md"} <= shown
    assert sum(line.startswith("convoeval ") for _, line in CASES) >= 40


@pytest.mark.parametrize(("doc", "line"), CASES, ids=[f"{doc}: {line[:60]}" for doc, line in CASES])
def test_a_documented_command_exists_as_written(doc, line):
    assert problem(line) is None, f"{doc}: {line}: {problem(line)}"


@pytest.mark.parametrize(("doc", "span"), QUOTED, ids=[f"{doc}: {span[:60]}" for doc, span in QUOTED])
def test_a_command_quoted_in_the_prose_exists(doc, span):
    assert fragment_problem(span) is None, f"{doc}: {span}: {fragment_problem(span)}"


@pytest.mark.parametrize(("line", "wrong"), [
    ("convoeval run --agnet billing", "refused"),
    ("convoeval frobnicate", "refused"),
    ("convoeval notebook notebooks/run.ipynb out.ipynb -p agnet billing", "declares no parameter"),
    ("papermill notebooks/run.ipynb out.ipynb -p agnet billing --log-output", "declares no parameter"),
    ("make no-such-target", "no make target"),
    ("bash scripts/no-such-script.sh", "no file"),
    ("convoeval schema --kind nonsense", "refused"),
])
def test_the_check_sees_a_command_that_does_not_exist(line, wrong):
    assert wrong in (problem(line) or ""), problem(line)
    assert fragment_problem("convoeval frobnicate") == "no command 'frobnicate'"
    assert "has no option ['--no-such-flag']" in (fragment_problem("convoeval run --no-such-flag") or "")


def _test_steps() -> list[str]:
    """The tools ``make test`` (scripts/test.sh) runs, in order."""
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    return re.findall(r'"\$VENV/bin/(\w+)"', script)


def test_every_doc_that_says_what_make_test_runs_names_its_steps_in_order():
    """The README said "ruff check, then the test suite" in one place and added mypy in another (#39)."""
    steps = _test_steps()
    assert steps == ["ruff", "mypy", "python"], steps  # python -m pytest
    words = {"ruff": "ruff", "mypy": "mypy", "python": "suite"}
    told = 0
    for path in DOCS:
        for paragraph in re.split(r"\n\s*\n|\n(?=\S*\s*make test)", path.read_text(encoding="utf-8")):
            for line in ([paragraph] if "```" not in paragraph else paragraph.splitlines()):
                if "make test" not in line or not any(w in line for w in ("ruff", "mypy", "lint")):
                    continue  # a mention of make test that does not say what it runs
                told += 1
                where = [line.find(words[step]) for step in steps]
                assert -1 not in where and where == sorted(where), f"{path.name}: {line.strip()[:200]}"
    assert told >= 2  # the quick start and the tests section


def test_label_help_says_how_to_label_a_folder_named_import(tmp_path, monkeypatch, capsys):
    """``label --help`` read "A results folder named 'import' is written ./import." (#39): it now says how, and
    doing what it says reads that folder instead of starting an import (reports/example has no rubric verdicts,
    so the folder is read and refused for that reason, not for the import's arguments)."""
    text = " ".join(_subparsers()["label"].format_help().split())
    assert "To label a results folder that is itself named import, write it as ./import." in text
    assert "is written ./import" not in text
    shutil.copytree(ROOT / "reports" / "example", tmp_path / "import")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["label", "./import", "--out", "page.html"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "no conversation has rubric verdicts to label (6 conversation(s)" in err, err
    with pytest.raises(SystemExit):
        cli.main(["label", "import"])  # the bare word starts an import, which needs its two paths
    assert "usage: convoeval label import LABELS.csv RESULTS" in capsys.readouterr().err


def test_reports_readme_describes_what_reports_example_holds():
    """reports/README.md described the example as what a run produces today, which it no longer is (#39): it now
    says when and with what it was made, and each scenario's outcome, all checked against the saved data."""
    from convoeval import load_results

    text = (ROOT / "reports" / "README.md").read_text(encoding="utf-8")
    run = load_results(ROOT / "reports" / "example")
    frames, meta = run.frames, run.meta
    rows = {cells[0].strip("`"): cells for line in text.splitlines()
            if line.startswith("| `billing-") and len(cells := [c.strip() for c in line.strip("|").split("|")]) == 5}
    assert set(rows) == set(frames.scores["scenario"])
    runs = frames.runs.set_index("scenario")
    assertions = frames.assertions.groupby("scenario")["passed"].agg(["sum", "count"])
    for scenario, score in frames.scores.set_index("scenario").iterrows():
        _, kind, status, shown, what = rows[scenario]
        assert (kind, status) == (runs.loc[scenario, "type"], score["status"]), scenario
        assert shown == ("—" if score["score"] != score["score"] else f"{score['score']:.1f}"), scenario
        if status == "simulator_failure":
            check, turn = runs.loc[scenario, ["simulator_failure", "simulator_failure_turn"]]
            assert what.startswith(f"`{check}` at turn {turn}:"), scenario
        else:
            passed, checked = assertions.loc[scenario]
            assert f"{passed} of {checked} assertions passed" in what, scenario
    calls = frames.calls
    said = " ".join(text.split())
    for fact in (meta["started_at"][:10], meta["started_at"][11:], f"{round(meta['duration_s'])} s",
                 f"{len(calls)} LLM calls", f"{(calls['role'] == 'simulator').sum()} simulator",
                 f"{(calls['role'] == 'judge').sum()} judge", f"{calls['prompt_tokens'].sum():,} prompt tokens",
                 meta["models"]["simulator"]["model"], f"convoeval {meta['convoeval_version']}"):
        assert fact in said, fact
    assert "simulator" not in meta["config"]  # made before the agenda patient existed: the page must say so
    assert "It is not what `make run` gives today." in said
