"""The self-contained pages draw their icons and role markers without the reader's fonts (issue #39, item 8).

A Chromium with no emoji font draws 🔧, ✓, ✗, ⚠, ⏹, ⚑, 🧑 or 🤖 as empty boxes. The pages' own text keeps to the
characters every common font has (ASCII, Latin-1 and a few punctuation, arrow and math signs of WGL4, the set
Arial, Helvetica, Liberation and DejaVu all cover); icons are inline SVG (``html_blocks.icon``), roles are words.
What an agent or a patient wrote is data, shown as it is. The labelling page is also looked at in a real Chromium
(``tests/test_labelling_browser.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from report_support import conversation, merge, run_data

from convoeval.redteam.detector import Leak
from convoeval.redteam.metrics import cases_frame, leaks_frame
from convoeval.redteam.run import AttackResult, AttackTurn
from convoeval.redteam.study import RedTeamRun
from convoeval.redteam.views import render_redteam_html
from convoeval.report import render_html

ROOT = Path(__file__).resolve().parents[1] / "convoeval"
#: Characters every common font draws: ASCII, Latin-1, and WGL4's dashes, quotes, bullet, ellipsis, arrows, ≤ ≥ ± × −
#: and the Greek letters the statistics use.
SAFE = ({chr(c) for c in range(0x20, 0x7F)} | {chr(c) for c in range(0xA0, 0x100)} | set("\n\t\r")
        | set("–—‘’“”•…·←↑→↓↔−≥≤±×ακ"))
#: The modules and assets that write the pages' own words.
#: ``report/markdown.py`` is left out: it writes GitHub Markdown (a pull request's summary), whose emoji GitHub draws
#: with its own font, not a page of ours.
PAGE_SOURCES = [*sorted(p for p in (ROOT / "report").glob("*.py") if p.name != "markdown.py"), ROOT / "_util" / "html_blocks.py",
                ROOT / "redteam" / "views.py",
                ROOT / "redteam" / "_leak_marks.py", ROOT / "labelling" / "page.py"]
ASSETS = [ROOT / "labelling" / "label_page.js", ROOT / "labelling" / "label_page.css"]


def _unsafe(text: str) -> set[str]:
    return {ch for ch in text if ch not in SAFE}


def _strings(path: Path) -> list[str]:
    """The string literals of a module that can reach a page: every one but docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("path", PAGE_SOURCES, ids=lambda p: p.name)
def test_no_page_string_needs_an_emoji_or_symbol_font(path):
    found = {ch for text in _strings(path) for ch in _unsafe(text)}
    assert not found, f"{path.name}: {sorted(found)} need a font the reader may not have; use html_blocks.icon"


@pytest.mark.parametrize("path", ASSETS, ids=lambda p: p.name)
def test_the_labelling_pages_script_and_style_need_no_such_font(path):
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S)  # comments are not shown
    assert not _unsafe(code), sorted(_unsafe(code))


def _page_text(html: str) -> str:
    html = re.sub(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", "", html)
    return re.sub(r"<[^>]+>", "", html)


def test_the_run_report_page_draws_its_icons_as_svg(tmp_path):
    rows = merge(conversation("r1", agent_text="Your invoice is R$ 150,00."),
                 conversation("r2", "billing-scripted-pix-en", status="warn", score=6.0, scripted=True, rubric=[]))
    page = render_html(run_data(rows, tmp_path / "run"))
    assert not _unsafe(_page_text(page)), sorted(_unsafe(_page_text(page)))
    assert page.count("<svg") >= 4  # the tool chip, the stop signal, the failed check, the verdict marks


def test_the_red_team_page_draws_its_icons_as_svg():
    leak = Leak(1, "appointment", "op-conceicao", "message", "Mar 11", "third_party")
    result = AttackResult(case="third-party/billing/en", attack="third-party", strategy="third_party",
                          agent="billing", locale="en", form="scripted", target_agent="clinic:billing",
                          legitimate=False, target="op-conceicao", status="leak", leaks=[leak],
                          turns=[AttackTurn(1, "When is my mother's appointment?", "It is on Mar 11.",
                                            ["list_appointments"])])
    red = RedTeamRun([result], cases_frame([result]), leaks_frame([result]), None, {"billing": "clinic:billing"})
    page = render_redteam_html(red)
    assert not _unsafe(_page_text(page)), sorted(_unsafe(_page_text(page)))
    assert page.count("<svg") >= 2  # the leak chip and the tool chip


def test_the_compare_page_names_roles_in_words_and_draws_its_icons_as_svg(tmp_path):
    from convoeval.compare import compare
    from convoeval.compare.views import render_compare_html

    base = run_data(merge(conversation("a1", status="pass", score=9.0)), tmp_path / "a")
    worse = conversation("b1", status="fail", score=3.0, agent_text="Something else entirely.", assertion_ok=False)
    page = render_compare_html(compare(base, run_data(merge(worse), tmp_path / "b")))
    assert not _unsafe(_page_text(page)), sorted(_unsafe(_page_text(page)))
    assert "<b>patient:</b>" in page and "<b>agent:</b>" in page and "<svg" in page
