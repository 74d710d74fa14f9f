"""The ``convoeval`` command line.

Each sub-command is a small function registered in ``COMMANDS`` (``_base.command``); errors the user can fix are
printed as one line (``convoeval: error: …``) with a non-zero exit, never a traceback. A command with its own
parser is a module of this package (``fork_pin``, ``compare_command``): an ``_add_<name>_parser`` function that
``build_parser`` calls and a handler registered with ``@command``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from convoeval.cli._base import (  # noqa: F401 - re-exported
    COMMANDS,
    EXIT_CODES,
    REFUSED_BEFORE_RUNNING,
    OneLineParser,
    UsageError,
    _int,
    _list,
    _seeds,
    command,
)
from convoeval.cli.compare_command import _add_compare_parser
from convoeval.cli.config_flags import add_config_flags, given_settings
from convoeval.cli.fork_pin import _add_fork_parser, _add_pin_parser
from convoeval.cli.import_command import _add_import_parser, _add_judge_parser
from convoeval.cli.label_command import _add_label_parser
from convoeval.cli.redteam_command import _add_redteam_parser
from convoeval.cli.sweep_command import _add_sweep_parser
from convoeval.cli.validate_command import FILE_KINDS, _add_validate_parser
from convoeval.scenarios import did_you_mean


@command("schema")
def _schema(args: argparse.Namespace) -> int:
    schema = {k.name: k.schema for k in FILE_KINDS if k.schema}[args.kind]  # the parser's choices are these names
    text = json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


@command("run")
def _run(args: argparse.Namespace) -> int:
    # Only what the user gave: every default is EvalConfig's, the same as the notebook's.
    given = given_settings(args)
    if given.get("workers", 1) > 1 and not (given.get("cluster") or os.environ.get("CONVOEVAL_DASK_SCHEDULER")):
        from convoeval.pipeline import fork_server

        fork_server.start()  # the workers' imports run in the background while this process loads the pipeline
    from convoeval.llm import LLMError
    from convoeval.pipeline.config import ConfigError, EvalConfig
    from convoeval.pipeline.execute import run_eval
    from convoeval.store import StoreError

    try:
        config = EvalConfig.checked(given)
        with _spare_full_collections():
            result = run_eval(config, store_url=args.store, verbose=args.verbose,
                              progress="off" if args.no_progress else "bar", allow_errors=args.allow_errors)
    except (ConfigError, LLMError, StoreError) as exc:
        # A StoreError (unknown scheme, unreachable server) names the store by its redacted URL: safe to print.
        raise UsageError(str(exc)) from None
    if args.format == "markdown":
        from convoeval.report.markdown import run_markdown

        sys.stdout.write(run_markdown(result, report_url=args.report_url))
    else:
        for line in result.lines:
            print(line)
    return result.exit_code


@contextlib.contextmanager
def _spare_full_collections() -> Iterator[None]:
    """Keep the cyclic garbage collector off the modules a run imports while the run lasts.

    A run imports ~2,200 modules (the CLI's before this point; LangChain and pandas while it runs), and
    every full collection walks all their objects to find nothing to free: 4-5 of them cost 0.38-0.48 s of CPU at
    60 conversations, 16 cost 3.1 s at 500 (benchmarks/RESULTS.md, #28). Freezing what exists now moves it out of
    the collector's sight; a full collection only after 100 middle-generation collections instead of 10 keeps the
    later imports' objects from being walked again and again. Young garbage is still collected as before, and
    nothing a run computes depends on when garbage is freed. Restored afterwards, because ``main(["run", ...])`` can
    be called in a longer-lived process (a test session, a notebook) whose heap must not stay pinned.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(thresholds[0], thresholds[1], 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


class _PapermillErrorsOnly:
    """Keep papermill's errors; drop its chatter: its cell brackets, the paths, and the output path convoeval injects
    reported as an "unknown parameter". The cells' output does not come through this logger (see ``_notebook``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


@command("notebook")
def _notebook(args: argparse.Namespace) -> int:
    import papermill
    import yaml
    from papermill.exceptions import PapermillExecutionError

    from convoeval._util.paths import project_root

    root = project_root()
    source = Path(args.notebook) if args.notebook else root / "notebooks" / "run.ipynb"
    if not source.exists():
        raise UsageError(f"notebook {source} not found")
    parameters: dict[str, Any] = dict(yaml.safe_load(args.yaml) or {}) if args.yaml else {}
    for name, value in args.parameters or []:
        parameters[name] = yaml.safe_load(value)  # as papermill's -p: 3 is a number, [1, 2] a list
    output = Path(args.output) if args.output else root / "reports" / f"{parameters.get('agent') or source.stem}.ipynb"
    # Papermill passes a parameter the notebook does not declare and only logs it: refuse it here, before a kernel
    # starts or the output notebook exists (a mistyped name would otherwise run with the default it meant to change).
    declared = papermill.inspect_notebook(source)
    unknown = [name for name in parameters if name not in declared]
    if unknown:
        named = ", ".join(repr(name) + did_you_mean(name, declared) for name in unknown)
        raise UsageError(f"{source} has no parameter {named}; its parameters: {', '.join(declared)}")
    output.parent.mkdir(parents=True, exist_ok=True)
    parameters.setdefault("PAPERMILL_OUTPUT_PATH", str(output))  # the data goes beside the executed notebook
    # What the cells print (the run's progress lines, its summary) streams to this terminal as it comes: stdout to
    # stdout, stderr to stderr. What they display does not: a display's text/plain is Jupyter's fallback for a rich
    # output (an object's repr: EvalConfig(...), <Styler at 0x…>, <Chart: …>, a quoted string), which the executed
    # notebook and report.html show as meant (issue #39). Papermill's own chatter goes nowhere, its errors to stderr.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Stripped("%(message)s"))
    handler.addFilter(_PapermillErrorsOnly())
    logger = logging.getLogger("papermill")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    streams = {} if args.quiet else {"stdout_file": sys.stdout, "stderr_file": sys.stderr}
    try:
        papermill.execute_notebook(str(source), str(output), parameters=parameters, cwd=str(root),
                                   progress_bar=False, log_output=False, kernel_name=args.kernel, **streams,
                                   # The kernel's own log is noise here: a warning about TCP on localhost at start, and
                                   # at the end "ERROR | KeyboardInterrupt caught in kernel" whenever jupyter_client's
                                   # shutdown (which always sends SIGINT first) finds it busy. A cell's error still
                                   # comes through papermill, as PapermillExecutionError.
                                   extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    except PapermillExecutionError as exc:
        # The cell's own error is one line (ConfigError, RunError, ThresholdError, …): show that, not papermill's
        # traceback of the kernel's traceback, nor the class name of one of our own one-line errors.
        reason = exc.evalue if exc.ename in EXIT_CODES else f"{exc.ename}: {exc.evalue}"
        if exc.ename in REFUSED_BEFORE_RUNNING:  # the notebook would hold that line and nothing else
            output.unlink(missing_ok=True)
            print(f"convoeval: error: {reason} (no notebook written)", file=sys.stderr)
        else:
            print(f"convoeval: error: {reason} (executed notebook: {output})", file=sys.stderr)
        return EXIT_CODES.get(exc.ename, 1)
    finally:
        logger.removeHandler(handler)
    print(f"executed notebook: {output}")
    return 0


class _Stripped(logging.Formatter):
    """Cell output already ends with its newline: without stripping, every line would be followed by a blank one."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(record).rstrip("\n")


@command("llm")
def _llm(args: argparse.Namespace) -> int:
    from convoeval.llm import local as local_llm

    if args.idle_timeout is not None and args.action != "serve":
        raise UsageError("--idle-timeout goes with: convoeval llm serve")
    if args.action == "serve":
        try:
            url = local_llm.ensure_server(idle_timeout=args.idle_timeout)
        except local_llm.LocalModelError as exc:
            raise UsageError(str(exc)) from None
        print(f"local model server running at {url}; {local_llm.server_status()['idle']}")
    elif args.action == "status":
        print(json.dumps(local_llm.server_status(), indent=2, default=str))
    else:
        print(json.dumps(local_llm.stop_server(), indent=2, default=str))
    return 0


@command("cleanup")
def _cleanup(args: argparse.Namespace) -> int:
    from convoeval.store import StoreError, cleanup_stale_runs, open_store

    try:
        with open_store(args.store) as store:
            removed = cleanup_stale_runs(store, older_than_s=args.older_than, dry_run=args.dry_run)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    verb = "would remove" if args.dry_run else "removed"
    print(f"{verb} the rows of {len(removed)} dead run(s)" + (f": {', '.join(removed)}" if removed else ""))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``convoeval`` argument parser, one subparser per command."""
    parser = OneLineParser(prog="convoeval", description="Conversational evaluation of chat agents.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _add_validate_parser(sub)

    with_schema = [k.name for k in FILE_KINDS if k.schema]
    p = sub.add_parser("schema", help=f"print the JSON Schema of a kind of file ({', '.join(with_schema)})")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    p.add_argument("--kind", choices=with_schema, default="scenario",
                   help="which files: scenarios (default) or red-team attacks (label files are CSV: no schema)")

    p = sub.add_parser(
        "run", help="run scenarios against an agent, judge them and print the summary",
        description="Run scenarios against an agent, judge them and print the summary. Exit codes: 0 done; "
                    "1 a conversation scored under --fail-threshold; 2 a setting that cannot work (nothing ran); "
                    "3 a conversation ended in error (agent down, LLM failed after retries, unusable judge "
                    "answer) unless --allow-errors; 4 a conversation ended in simulator_failure (the simulated "
                    "patient broke: not scored) unless --allow-errors.")
    add_config_flags(p)  # one flag per EvalConfig field: --agent, --seed, …, --no-simulator-gate, --resimulate
    p.add_argument("--store", metavar="URL", help="fixtures store URL (default: CONVOEVAL_STORE_URL or SQLite)")
    p.add_argument("--verbose", action="store_true", help="print every turn, each line prefixed by its conversation")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--allow-errors", action="store_true",
                   help="conversations that ended in error (or simulator_failure) do not make the exit code 3 (or 4)")
    p.add_argument("--format", choices=("text", "markdown"), default="text",
                   help="text: the console summary (default); markdown: a compact GitHub-flavoured summary, the "
                        "headline first, for a pull-request comment or $GITHUB_STEP_SUMMARY")
    p.add_argument("--report-url", metavar="URL", help="with --format markdown: where the full report can be read")

    p = sub.add_parser(
        "notebook", help="execute a notebook with papermill, its progress in this terminal, errors in one line",
        description="papermill with what a terminal user needs: what the cells print as it comes (the run's "
                    "progress and summary; not the reprs of what they display, which the executed notebook shows), "
                    "the data beside the executed notebook, and a bad parameter or a failed cell as one line (exit 2 "
                    "for a setting, 1 for a failed gate) instead of a traceback.")
    p.add_argument("notebook", nargs="?", metavar="NOTEBOOK", help="default: notebooks/run.ipynb")
    p.add_argument("output", nargs="?", metavar="OUTPUT", help="the executed notebook (default: reports/<agent>.ipynb)")
    p.add_argument("-p", "--parameters", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="a parameter, as papermill's -p (values are read as YAML: 3, [1, 2], null)")
    p.add_argument("-y", "--yaml", metavar="YAML", help="parameters as one YAML mapping, as papermill's -y")
    p.add_argument("-k", "--kernel", metavar="NAME", help="the kernel (default: the notebook's)")
    p.add_argument("-q", "--quiet", action="store_true", help="do not stream what the cells print")

    p = sub.add_parser(
        "llm", help="the embedded local model server: start it, show it, stop it",
        description="The embedded local model server (started on demand by any call that needs the local model, "
                    "shared by every process on the machine). It stops itself after 10 minutes without a request "
                    "(--idle-timeout or CONVOEVAL_LOCAL_IDLE_TIMEOUT, in seconds; 0 = never) and the next call "
                    "starts it again. serve: start it (or set a running one's idle timeout); status: what it is "
                    "doing, as JSON, with a line on when it stops itself; stop: stop it now.")
    p.add_argument("action", choices=("serve", "status", "stop"))
    p.add_argument("--idle-timeout", type=float, metavar="SECONDS",
                   help="serve: seconds without a request before the server stops itself (default 600 or "
                        "CONVOEVAL_LOCAL_IDLE_TIMEOUT; 0 = never); applied to a running server too")

    p = sub.add_parser("cleanup", help="remove store rows of runs that died before their own cleanup")
    p.add_argument("--store", metavar="URL", help="fixtures store URL (default: CONVOEVAL_STORE_URL or SQLite)")
    p.add_argument("--older-than", type=float, default=3600.0, metavar="SECONDS",
                   help="for runs owned by another host: how old they must be")
    p.add_argument("--dry-run", action="store_true")

    _add_sweep_parser(sub)
    _add_fork_parser(sub)
    _add_pin_parser(sub)
    _add_compare_parser(sub)
    _add_redteam_parser(sub)
    _add_label_parser(sub)
    _add_import_parser(sub)
    _add_judge_parser(sub)
    return parser


def console() -> NoReturn:
    """The ``convoeval`` console script (and ``python -m convoeval.cli``): ``main()``, then exit.

    The heap is frozen before the interpreter shuts down: at exit CPython walks every object of the ~2,300 modules
    a run imported in one last garbage collection that frees nothing the ending process needs freed, ~0.4 s on this
    machine, paid by every command (benchmarks/RESULTS.md, #28). Files and stores are closed by the commands
    themselves, and module teardown still runs, so nothing written is lost.
    """
    code = main()
    gc.freeze()
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``convoeval`` command (``argv``, else the command line's) and return its exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as exc:
        parser.exit(2, f"convoeval: error: {exc}\n")
    except KeyboardInterrupt:
        print("convoeval: interrupted", file=sys.stderr)
        return 130

