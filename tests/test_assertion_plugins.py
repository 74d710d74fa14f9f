"""Assertion keys from another package, through the ``convoeval.assertions`` entry point (a fake distribution on
``sys.path``, as tests/test_plugins.py does): validated when the scenario loads, listed in the JSON Schema, checked
after the run and reported like the clinic keys.

The plugin is the worked example of docs/assertions.md: a shop whose agent writes orders into the shop's own
database (not convoeval's store), tagged with the run id the agent receives in its session.
"""

from __future__ import annotations

import sqlite3
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from convoeval._util import plugins
from convoeval.scenarios import (
    Assertions,
    ScenarioError,
    assertion_keys,
    json_schema,
    load_scenario_file,
    load_scenarios,
)
from convoeval.scenarios import assertion_kinds as kinds
from convoeval.store import SeededRun, check_assertions, open_store

REPO = Path(__file__).resolve().parents[1]

PLUGIN_MODULE = '''
"""The shop's own assertions: they read the shop's database, where the agent under test writes its orders."""
import os
import sqlite3
from typing import Literal

from pydantic import BaseModel, ConfigDict

from convoeval.scenarios import AssertionKind


def _orders(run_id):
    with sqlite3.connect(os.environ["SHOP_DB"]) as db:
        return db.execute("SELECT status, total_cents FROM orders WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()


class OrderExpectation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    status: Literal["placed", "cancelled"]
    min_total_cents: int = 0


def read_order(store, seeded, expected):
    rows = _orders(seeded.run_id)
    return {"status": rows[-1][0], "total_cents": rows[-1][1]} if rows else None


def judge_order(expected, actual):
    if actual is None:
        return False, "order: expected an order, the run placed none"
    if actual["status"] != expected.status or actual["total_cents"] < expected.min_total_cents:
        return False, f"order: expected {expected.status} for at least {expected.min_total_cents}, got {actual}"
    return True, f"order: {actual['status']}, {actual['total_cents']} cents, as expected"


ORDER = AssertionKind("order", OrderExpectation, "The run's latest order in the shop's database.",
                      read=read_order, judge=judge_order)
ORDER_COUNT = AssertionKind("order_count", int, "How many orders the run placed.",
                            read=lambda store, seeded, expected: len(_orders(seeded.run_id)))
NO_READ = AssertionKind("no_read", bool, "A kind that forgot its checker.")
BAD_JUDGE = AssertionKind("bad_judge", bool, read=lambda store, seeded, expected: True,
                          judge=lambda expected, actual: "yes")
NOT_A_KIND = 42
'''

GOOD = """
    [convoeval.assertions]
    order = shop_assertions_plugin:ORDER
    order_count = shop_assertions_plugin:ORDER_COUNT
"""
ENTRY_POINTS = GOOD + """
    no_read = shop_assertions_plugin:NO_READ
    bad_judge = shop_assertions_plugin:BAD_JUDGE
    wrong_key = shop_assertions_plugin:ORDER
    not_a_kind = shop_assertions_plugin:NOT_A_KIND
    broken = no_such_module_anywhere:ORDER
"""


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str) -> Iterator[Path]:
    """The shop plugin installed as a distribution, and the shop's database (``SHOP_DB``) with an orders table."""
    (tmp_path / "shop_assertions_plugin.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    info = tmp_path / "shop_assertions_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shop-assertions-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, run_id TEXT, status TEXT, total_cents INTEGER)")
    monkeypatch.setenv("SHOP_DB", str(db))
    plugins.clear_plugin_cache()
    yield db
    for key in ("order", "order_count", "no_read", "bad_judge", "wrong_key", "not_a_kind", "broken"):
        kinds._KINDS.pop(key, None)
    kinds.values_model.cache_clear()
    sys.modules.pop("shop_assertions_plugin", None)
    plugins.clear_plugin_cache()


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The shop's two good kinds, plus entry points that are broken in every way one can be."""
    yield from _install(tmp_path, monkeypatch, ENTRY_POINTS)


@pytest.fixture
def good_shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The shop's two good kinds only."""
    yield from _install(tmp_path, monkeypatch, GOOD)


def _scenario_file(tmp_path: Path, assertions: dict) -> Path:
    path = tmp_path / "shop-checkout.yaml"
    path.write_text(yaml.safe_dump({
        "id": "shop-checkout", "agent": "billing", "description": "a customer orders a lamp",
        "persona": {"name": "Ana", "phone": "11987650099"}, "turns": [{"user": "I want the lamp"}],
        "assertions": assertions}), encoding="utf-8")
    return path


def _order(db: Path, run_id: str, status: str, total: int) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO orders (run_id, status, total_cents) VALUES (?, ?, ?)", (run_id, status, total))


def test_a_plugin_key_loads_with_its_own_type(shop, tmp_path):
    sc = load_scenario_file(_scenario_file(tmp_path, {"order": {"status": "placed", "min_total_cents": 1000},
                                                      "order_count": 1, "tools_called": ["checkout"]}))
    assert sc.assertions.active() == {"tools_called": ["checkout"], "order": {"status": "placed", "min_total_cents": 1000},
                                      "order_count": 1}
    assert type(sc.assertions.checks()["order"]).__name__ == "OrderExpectation"


@pytest.mark.parametrize(("assertions", "field", "message"), [
    ({"order": {"status": "shipped"}}, "assertions.order.status", "Input should be 'placed' or 'cancelled', got 'shipped'"),
    ({"order": {"status": "placed", "colour": "red"}}, "assertions.order.colour", "unknown field"),
    ({"order_count": "two"}, "assertions.order_count", "Input should be a valid integer"),
    ({"ordr": True}, "assertions.ordr", "unknown field: no assertion 'ordr' is registered; known: payment_link_created"),
    ({"broken": True}, "assertions.broken",
     "the plugin for this assertion cannot be used: the convoeval.assertions entry point 'broken' "
     "(no_such_module_anywhere:ORDER) cannot be loaded: ModuleNotFoundError"),
    ({"not_a_kind": 1}, "assertions.not_a_kind", "names int, not an AssertionKind with key 'not_a_kind'"),
    ({"wrong_key": 1}, "assertions.wrong_key", "names AssertionKind, not an AssertionKind with key 'wrong_key'"),
])
def test_a_bad_plugin_value_or_key_is_one_line_naming_file_and_field(shop, tmp_path, assertions, field, message):
    path = _scenario_file(tmp_path, assertions)
    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(path)
    line = caught.value.one_line()
    assert line.startswith(f"{path}: {field}: ") and message in line and "\n" not in line, line


def test_the_unknown_key_error_lists_the_declared_plugin_keys(shop, tmp_path):
    with pytest.raises(ScenarioError) as caught:
        load_scenario_file(_scenario_file(tmp_path, {"ordr": True}))
    known = caught.value.one_line().split("known: ", 1)[1]
    assert "order, order_count" in known and "sql" in known
    assert "order" in assertion_keys() and "order" not in assertion_keys(plugins=False)  # named, not loaded


def test_the_json_schema_lists_plugin_keys_with_their_types(good_shop):
    schema = json_schema()
    props = schema["$defs"]["Assertions"]["properties"]
    assert props["order"]["anyOf"][0] == {"$ref": "#/$defs/OrderExpectation"}
    assert props["order"]["description"] == "The run's latest order in the shop's database."
    assert schema["$defs"]["OrderExpectation"]["properties"]["status"]["enum"] == ["placed", "cancelled"]
    assert props["order_count"]["anyOf"][0] == {"type": "integer"}
    assert "payment_link_created" in props and "sql" in props


def test_the_json_schema_refuses_a_broken_plugin_by_name(tmp_path, monkeypatch):
    info = tmp_path / "broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[convoeval.assertions]\nbroken = no_such_module_anywhere:X\n",
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.clear_plugin_cache()
    try:
        with pytest.raises(plugins.PluginError, match="'broken' .* cannot be loaded: ModuleNotFoundError"):
            json_schema()
    finally:
        plugins.clear_plugin_cache()


def test_plugin_checkers_fail_then_pass_and_report_like_clinic_keys(shop):
    seeded = SeededRun(run_id="run-1", clinic_id="c", patient_id="p")
    wanted = {"order": {"status": "placed", "min_total_cents": 1000}, "order_count": 1}
    store = open_store("sqlite:///:memory:")  # these checkers read the shop's database, not convoeval's store
    before = check_assertions(store, wanted, seeded)
    assert [(r.key, r.passed, r.actual) for r in before] == [("order", False, None), ("order_count", False, 0)]
    assert before[0].detail == "order: expected an order, the run placed none"
    assert before[1].detail == "order_count: expected 1, got 0"
    _order(shop, "run-2", "placed", 5000)  # another run's order
    _order(shop, "run-1", "placed", 2500)
    after = check_assertions(store, Assertions.model_validate(wanted), seeded)
    assert [(r.key, r.passed) for r in after] == [("order", True), ("order_count", True)]
    assert after[0].expected == {"status": "placed", "min_total_cents": 1000}  # plain data for the result frames
    assert after[0].detail == "order: placed, 2500 cents, as expected"


def test_a_plugin_kind_without_a_checker_or_with_a_bad_judge_is_an_error_not_a_pass(shop):
    seeded = SeededRun(run_id="run-1", clinic_id="c", patient_id="p")
    store = open_store("sqlite:///:memory:")
    with pytest.raises(LookupError, match="'no_read' is registered but has no checker"):
        check_assertions(store, {"no_read": True}, seeded)
    with pytest.raises(TypeError, match=r"'bad_judge': judge must return \(passed: bool, detail: str\)"):
        check_assertions(store, {"bad_judge": True}, seeded)


def test_a_key_registered_in_code_wins_over_an_entry_point(shop, tmp_path):
    kinds.register_assertion(kinds.AssertionKind("order_count", str, "registered in code"))
    sc = load_scenario_file(_scenario_file(tmp_path, {"order_count": "one"}))
    assert sc.assertions.active() == {"order_count": "one"}


def test_every_shipped_scenario_keeps_its_assertions_exactly():
    files = sorted((REPO / "evals" / "scenarios").rglob("*.yaml"))
    assert len(files) == len(load_scenarios(REPO / "evals" / "scenarios")) > 20
    for path in files:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        written = {k: v for k, v in (raw.get("assertions") or {}).items() if v is not None}
        active = load_scenario_file(path).assertions.active()
        assert active == written, path
        order = [k for k in kinds.assertion_keys(plugins=False) if k in written]
        assert list(active) == order, path  # results keep the clinic keys' order, whatever the file's


def test_an_invalid_kind_is_refused_when_it_is_made():
    with pytest.raises(ValueError, match="invalid assertion key 'Order Total'"):
        kinds.AssertionKind("Order Total", int)
    with pytest.raises(ValueError, match="read must be callable"):
        kinds.AssertionKind("order_total", int, read=42)
    with pytest.raises(TypeError, match="takes an AssertionKind"):
        kinds.register_assertion({"key": "x"})


def test_a_key_declared_as_a_field_validates_and_is_checked_like_a_registered_one():
    class WithSteps(Assertions):
        steps: list[str] | None = None

    typed = WithSteps.model_validate({"steps": ["a", "b"], "nps_score": 9})
    assert typed.checks() == {"steps": ["a", "b"], "nps_score": 9}
    assert typed.active() == {"steps": ["a", "b"], "nps_score": 9}
    with pytest.raises(ValidationError, match=r"steps\n  Input should be a valid list"):
        WithSteps.model_validate({"steps": "a"})
    assert "steps" in WithSteps.model_json_schema()["properties"]
