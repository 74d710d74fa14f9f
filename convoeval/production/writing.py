"""``import_conversations``: source files into a results folder, all or nothing.

The folder is built beside its destination under a hidden name (``.<name>.importing-<pid>``) and renamed into place
when every file has been read and written: an import that fails or is interrupted leaves no half-written folder
(a killed one leaves only its hidden folder, which the next import removes). Lines that cannot be read are skipped
and counted; a file of no known format, or settings that cannot work, stop the import before anything is renamed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoeval.errors import ConvoevalError
from convoeval.frames.schemas import PRODUCTION
from convoeval.pipeline.results import write_conversation
from convoeval.production.formats import format_of
from convoeval.production.messages import ImportedConversation, SkippedLine
from convoeval.production.rows import conversation_payload
from convoeval.production.settings import ImportSettings

__all__ = ["IMPORT_FILE", "ImportSummary", "OutputExistsError", "import_conversations", "source_files"]

#: What an imported folder records about its import: formats, counts, skipped lines, the scrub report.
IMPORT_FILE = "import.json"

#: A transform applied to every conversation before it is written (the scrubber), with a report it fills.
Transform = Callable[[ImportedConversation], ImportedConversation]


class OutputExistsError(ConvoevalError, FileExistsError):
    """The output folder exists already (``force=True``, ``--force``, replaces it)."""


@dataclass
class ImportSummary:
    """What an import did.

    Attributes:
        out: the results folder written.
        files: how many source files were read, by format.
        conversations: how many conversations were written.
        messages: how many messages they hold.
        skipped: the lines that could not be read (file, line, why), in file order.
        scrub: the scrub report (kinds and counts replaced), when the text was scrubbed.
    """

    out: Path
    files: Counter[str] = field(default_factory=Counter)
    conversations: int = 0
    messages: int = 0
    skipped: list[SkippedLine] = field(default_factory=list)
    scrub: dict[str, Any] | None = None

    def lines(self, *, show_skipped: int = 20) -> list[str]:
        """The console summary: what was read and written, then the skipped lines (the first ``show_skipped``)."""
        formats = ", ".join(f"{n} {name}" for name, n in sorted(self.files.items()))
        out = [f"imported {self.conversations} conversation(s), {self.messages} message(s) from "
               f"{sum(self.files.values())} file(s) ({formats}) into {self.out}; "
               f"{len(self.skipped)} line(s) skipped"]
        out += [f"  skipped {line}" for line in self.skipped[:show_skipped]]
        if len(self.skipped) > show_skipped:
            out.append(f"  … and {len(self.skipped) - show_skipped} more (all of them in {self.out / IMPORT_FILE})")
        if self.scrub is not None and self.scrub.get("scrubbed"):
            replaced = ", ".join(f"{n} {kind}" for kind, n in sorted(self.scrub.get("replaced", {}).items()))
            out.append(f"scrubbed: {replaced or 'nothing to replace'} (report: {self.out / IMPORT_FILE})")
        return out


def source_files(sources: Sequence[Path | str]) -> list[Path]:
    """The files to import: each file given, and every file under each folder given (sorted, hidden ones left out).

    Raises:
        FileNotFoundError: a source that does not exist.
    """
    files: list[Path] = []
    for source in sources:
        path = Path(source).expanduser()
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return files


def import_conversations(sources: Sequence[Path | str], out: Path | str, settings: ImportSettings | None = None, *,
                         transform: Transform | None = None, report: Callable[[], dict[str, Any]] | None = None,
                         keep_original: bool = False, force: bool = False) -> ImportSummary:
    """Read real conversations from ``sources`` into the results folder ``out`` (``runs/*.json``, ``data/``).

    Args:
        sources: files (or folders of files) in any of ``convoeval.production.FORMATS``, mixed freely.
        out: the results folder to create.
        settings: which side is the clinic, the agent family, how dates are read, where conversations split.
        transform: applied to every conversation before it is written (``convoeval.production.scrub``'s scrubber).
        report: called once at the end for the transform's report (the scrub report), saved in ``import.json``.
        keep_original: record each conversation's source file and id (personal data) in its payload.
        force: replace ``out`` if it exists.

    Returns:
        The ``ImportSummary`` (``summary.lines()`` is what the command prints).

    Raises:
        UnrecognisedFileError: a file of no known format (one line naming the formats); nothing is written.
        ImportSettingError: settings that cannot work for a file (no side is the clinic); nothing is written.
        OutputExistsError: ``out`` exists and ``force`` is not set.

    Example (the shipped samples)::

        summary = import_conversations(["evals/production/whatsapp/android-pt-BR.txt"], "reports/imported",
                                       ImportSettings(agent_name="Clínica Sorriso", agent="billing"))
    """
    settings = settings or ImportSettings()
    destination = Path(out).expanduser()
    if destination.exists() and any(destination.iterdir()) and not force:
        raise OutputExistsError(f"{destination} exists already: choose another --out, or --force to replace it")
    files = source_files(sources)
    readers = [(path, format_of(path)) for path in files]  # every file recognised before anything is read
    _remove_stale(destination)
    building = destination.parent / f".{destination.name}.importing-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    summary = ImportSummary(out=destination)
    try:
        for index, (path, kind) in enumerate(readers, start=1):
            read = kind.read(path, settings)
            summary.files[kind.name] += 1
            summary.skipped += read.skipped
            for conversation in read.conversations:
                if not conversation.messages:
                    continue
                if transform is not None:
                    conversation = transform(conversation)
                payload = conversation_payload(conversation, settings, index=index, keep_original=keep_original)
                write_conversation(building, conversation.key, payload)
                summary.conversations += 1
                summary.messages += len(conversation.messages)
        summary.scrub = report() if report is not None else {"scrubbed": False}
        _finish(building, summary, settings, keep_original,
                {str(path): index for index, (path, _) in enumerate(readers, start=1)})
        if destination.exists():
            shutil.rmtree(destination)
        destination.parent.mkdir(parents=True, exist_ok=True)
        os.replace(building, destination)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return summary


def _finish(folder: Path, summary: ImportSummary, settings: ImportSettings, keep_original: bool,
            files: dict[str, int]) -> None:
    """The frames under ``data/``, ``report.json`` and ``import.json``, as a run leaves them."""
    from convoeval.pipeline.execute import save_outputs  # noqa: PLC0415 - loads pandas and the run's machinery
    from convoeval.pipeline.results import read_frames  # noqa: PLC0415 - builds the frames (pandas)

    record = {"source": PRODUCTION, "files": dict(summary.files), "conversations": summary.conversations,
              "messages": summary.messages,
              # A file's name can name a patient ("WhatsApp Chat with Ana Souza.txt"): its number in the import
              # (the payloads' file_index) unless the originals are kept; the console printed the whole path.
              "skipped": [{"file": s.file if keep_original else f"file {files.get(s.file, 0)}{Path(s.file).suffix}",
                           "line": s.line, "reason": s.reason} for s in summary.skipped],
              "settings": {"agent": settings.agent, "target": settings.target, "date_order": settings.date_order,
                           "split_after_s": settings.split_after.total_seconds(), "keep_original": keep_original},
              "scrub": summary.scrub}
    (folder / IMPORT_FILE).write_text(json.dumps(record, ensure_ascii=False, indent=2), encoding="utf-8")
    if summary.conversations:
        save_outputs(read_frames(folder), folder, {"source": PRODUCTION, "scrubbed": bool((summary.scrub or {}).get(
            "scrubbed")), "import": {k: record[k] for k in ("files", "conversations", "messages", "settings")}})


def _remove_stale(destination: Path) -> None:
    """Hidden folders a killed import left beside ``destination`` (their process is gone)."""
    if not destination.parent.is_dir():
        return
    for stale in destination.parent.glob(f".{destination.name}.importing-*"):
        pid = stale.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
