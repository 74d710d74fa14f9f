"""``convoeval validate``: every kind of file under ``evals/`` recognised by its content and checked by its own model.

The kinds are a table (``FILE_KINDS``), each checked by the code that loads it for real, so ``validate`` accepts
exactly what a run accepts: **scenarios** (``convoeval.scenarios.parse_scenario``), red-team **attacks**
(``convoeval.redteam.attacks.load_attacks``: the model, the registered agents, the target among the other patients,
the caller's data against theirs) and human **label files** (``convoeval.stats.labels``: columns, labels, sources,
and one rater labelling an item twice, within a file or across files). Ids must be unique within a kind.

A file's kind is read from its content, not its folder: the kind whose fields the file uses most, counting only the
names no other kind of the same format has (``agent``, ``type``, ``goal``, … for a scenario; ``strategy``,
``target``, ``data``, … for an attack; a label file's columns in a CSV header). A broken attack so gets the attack's
errors, not a scenario's. A file with none of them, or with as many of two kinds', is an error naming the kinds.

In a folder, hidden files and documentation (``.md``, ``.rst``, ``.txt``) are skipped; any other file is checked.
Nothing loads before ``validate`` runs: the attack model with the first YAML file (its field names tell the kinds
apart), the label statistics (pandas, and SciPy through ``convoeval.stats``: ~1.3 CPU s) with the first CSV file.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convoeval._util.paths import SCENARIOS_SUBDIR, project_root
from convoeval.cli._base import command
from convoeval.errors import ConvoevalError
from convoeval.scenarios import (
    ConversationalScenario,
    ScenarioError,
    ScriptedScenario,
    json_schema,
    parse_scenario,
    read_yaml_file,
)

#: Suffixes a folder walk skips: documentation beside the files (evals/labels/README.md).
DOCUMENTATION = (".md", ".rst", ".txt")
_YAML = (".yaml", ".yml")
_CSV = (".csv",)


@dataclass(frozen=True)
class Checked:
    """One valid file: its id (``None`` when the kind has none) and its variant (a scenario's type)."""

    id: str | None = None
    variant: str | None = None


@dataclass(frozen=True)
class FileKind:
    """One kind of file under ``evals/``: how it is recognised, what checks it, and its JSON Schema if it has one.

    Attributes:
        name: singular, as printed ("label file").
        plural: as printed ("label files").
        suffixes: the file names it may have (lower case).
        looks: how to tell one, for the error on a file of no known kind.
        fields: the names its model knows at the top level (YAML keys, or CSV columns); loaded on first use.
        check: ``check(path, content)`` -> ``Checked``, raising ``ScenarioError`` (or ``FileError``, one line that
            names the file) when the file cannot be used. ``content`` is the parsed YAML mapping, or the CSV's
            header.
        schema: the JSON Schema editors use to complete its files (``convoeval schema --kind NAME``).
        across: checks over every valid file of the kind at once, as ``(path, error line)`` pairs (beyond ids).
    """

    name: str
    plural: str
    suffixes: tuple[str, ...]
    looks: str
    fields: Callable[[], Iterable[str]]
    check: Callable[[Path, object], Checked]
    schema: Callable[[], dict[str, Any]] | None = None
    across: Callable[[list[Path]], list[tuple[Path, str]]] | None = None

    def counted(self, n: int) -> str:
        """``1 attack``, ``2 attacks``."""
        return f"{n} {self.name if n == 1 else self.plural}"


def _scenario_fields() -> set[str]:
    return set(ConversationalScenario.model_fields) | set(ScriptedScenario.model_fields)


def _check_scenario(path: Path, content: object) -> Checked:
    scenario = parse_scenario(content, path)
    root = project_root(path.resolve().parent)
    in_a_project = (root / SCENARIOS_SUBDIR).is_dir()
    for i, turn in enumerate(getattr(scenario, "turns", ())):
        media = turn.media
        if media is not None and in_a_project and not (root / media.path).is_file():
            raise FileError(f"{path}: turns[{i}].media.path: no file {media.path} (media live under evals/media/)")
    return Checked(scenario.id, scenario.type)


def _attack_fields() -> set[str]:
    from convoeval.redteam.attacks import Attack

    return set(Attack.model_fields)


def _check_attack(path: Path, content: object) -> Checked:
    # load_attacks reads the file again: it is what `convoeval redteam` runs, with every check beyond the model.
    from convoeval.redteam.attacks import load_attacks

    [(_, attack)] = load_attacks([path])
    return Checked(attack.id)


def _attack_schema() -> dict[str, Any]:
    from convoeval.redteam.attacks import attack_json_schema

    return attack_json_schema()


def _label_fields() -> tuple[str, ...]:
    from convoeval.stats.labels import LABEL_COLUMNS

    return (*LABEL_COLUMNS, "note", "source")


def _check_labels(path: Path, content: object) -> Checked:
    from convoeval.stats.labels import LabelError, read_labels

    try:
        read_labels(path)
    except LabelError as exc:
        raise FileError(str(exc)) from None  # it names the file and the line already
    return Checked()


def _labels_across(files: list[Path]) -> list[tuple[Path, str]]:
    """One rater labelling the same item twice across files (``load_labels``' own check), named at the later file."""
    from convoeval.stats.labels import LabelError, load_labels

    # As load_labels reads a folder: example*.csv is documentation, checked alone but never counted with the others.
    files = [p for p in files if not p.name.lower().startswith("example")]
    try:
        load_labels(files)
        return []
    except LabelError:
        pass
    # Which file brings the repeat: add them one at a time (only when there is one, so the usual cost is one read).
    errors: list[tuple[Path, str]] = []
    kept: list[Path] = []
    for path in files:
        try:
            load_labels([*kept, path])
        except LabelError as exc:
            errors.append((path, str(exc)))
            continue
        kept.append(path)
    return errors


#: WhatsApp's size limits per kind of media (bytes): a file over them is one the platform would not deliver.
_MEDIA_LIMITS = {"image": 5 * 2**20, "audio": 16 * 2**20, "document": 100 * 2**20}
_MEDIA_SUFFIXES = {".png": "image", ".jpg": "image", ".jpeg": "image", ".webp": "image", ".ogg": "audio",
                   ".opus": "audio", ".mp3": "audio", ".m4a": "audio", ".aac": "audio", ".amr": "audio",
                   ".wav": "audio", ".pdf": "document", ".docx": "document", ".xlsx": "document"}


def _check_media(path: Path, content: object) -> Checked:
    kind = _MEDIA_SUFFIXES[path.suffix.lower()]
    size = path.stat().st_size
    if size == 0:
        raise FileError(f"{path}: an empty {kind} file")
    if size > _MEDIA_LIMITS[kind]:
        raise FileError(f"{path}: {size / 2**20:.1f} MB, over WhatsApp's {_MEDIA_LIMITS[kind] // 2**20} MB for {kind}s")
    return Checked(None, kind)


SCENARIO = FileKind("scenario", "scenarios", _YAML, "YAML with agent:, persona: and type: or turns:",
                    _scenario_fields, _check_scenario, schema=json_schema)
ATTACK = FileKind("attack", "attacks", _YAML, "YAML with strategy:, target: and data:",
                  _attack_fields, _check_attack, schema=_attack_schema)
LABELS = FileKind("label file", "label files", _CSV, "CSV with the columns conversation, criterion, label, rater",
                  _label_fields, _check_labels, across=_labels_across)
#: A photo, audio note or document a scripted turn sends (docs/whatsapp.md): known by its suffix, no fields.
MEDIA = FileKind("media file", "media files", tuple(_MEDIA_SUFFIXES), "an image, audio or document under evals/media/",
                 lambda: (), _check_media)
#: Every kind of file ``convoeval validate`` knows, in the order the summary counts them.
FILE_KINDS: tuple[FileKind, ...] = (SCENARIO, ATTACK, LABELS, MEDIA)


@dataclass
class FileCheck:
    """What ``validate_files`` found: the valid files by kind, and one line per problem.

    Attributes:
        kinds: the kinds that were recognised.
        valid: kind name -> the valid files' ``Checked``.
        errors: ``(kind name or None when the kind is unknown, error line naming the file)``.
    """

    kinds: Sequence[FileKind] = FILE_KINDS
    valid: dict[str, list[Checked]] = field(default_factory=dict)
    errors: list[tuple[str | None, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for kind in self.kinds:
            self.valid.setdefault(kind.name, [])

    def summary(self) -> str:
        """One line: the valid files per kind (scenarios by type), then the errors per kind."""
        valid = [_counted_with_variants(kind, self.valid[kind.name]) for kind in self.kinds if self.valid[kind.name]]
        counts = f"{', '.join(valid)} valid" if valid else "no valid file"
        if not self.errors:
            return f"{', '.join(valid) or 'no file'}: all valid"
        bad = [kind.counted(n) for kind in self.kinds if (n := sum(k == kind.name for k, _ in self.errors))]
        unknown = sum(k is None for k, _ in self.errors)
        bad += [f"{unknown} whose kind is unknown"] if unknown else []
        return f"{counts}; {len(self.errors)} error{'s' if len(self.errors) > 1 else ''} ({', '.join(bad)})"


def _counted_with_variants(kind: FileKind, checked: list[Checked]) -> str:
    variants: dict[str, int] = {}
    for c in checked:
        if c.variant:
            variants[c.variant] = variants.get(c.variant, 0) + 1
    detail = ", ".join(f"{n} {v}" for v, n in sorted(variants.items()))
    return kind.counted(len(checked)) + (f" ({detail})" if detail else "")


class FileError(ConvoevalError, ValueError):
    """A file that cannot be used (or whose kind is unknown); ``str()`` is one line that names the file."""


def kind_of(path: Path, content: Mapping[object, object] | Sequence[str],
            kinds: Sequence[FileKind] = FILE_KINDS) -> FileKind:
    """The kind of a file from its content: the one whose own field names (no other kind's) it uses most.

    Args:
        path: the file (its suffix picks the kinds to choose between).
        content: a YAML file's top-level mapping, or a CSV file's header.
        kinds: the kinds to choose from.

    Raises:
        FileError: no kind's fields, or as many of two kinds'; the message names the kinds there are.
    """
    candidates = [k for k in kinds if path.suffix.lower() in k.suffixes]
    if len(candidates) == 1 and not set(candidates[0].fields()):
        return candidates[0]  # a kind told by its suffix alone (media)
    names = {str(name).strip().lower() for name in content}
    fields = {k.name: set(k.fields()) for k in candidates}
    scores: dict[str, list[str]] = {}
    for kind in candidates:
        others = set().union(*(fields[o.name] for o in candidates if o is not kind))
        scores[kind.name] = sorted(names & (fields[kind.name] - others))
    best = max((len(found) for found in scores.values()), default=0)
    winners = [k for k in candidates if len(scores[k.name]) == best]
    if best and len(winners) == 1:
        return winners[0]
    if best:
        mixed = " and ".join(f"{k.name} ({', '.join(scores[k.name])})" for k in winners)
        raise FileError(f"{path}: as many fields of one kind as of another, {mixed}: a file is one kind")
    raise FileError(f"{path}: not a kind of file convoeval knows; {_the_kinds(kinds)}")


def validate_files(paths: Iterable[Path | str], kinds: Sequence[FileKind] = FILE_KINDS) -> FileCheck:
    """Check every file under ``paths`` against the model of its kind, collecting every error.

    Args:
        paths: files, or folders searched recursively (hidden files and documentation skipped).
        kinds: the kinds of file to recognise (default: scenarios, attacks, label files).

    Returns:
        A ``FileCheck``: the valid files per kind and one error line per bad file (or repeated id); an empty folder
        is an error, so that a check of nothing never passes.
    """
    report = FileCheck(kinds)
    files = _files([Path(p) for p in paths], report)
    if not files and not report.errors:
        report.errors.append((None, f"{', '.join(map(str, paths))}: no file to check; {_the_kinds(kinds)}"))
    found: dict[str, list[Path]] = {k.name: [] for k in kinds}
    seen: dict[tuple[str, str], Path] = {}
    for path in files:
        kind: FileKind | None = None
        try:
            content = _content(path, kinds)
            kind = kind_of(path, content, kinds)
            checked = kind.check(path, content)
        except ScenarioError as exc:
            report.errors.append((kind.name if kind else None, exc.one_line()))
            continue
        except FileError as exc:
            report.errors.append((kind.name if kind else None, str(exc)))
            continue
        if checked.id is not None and (kind.name, checked.id) in seen:
            also = seen[kind.name, checked.id]
            report.errors.append((kind.name, f"{path}: id: duplicate {kind.name} id {checked.id!r} (also in {also})"))
            continue
        if checked.id is not None:
            seen[kind.name, checked.id] = path
        report.valid[kind.name].append(checked)
        found[kind.name].append(path)
    for kind in kinds:
        if kind.across and found[kind.name]:
            problems = kind.across(found[kind.name])
            report.errors += [(kind.name, line) for _, line in problems]
            bad = {path for path, _ in problems}
            report.valid[kind.name] = [c for c, path in zip(report.valid[kind.name], found[kind.name], strict=True)
                                       if path not in bad]
    return report


def _files(paths: list[Path], report: FileCheck) -> list[Path]:
    """The files to check, each once, in the order given (a folder's sorted); a missing path is an error."""
    files: dict[Path, None] = {}
    for p in paths:
        if p.is_dir():
            for q in sorted(p.rglob("*")):
                inside = q.relative_to(p).parts
                if q.is_file() and not any(part.startswith(".") for part in inside) \
                        and q.suffix.lower() not in DOCUMENTATION:
                    files.setdefault(q, None)
        elif p.exists():
            files.setdefault(p, None)
        else:
            report.errors.append((None, f"{p}: no such file or folder"))
    return list(files)


def _content(path: Path, kinds: Sequence[FileKind]) -> Mapping[object, object] | list[str]:
    """A YAML file's top-level mapping or a CSV file's header; a file of another format is of no known kind."""
    suffix = path.suffix.lower()
    if suffix in _YAML:
        raw = read_yaml_file(path)
        if not isinstance(raw, dict):
            kind = "empty" if raw is None else type(raw).__name__
            raise ScenarioError(path, [("", f"expected a mapping of fields at the top level, got {kind}")])
        return raw
    if suffix in _MEDIA_SUFFIXES and any(k is MEDIA for k in kinds):
        return []
    if suffix in _CSV:
        try:
            # utf-8-sig: a spreadsheet's export starts with a byte-order mark, which is no part of the first column.
            with path.open(encoding="utf-8-sig", newline="") as fh:
                return next(csv.reader(fh), [])
        except UnicodeDecodeError as exc:
            raise ScenarioError(path, [("", f"not UTF-8 text (byte {exc.start})")]) from None
        except (OSError, csv.Error) as exc:
            raise ScenarioError(path, [("", f"cannot read as CSV: {exc}")]) from None
    raise FileError(f"{path}: not a kind of file convoeval knows (a {suffix or 'suffix-less'} file); "
                    f"{_the_kinds(kinds)}")


def _the_kinds(kinds: Sequence[FileKind]) -> str:
    return "the kinds: " + ", ".join(f"{k.name} ({k.looks})" for k in kinds)


def default_evals_dir() -> Path:
    """The project's ``evals/`` folder (found from the working directory upwards, as the scenarios' is)."""
    return project_root() / "evals"


def _add_validate_parser(sub: Any) -> None:
    p = sub.add_parser(
        "validate", help="check scenario, attack and label files (every file under evals/); exit 1 on any error",
        description="Check every file under the given paths against its kind's model: scenarios, red-team attacks "
                    "(YAML, told apart by their fields: an attack has strategy:, a scenario agent:) and human label "
                    "files (CSV). One line per error naming the file and the field (or line); a file of no known "
                    "kind is an error. Documentation (.md, .rst, .txt) and hidden files in a folder are skipped.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the project's evals/)")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    p.add_argument("--domain", action="append", default=[], metavar="NAME",
                   help="also check a domain's files and the scenarios it makes (tau2:airline; repeatable)")


@command("validate")
def _validate(args: argparse.Namespace) -> int:
    report = validate_files(args.paths or [default_evals_dir()])
    for _, line in report.errors:
        print(f"error: {line}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    from convoeval.domains import check_domain

    domain_problems = 0
    for name in args.domain:
        count, problems = check_domain(name)
        domain_problems += len(problems)
        for line in problems:
            print(f"error: {line}", file=sys.stderr)
        if not args.quiet and not problems:
            print(f"{name}: {count} scenarios, files present")
    return 1 if report.errors or domain_problems else 0
