"""``convoeval validate`` knows every kind of file under ``evals/``: scenarios, red-team attacks and label files, each
recognised by its content and checked against its own model; a file of no known kind is an error naming the kinds."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from schema_support import fresh_schema, shipped_schema

from convoeval.cli import main
from convoeval.scenarios import load_scenarios

REPO = Path(__file__).resolve().parents[1]
EVALS = REPO / "evals"
ATTACK = EVALS / "attacks" / "authority.yaml"
SCENARIO = EVALS / "scenarios" / "billing" / "conv-happy-payment.yaml"
LABELS = EVALS / "labels" / "example.csv"


def validate(capsys: pytest.CaptureFixture[str], *paths: Path | str) -> tuple[int, str, list[str]]:
    """Exit code, the summary line, the error lines."""
    code = main(["validate", *map(str, paths)])
    out, err = capsys.readouterr()
    return code, out.strip(), [line for line in err.splitlines() if line]


def copy(source: Path, folder: Path, name: str | None = None, *, edit: tuple[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or source.name)
    text = source.read_text(encoding="utf-8")
    if edit:
        assert edit[0] in text, edit
        text = text.replace(*edit)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_evals_folder_is_valid_and_counted_per_kind(capsys):
    scenarios = [*load_scenarios(EVALS / "scenarios"), *load_scenarios(EVALS / "whatsapp")]  # the channel's: opt-in
    conversational = sum(s.type == "conversational" for s in scenarios)
    attacks = len(list((EVALS / "attacks").glob("*.yaml")))
    label_files = len(list((EVALS / "labels").glob("*.csv")))
    media = len([p for p in (EVALS / "media").iterdir() if p.is_file()])
    assert attacks >= 10 and label_files >= 1 and media >= 3
    code, summary, errors = validate(capsys, EVALS)
    assert (code, errors) == (0, [])
    assert summary == (f"{len(scenarios)} scenarios ({conversational} conversational, "
                       f"{len(scenarios) - conversational} scripted), {attacks} attacks, "
                       f"{label_files} label file{'s' if label_files > 1 else ''}, {media} media files "
                       "(1 audio, 1 document, 1 image): all valid")


def test_with_no_path_it_checks_the_projects_evals_folder_from_a_subfolder(capsys, monkeypatch):
    monkeypatch.chdir(REPO / "notebooks")
    code, summary, errors = validate(capsys)
    assert (code, errors) == (0, [])
    assert re.fullmatch(r"\d+ scenarios \(.*\), \d+ attacks, \d+ label files?, \d+ media files \(.*\): all valid",
                        summary), summary


def test_a_broken_attack_gets_the_attacks_errors_not_a_scenarios(tmp_path, capsys):
    bad = copy(ATTACK, tmp_path, edit=("strategy: authority", "strategy: bribery"))
    code, summary, errors = validate(capsys, tmp_path)
    assert code == 1
    [line] = errors
    assert line.startswith(f"error: {bad}: strategy: "), line
    assert "bribery" in line or "'impersonation'" in line, line
    assert "agent:" not in line and "required field is missing" not in line, line  # no scenario's complaint
    assert summary == "no valid file; 1 error (1 attack)"


def test_an_attack_without_its_strategy_is_still_an_attack(tmp_path, capsys):
    """The kind comes from every field only attacks have (target, data, simulated), not from one marker."""
    bad = copy(ATTACK, tmp_path, edit=("strategy: authority\n", ""))
    code, _, [line] = validate(capsys, bad)
    assert code == 1
    assert line.startswith(f"error: {bad}: strategy: "), line


def test_an_attack_is_checked_beyond_its_model_as_the_red_team_loads_it(tmp_path, capsys):
    bad = copy(ATTACK, tmp_path, edit=("target: op-conceicao", "target: nobody"))
    code, _, [line] = validate(capsys, bad)
    assert code == 1
    assert line.startswith(f"error: {bad}: target: no other patient 'nobody'"), line


def test_a_scenario_still_gets_the_scenarios_errors(tmp_path, capsys):
    bad = copy(SCENARIO, tmp_path, edit=("agent: billing", "agent: biling"))
    code, summary, [line] = validate(capsys, tmp_path)
    assert code == 1
    assert line.startswith(f"error: {bad}: agent: "), line
    assert summary == "no valid file; 1 error (1 scenario)"


def test_ids_are_unique_within_a_kind_not_across_kinds(tmp_path, capsys):
    copy(ATTACK, tmp_path / "a")
    second = copy(ATTACK, tmp_path / "b")
    same_id_as_the_attack = copy(SCENARIO, tmp_path / "c", edit=("id: billing-conv-happy-payment", "id: authority"))
    code, summary, [line] = validate(capsys, tmp_path)
    assert code == 1
    assert line == f"error: {second}: id: duplicate attack id 'authority' (also in {tmp_path / 'a' / ATTACK.name})"
    assert summary == "1 scenario (1 conversational), 1 attack valid; 1 error (1 attack)"
    assert same_id_as_the_attack.exists()


def test_a_file_of_no_known_kind_is_an_error_naming_the_kinds(tmp_path, capsys):
    unknown = tmp_path / "notes.yaml"
    unknown.write_text("title: what we tried\ncolour: blue\n", encoding="utf-8")
    other = tmp_path / "data.json"
    other.write_text("{}", encoding="utf-8")
    not_labels = tmp_path / "scores.csv"
    not_labels.write_text("run,score\nx,3\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# notes\n", encoding="utf-8")  # documentation: skipped
    (tmp_path / ".hidden.yaml").write_text("x: 1\n", encoding="utf-8")  # hidden: skipped
    code, summary, errors = validate(capsys, tmp_path)
    assert code == 1
    assert sorted(line.split(": ")[1] for line in errors) == sorted(map(str, (unknown, other, not_labels)))
    for line in errors:
        assert "not a kind of file convoeval knows" in line, line
        assert "scenario (YAML with agent:" in line and "attack (YAML with strategy:" in line, line
        assert "label file (CSV with the columns conversation, criterion, label, rater)" in line, line
    assert summary == "no valid file; 3 errors (3 whose kind is unknown)"


def test_a_file_with_two_kinds_fields_is_an_error_not_a_guess(tmp_path, capsys):
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text("id: x\nagent: billing\nstrategy: urgency\n", encoding="utf-8")
    code, _, [line] = validate(capsys, mixed)
    assert code == 1
    assert line == (f"error: {mixed}: as many fields of one kind as of another, scenario (agent) and attack "
                    "(strategy): a file is one kind")


def test_a_label_file_is_checked_against_the_labels_format(tmp_path, capsys):
    bad = copy(LABELS, tmp_path, "session.csv", edit=(",pass,ana,\n", ",maybe,ana,\n"))
    code, summary, [line] = validate(capsys, bad)
    assert code == 1
    assert line.startswith(f"error: {bad}, line 2: label must be pass, fail or unsure, got 'maybe'"), line
    assert summary == "no valid file; 1 error (1 label file)"


def test_a_rater_labelling_an_item_twice_across_files_is_named_at_the_later_file(tmp_path, capsys):
    copy(LABELS, tmp_path, "a.csv")
    later = copy(LABELS, tmp_path, "b.csv")
    code, summary, [line] = validate(capsys, tmp_path)
    assert code == 1
    assert "rater 'ana' labelled conversation 'billing-conv-happy-payment/42/0'" in line, line
    assert f"{later}, line 2" in line and str(tmp_path / "a.csv") in line, line
    assert summary == "1 label file valid; 1 error (1 label file)"


def test_the_example_label_file_is_checked_alone_as_load_labels_skips_it(tmp_path, capsys):
    copy(LABELS, tmp_path, "example.csv")
    copy(LABELS, tmp_path, "session.csv")  # the same labels by the same rater: a repeat only if example.csv counted
    code, summary, errors = validate(capsys, tmp_path)
    assert (code, errors, summary) == (0, [], "2 label files: all valid")


def test_a_spreadsheets_byte_order_mark_does_not_hide_a_label_file(tmp_path, capsys):
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbf" + LABELS.read_bytes())
    code, summary, errors = validate(capsys, path)
    assert (code, errors, summary) == (0, [], "1 label file: all valid")


def test_an_empty_folder_is_not_a_pass(tmp_path, capsys):
    code, summary, [line] = validate(capsys, tmp_path)
    assert code == 1
    assert line.startswith(f"error: {tmp_path}: no file to check; the kinds: scenario"), line
    assert summary == "no valid file; 1 error (1 whose kind is unknown)"


def test_a_file_named_twice_is_checked_once(capsys):
    code, summary, errors = validate(capsys, ATTACK, ATTACK.parent)
    assert (code, errors) == (0, [])
    assert summary.startswith(f"{len(list(ATTACK.parent.glob('*.yaml')))} attacks")


def test_every_kind_of_yaml_file_has_its_shipped_json_schema(capsys):
    from convoeval.cli.validate_command import FILE_KINDS

    yaml_kinds = [k for k in FILE_KINDS if ".yaml" in k.suffixes]
    assert [k.name for k in yaml_kinds] == ["scenario", "attack"]
    for kind in yaml_kinds:
        assert kind.schema is not None, kind.name
        # The command in a fresh process (tests/schema_support.py says why not this one's registry).
        assert shipped_schema(kind.name) == fresh_schema(kind.name), (
            f"regenerate: convoeval schema --kind {kind.name} --out convoeval/schemas/{kind.name}.schema.json")


def test_copying_the_shipped_tree_keeps_it_valid(tmp_path, capsys):
    """The kinds come from the files, not the folders: the whole tree flattened into one folder still passes."""
    flat = tmp_path / "flat"
    flat.mkdir()
    for path in EVALS.rglob("*"):
        if path.is_file() and path.suffix in (".yaml", ".csv"):
            shutil.copy(path, flat / f"{path.parent.name}-{path.name}")
    code, summary, errors = validate(capsys, flat)
    assert (code, errors) == (0, [])
    assert summary.endswith(": all valid") and " attacks, " in summary


def _modeline_missing(kind_name: str) -> list[str]:
    """The shipped files of a kind whose first line does not point editors at the kind's JSON Schema."""
    from convoeval.cli.validate_command import kind_of
    from convoeval.scenarios import read_yaml_file

    missing = []
    for path in sorted(EVALS.rglob("*.yaml")):
        content = read_yaml_file(path)
        assert isinstance(content, dict), path
        if kind_of(path, content).name != kind_name:
            continue
        schema = Path("../" * (len(path.relative_to(REPO).parts) - 1)) / "convoeval" / "schemas" / f"{kind_name}.schema.json"
        if path.read_text(encoding="utf-8").splitlines()[0] != f"# yaml-language-server: $schema={schema.as_posix()}":
            missing.append(str(path.relative_to(REPO)))
    return missing


def test_every_shipped_scenario_points_editors_at_its_json_schema():
    assert _modeline_missing("scenario") == []


def test_every_shipped_attack_points_editors_at_its_json_schema():
    assert _modeline_missing("attack") == []


# ── Media files (issue #37): known by their suffix, checked against WhatsApp's sizes; a scenario's media must exist ──


def test_media_files_are_a_kind_and_a_missing_or_empty_one_is_an_error(tmp_path: Path) -> None:
    from convoeval.cli.validate_command import validate_files  # noqa: PLC0415

    media = tmp_path / "evals" / "media"
    media.mkdir(parents=True)
    (media / "recibo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 100)
    (media / "vazio.ogg").write_bytes(b"")
    scenario = tmp_path / "evals" / "scenarios" / "billing" / "media.yaml"
    scenario.parent.mkdir(parents=True)
    scenario.write_text(
        "id: media-turns\nagent: billing\ndescription: receipts\npersona: {name: Ana Lima, phone: '11900000000'}\n"
        "turns:\n  - media: {kind: image, path: evals/media/recibo.png}\n"
        "  - media: {kind: image, path: evals/media/recibo.jpg}\n", encoding="utf-8")
    report = validate_files([tmp_path / "evals"])
    errors = [line for _, line in report.errors]
    assert any("vazio.ogg: an empty audio file" in e for e in errors), errors
    assert any("turns[1].media.path: no file evals/media/recibo.jpg" in e for e in errors), errors
    assert [c.variant for c in report.valid["media file"]] == ["image"]
