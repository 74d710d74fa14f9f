"""docs/layout.md describes the tree as it is: every file and module it names exists, and every package is on the map.

The page is where a newcomer learns the layout, so a renamed module must not leave it pointing at nothing. Old paths
are named on purpose in its "Where moved names went" table (the left column); everything else must resolve.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from convoeval._util import plugins
from convoeval.scenarios.assertion_kinds import ASSERTION_GROUP

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "convoeval"
LAYOUT = (REPO / "docs" / "layout.md").read_text(encoding="utf-8")
#: The page without its fenced blocks (the data-flow sketch), whose triple backticks would pair with inline code.
TEXT = re.sub(r"```.*?```", "", LAYOUT, flags=re.DOTALL)

_CODE = re.compile(r"`([^`]+)`")
_DOTTED = re.compile(r"convoeval(\.\w+)+")
_FILE = re.compile(r"[\w<>/.-]+\.(py|sql|js|css|json)|[\w.-]+/")


def _section(title: str) -> str:
    start = TEXT.index(f"## {title}")
    end = TEXT.find("\n## ", start + 1)
    return TEXT[start:end if end != -1 else None]


def _rows(section: str) -> list[list[str]]:
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip(" |") for cell in row] for row in rows]


def resolves(dotted: str) -> bool:
    """``convoeval.a.b.c`` is a module, or an attribute of the longest module prefix of it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(value, name):
                return False
            value = getattr(value, name)
        return True
    return False


#: Entry-point group names look like modules but name groups in another package's pyproject.toml.
ENTRY_POINT_GROUPS = {plugins.AGENT_GROUP, plugins.STORE_GROUP, plugins.PROVIDER_GROUP, ASSERTION_GROUP}


def named_modules() -> list[str]:
    """Every ``convoeval.x.y`` the page names, old paths (the moved-names table's left column) left out."""
    old = {token for row in _rows(_section("Where moved names went")) for token in _CODE.findall(row[0])}
    names = {m.group(0) for token in _CODE.findall(TEXT) if token not in old for m in _DOTTED.finditer(token)}
    return sorted(names - ENTRY_POINT_GROUPS)


@pytest.mark.parametrize("dotted", named_modules())
def test_every_module_or_name_the_page_names_exists(dotted):
    assert resolves(dotted), f"docs/layout.md names {dotted}, which does not exist"


def test_every_convoeval_path_the_page_names_exists():
    paths = sorted({token for token in _CODE.findall(TEXT) if token.startswith("convoeval/")})
    assert paths, "the page names no convoeval/ path: the pattern broke"
    assert [p for p in paths if not (REPO / p).exists()] == []


def _map_rows() -> list[tuple[list[str], list[str]]]:
    """(the row's packages and modules, the file and folder names its description gives)."""
    rows = []
    for row in _rows(_section("The map, top to bottom")):
        places = [token.rstrip("/") for token in _CODE.findall(row[0])]
        files = [token for token in _CODE.findall(row[1]) if _FILE.fullmatch(token) and not token.startswith("docs/")]
        rows.append((places, files))
    return rows


def _exists_in(places: list[str], name: str) -> bool:
    if "<" in name:  # a pattern such as _<agent>_texts.py: some file must match it
        pattern = re.compile(re.escape(name).replace(re.escape("<agent>"), r"\w+"))
        return any(pattern.fullmatch(p.name) for place in places for p in (PACKAGE / place).rglob("*"))
    for place in places:
        base = PACKAGE / place
        if (base / name).exists() or (base.is_dir() and any(base.rglob(name.rstrip("/")))):
            return True
    return (PACKAGE / name).exists()


def test_every_file_a_map_row_names_is_in_one_of_its_packages():
    missing = [(places, name) for places, files in _map_rows() for name in files if not _exists_in(places, name)]
    assert missing == []


def test_the_map_places_every_package_and_top_level_module():
    placed = {place for places, _ in _map_rows() for place in places}
    top = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    top |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert top - placed == set(), "packages or modules missing from docs/layout.md's map"
    assert placed - top == set(), "docs/layout.md's map names packages or modules that are gone"


def test_the_checks_see_a_missing_name():
    assert resolves("convoeval.pipeline.run_eval")
    assert not resolves("convoeval.pipeline.no_such_thing")
    assert not resolves("convoeval.no_such_module")
    assert not _exists_in(["pipeline"], "no_such_module.py")


def test_the_readme_layout_names_every_package_and_module():
    """The README's short map (a fenced block) lists the same packages and top-level modules as the tree."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## How the code is laid out"):]
    block = section[section.index("```"):section.index("```", section.index("```") + 3)]
    folders = set(re.findall(r"(?:^|\s)(\w+)/(?=\s)", block, re.M))
    listed = folders | set(re.findall(r"(?:^|\s)(\w+)\.py\b", block, re.M))
    top = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    top |= {p.name for p in PACKAGE.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert listed - {"convoeval", "gate"} == top  # gate.py is named in the simulator's line as what it holds
