"""The Supabase backend at the HTTP level: the PostgREST requests it sends and how responses map back to rows.

No live project is used: respx intercepts the client's HTTP calls. A small in-memory PostgREST stand-in also
runs the whole seed / assert / cleanup cycle through the backend.
"""

from __future__ import annotations

import json
import traceback
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest
import respx
from store_support import clinic_scenario

from convoeval.store import TABLES, StoreError, check_assertions, cleanup_run, open_store, seed_run
from convoeval.store import schema as ref_schema
from convoeval.store.supabase import SupabaseStore, project_url

KEY = "sb_secret_" + "TestKey123"  # split so traceback source lines never show it whole
HOST = "proj.supabase.co"
REST = f"https://{HOST}/rest/v1"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPABASE_URL", f"https://{HOST}")
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", KEY)


@pytest.fixture
def api(env: None) -> respx.MockRouter:
    with respx.mock(base_url=REST, assert_all_called=False) as router:
        yield router


def _params(request: httpx.Request) -> list[tuple[str, str]]:
    return parse_qsl(request.url.query.decode(), keep_blank_values=True)


def _assert_authenticated(request: httpx.Request) -> None:
    assert request.headers["apikey"] == KEY
    assert request.headers["authorization"] == f"Bearer {KEY}"


# ── URLs and configuration ──


def test_url_forms(env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert project_url("supabase://") == f"https://{HOST}"
    assert project_url("supabase://db.example.org") == "https://db.example.org"
    assert project_url("supabase://abcd1234") == "https://abcd1234.supabase.co"
    monkeypatch.setenv("SUPABASE_URL", "http://127.0.0.1:54321/")
    assert project_url("supabase://") == "http://127.0.0.1:54321"
    store = SupabaseStore("supabase://")
    assert store.url == "supabase://127.0.0.1:54321" and KEY not in store.url


def test_missing_configuration_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUPABASE_URL", raising=False)
    monkeypatch.delenv("SUPABASE_SERVICE_ROLE_KEY", raising=False)
    with pytest.raises(StoreError, match="supabase:// needs SUPABASE_URL"):
        SupabaseStore("supabase://")
    with pytest.raises(StoreError, match="set SUPABASE_SERVICE_ROLE_KEY"):
        SupabaseStore(f"supabase://{HOST}")


def test_a_key_in_the_url_is_refused_without_echo(env: None) -> None:
    with pytest.raises(StoreError) as info:
        SupabaseStore(f"supabase://{KEY}@{HOST}")
    assert "SUPABASE_SERVICE_ROLE_KEY" in str(info.value) and KEY not in str(info.value)


# ── requests ──


def test_insert_posts_rows_with_ids_and_returns_the_stored_rows(api: respx.MockRouter) -> None:
    def created(request: httpx.Request) -> httpx.Response:
        rows = json.loads(request.content)
        return httpx.Response(201, json=[{**r, "timezone": "America/Sao_Paulo", "locale": r.get("locale", "pt-BR")} for r in rows])

    route = api.post("/clinics").mock(side_effect=created)
    store = SupabaseStore("supabase://")
    rows = store.insert("clinics", [{"run_id": "r1", "name": "A"}, {"run_id": "r1", "name": "B", "locale": "es"}])
    request = route.calls.last.request
    _assert_authenticated(request)
    assert request.method == "POST" and request.url.path == "/rest/v1/clinics"
    body = json.loads(request.content)
    assert [(r["run_id"], r["name"], len(r["id"])) for r in body] == [("r1", "A", 32), ("r1", "B", 32)]
    # Left-out columns take their SQL defaults, as in the SQL backend.
    assert "missing=default" in request.headers["prefer"] and "return=representation" in request.headers["prefer"]
    assert [(r["id"], r["locale"]) for r in rows] == [(body[0]["id"], "pt-BR"), (body[1]["id"], "es")]


def test_select_sends_eq_and_is_null_filters_order_and_page(api: respx.MockRouter) -> None:
    route = api.get("/patients").mock(return_value=httpx.Response(200, json=[{"id": "p1", "name": "Ana", "cpf": None}]))
    rows = SupabaseStore("supabase://").select("patients", {"clinic_id": "c1", "cpf": None}, order_by="-name")
    request = route.calls.last.request
    _assert_authenticated(request)
    assert request.method == "GET" and request.url.path == "/rest/v1/patients"
    assert _params(request) == [
        ("select", "*"), ("clinic_id", "eq.c1"), ("cpf", "is.null"), ("order", "name.desc"), ("offset", "0"), ("limit", "1000"),
    ]
    assert rows == [{"id": "p1", "name": "Ana", "cpf": None}]


def test_select_follows_pages(api: respx.MockRouter) -> None:
    pages = [[{"id": f"{i:05d}"} for i in range(1000)], [{"id": "x1"}, {"id": "x2"}]]
    route = api.get("/runs").mock(side_effect=[httpx.Response(200, json=p) for p in pages])
    rows = SupabaseStore("supabase://").select("runs", {"scenario_id": "s"})
    assert len(rows) == 1002 and rows[-1] == {"id": "x2"}
    assert [dict(_params(c.request))["offset"] for c in route.calls] == ["0", "1000"]
    assert dict(_params(route.calls[0].request))["order"] == "id.asc"


def test_booleans_are_sent_as_postgrest_literals(api: respx.MockRouter) -> None:
    route = api.get("/slots").mock(return_value=httpx.Response(200, json=[{"id": "s1", "available": True}]))
    rows = SupabaseStore("supabase://").select("slots", {"available": True})
    assert ("available", "eq.true") in _params(route.calls.last.request)
    assert rows[0]["available"] is True


def test_update_patches_matching_rows_and_counts_them(api: respx.MockRouter) -> None:
    route = api.patch("/invoices").mock(return_value=httpx.Response(200, json=[{"id": "i1"}, {"id": "i2"}]))
    count = SupabaseStore("supabase://").update("invoices", {"run_id": "r1", "status": "pending"}, {"status": "paid"})
    request = route.calls.last.request
    _assert_authenticated(request)
    assert count == 2
    assert _params(request) == [("run_id", "eq.r1"), ("status", "eq.pending")]
    assert json.loads(request.content) == {"status": "paid"}


def test_delete_filters_and_counts(api: respx.MockRouter) -> None:
    route = api.delete("/messages").mock(return_value=httpx.Response(200, json=[{"id": "m1"}, {"id": "m2"}, {"id": "m3"}]))
    assert SupabaseStore("supabase://").delete("messages", {"run_id": "r1"}) == 3
    request = route.calls.last.request
    _assert_authenticated(request)
    assert request.method == "DELETE" and _params(request) == [("run_id", "eq.r1")]


def test_cleanup_run_deletes_each_table_children_first(api: respx.MockRouter) -> None:
    route = api.route(method="DELETE").mock(return_value=httpx.Response(200, json=[]))
    counts = cleanup_run(SupabaseStore("supabase://"), "r1")
    assert [c.request.url.path.rsplit("/", 1)[-1] for c in route.calls] == list(reversed(TABLES))
    assert all(_params(c.request) == [("run_id", "eq.r1")] for c in route.calls)
    assert set(counts.values()) == {0}


def test_bad_names_are_refused_before_any_request(api: respx.MockRouter) -> None:
    store = SupabaseStore("supabase://")
    with pytest.raises(StoreError, match=r"^supabase store: unknown table 'clinic'"):
        store.select("clinic")
    with pytest.raises(StoreError, match=r"^supabase store: unknown column 'nmae' in table 'clinics'"):
        store.update("clinics", {"nmae": "x"}, {"name": "y"})
    with pytest.raises(StoreError, match="refusing to delete every row"):
        store.delete("clinics", {})
    assert api.calls.call_count == 0


# ── migrate and errors ──


def test_migrate_checks_every_table_with_an_empty_select(api: respx.MockRouter) -> None:
    route = api.route(method="GET").mock(return_value=httpx.Response(200, json=[]))
    store = open_store("supabase://")  # open_store migrates
    assert store.backend == "supabase"
    checked = {c.request.url.path.rsplit("/", 1)[-1]: dict(_params(c.request)) for c in route.calls}
    assert set(checked) == set(TABLES)
    assert checked["slots"] == {"select": ",".join(ref_schema.columns()["slots"]), "limit": "0"}


def test_migrate_reports_missing_tables_and_how_to_create_them(api: respx.MockRouter) -> None:
    missing = {"code": "PGRST205", "message": "Could not find the table 'public.handoffs' in the schema cache"}
    api.get("/handoffs").mock(return_value=httpx.Response(404, json=missing))
    api.route(method="GET").mock(return_value=httpx.Response(200, json=[]))
    with pytest.raises(StoreError) as info:
        open_store("supabase://")
    message = str(info.value)
    assert "handoffs (PGRST205 Could not find the table" in message and "clinics (" not in message
    assert "001_reference_schema.postgres.sql" in message and "docs/store.md" in message
    assert KEY not in message


def test_api_errors_become_store_errors_without_the_key(api: respx.MockRouter) -> None:
    api.post("/patients").mock(return_value=httpx.Response(409, json={
        "code": "23505", "message": "duplicate key value violates unique constraint", "hint": None,
        "details": f"echoing {KEY}",
    }))
    with pytest.raises(StoreError, match=r"^supabase store \(supabase://proj.supabase.co\): insert into patients failed: 23505 duplicate key"):
        SupabaseStore("supabase://").insert("patients", {"run_id": "r", "clinic_id": "c", "name": "n", "phone": "1"})


def test_network_errors_are_retried_then_become_store_errors_without_the_key(
    api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # postgrest retries idempotent requests after network errors with back-off; skip the waiting, keep the count.
    monkeypatch.setattr("postgrest._sync.request_builder.time.sleep", lambda _s: None)
    route = api.get("/runs").mock(side_effect=httpx.ConnectError(f"cannot connect (key {KEY})"))
    with pytest.raises(StoreError) as info:
        SupabaseStore("supabase://").select("runs")
    assert route.call_count == 4
    assert str(info.value).startswith("supabase store (supabase://proj.supabase.co): select from runs failed: ConnectError")
    assert KEY not in "".join(traceback.format_exception(info.value))


# ── the whole cycle against an in-memory PostgREST stand-in ──


class FakePostgrest:
    """Just enough PostgREST for the store: eq / is.null filters, order, offset/limit, return=representation."""

    def __init__(self) -> None:
        self.tables: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.headers["apikey"] == KEY
        table = request.url.path.rsplit("/", 1)[-1]
        params = _params(request)
        filters = [(k, v) for k, v in params if k not in ("select", "order", "offset", "limit", "columns")]
        def matches(row: dict[str, Any]) -> bool:
            return all(row.get(k) is None if v == "is.null" else str(_wire(row.get(k))) == v[3:] for k, v in filters)
        rows = self.tables[table]
        if request.method == "POST":
            new = json.loads(request.content)
            rows.extend(new)
            return httpx.Response(201, json=new)
        hit = [r for r in rows if matches(r)]
        if request.method == "PATCH":
            for r in hit:
                r.update(json.loads(request.content))
        elif request.method == "DELETE":
            self.tables[table] = [r for r in rows if not matches(r)]
        else:
            p = dict(params)
            if "order" in p:
                column, direction = p["order"].split(".")
                hit.sort(key=lambda r: (r.get(column) is None, r.get(column)), reverse=direction == "desc")
            start = int(p.get("offset", 0))
            hit = hit[start : start + int(p.get("limit", 10**9))]
        return httpx.Response(200, json=hit)


def _wire(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool) else value


def test_seed_assert_and_cleanup_through_supabase(env: None) -> None:
    fake = FakePostgrest()
    with respx.mock(base_url=REST) as router:
        router.route().mock(side_effect=fake)
        store = open_store("supabase://")
        seeded = seed_run(store, clinic_scenario())
        assert len(fake.tables["slots"]) == 2 and {r["run_id"] for r in fake.tables["slots"]} == {seeded.run_id}
        slot = next(r for r in fake.tables["slots"] if r["fixture_ref"] == "s1")
        assert slot["professional_id"] == seeded.refs["professionals"]["dr-a"]
        store.update("invoices", {"id": seeded.refs["invoices"]["inv-early"]}, {"status": "paid"})
        [result] = check_assertions(store, {"invoice_status": "paid"}, seeded)
        assert result.passed, result.detail
        counts = cleanup_run(store, seeded.run_id)
        assert counts["invoices"] == 2 and counts["runs"] == 1
        assert all(rows == [] for rows in fake.tables.values())
