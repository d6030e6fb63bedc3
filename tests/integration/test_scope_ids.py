"""Identifiers kept private: raw scope keys go in, and no table shows them.

Callers scope memory by session ids, workspace paths and account ids. With the
switch on (the default) the service stores each as a keyed hash under the tenant's
secret; these tests record, ask for context, search and promote through the library
and through HTTP with distinctive raw ids, then read every column of every table
of the database (all schemas, each value cast to text) and find none of them,
while the same raw ids still select the same memory. With the switch off, raw ids
are stored as given.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.config import Settings
from memledger.errors import InvalidCommand, InvalidIdentifier
from memledger.events.catalogue import TurnRecorded
from memledger.events.envelope import NewEvent
from memledger.library import MemoryLedger
from memledger.service import context, scope_ids
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from memledger.store import db, event_reads, event_store, migrate
from memledger.store.schema import tenant_secrets
from tests.conftest import TestDatabase
from tests.e2e.conftest import ApiServer, scratch_ledger, start_server, stop_server, wait_until_serving

LIBRARY = Scopes(
    session="sess-7f3a9c2e-lib",
    project="/home/alice/secret-project",
    user="acct-0042-alice@example.com",
    org="org-initech-0088",
)
HTTP = Scopes(
    session="sess-51be07d4-http",
    project="/home/bob/classified-repo",
    user="acct-0777-bob@example.com",
    org="org-globex-0099",
)
PLAIN = Scopes(session="sess-0c1d-plain", project="/home/dave/plain-project", user="acct-0123-dave@example.com")
SUBJECT = "person-carol-5521@example.org"
# Turn text that the heuristic extractor turns into facts and an edge from the speaker.
TURNS = (
    "Project Quokkaline uses PostgreSQL.",
    "We decided to deploy Quokkaline on Kubernetes.",
    "I'm using FastAPI with my colleague Sarah.",
)
REQUEST = "Which database does Quokkaline use?"


def raw_ids(scopes: Scopes) -> list[str]:
    return [v for v in (scopes.session, scopes.project, scopes.user, scopes.org) if v]


# --- the scan ----------------------------------------------------------------------

_COLUMNS = sa.text(
    "SELECT n.nspname, c.relname, a.attname FROM pg_class c"
    " JOIN pg_namespace n ON n.oid = c.relnamespace"
    " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped"
    " WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
    " AND n.nspname NOT LIKE 'pg\\_toast%' ORDER BY 1, 2, 3"
)


def find_anywhere(engine: Engine, needles: Iterable[str]) -> dict[str, set[str]]:
    """For each needle, the "schema.table.column"s holding it anywhere in their values
    (case-insensitively, every value cast to text). Read as the owner, whom row-level
    security does not fence."""
    wanted = [n.lower() for n in needles]
    found: dict[str, set[str]] = {n: set() for n in wanted}
    with engine.connect() as conn:
        quote = conn.dialect.identifier_preparer.quote
        for schema, table, column in conn.execute(_COLUMNS).all():
            # text(): identifiers from the catalogue, quoted; the needles are bound.
            hits = conn.execute(
                sa.text(
                    f"SELECT DISTINCT needle FROM unnest(CAST(:needles AS text[])) AS needle,"
                    f" {quote(schema)}.{quote(table)} AS t"
                    f" WHERE strpos(lower(t.{quote(column)}::text), needle) > 0"
                ),
                {"needles": wanted},
            ).scalars()
            for needle in hits:
                found[needle].add(f"{schema}.{table}.{column}")
    return found


def assert_nowhere(engine: Engine, raw: Iterable[str], *, control: str) -> None:
    """None of ``raw`` is in the database, while ``control`` (a word of a recorded
    turn) is: the scan does see the rows."""
    found = find_anywhere(engine, [*raw, control])
    assert found.pop(control.lower()), f"the scan found not even the turn text {control!r}"
    assert {needle: where for needle, where in found.items() if where} == {}


# --- fixtures ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    """A migrated database of this module's own, through the library (switch on)."""
    opened, drop = scratch_ledger(database, "scopeids")
    try:
        yield opened
    finally:
        drop()


@pytest.fixture
def tenant() -> str:
    return f"ids-{uuid.uuid4().hex[:8]}"


def _record(ledger: MemoryLedger, tenant: str, scopes: Scopes, *, subject: str | None = None) -> None:
    turns = [
        TurnInput(role="user", text=text, scopes=scopes, turn_id=f"{tenant}-{n}", subject=subject)
        for n, text in enumerate(TURNS)
    ]
    ledger.record_turns(tenant, turns)
    ledger.process()


def _turn_events(engine: Engine, tenant: str) -> list[TurnRecorded]:
    with engine.connect() as conn:
        found = event_reads.read_all(conn, tenant_id=tenant, types=["turn.recorded"])
    return [rec.event for rec in found if isinstance(rec.event, TurnRecorded)]


# --- through the library -----------------------------------------------------------


def test_the_library_stores_no_raw_id_and_the_same_raw_ids_select_the_same_memory(
    ledger: MemoryLedger, tenant: str
) -> None:
    _record(ledger, tenant, LIBRARY)

    block = ledger.context(tenant, REQUEST, scopes=LIBRARY)
    found = ledger.search(tenant, "Quokkaline database", scopes=LIBRARY)
    promoted = ledger.promote(
        tenant, kind="decision", scope="org", scopes=LIBRARY, statement="Every Quokkaline service logs in JSON."
    )
    ledger.process()
    speaker = ledger.graph(tenant, "me", user=LIBRARY.user)
    later = ledger.context(tenant, "How do Quokkaline services log?", scopes=LIBRARY)

    assert "Quokkaline uses PostgreSQL" in block.text
    assert any(item.kind == "fact" and "PostgreSQL" in item.text for item in found)
    assert promoted in later.item_ids and "logs in JSON" in later.text
    assert speaker.edges, "the speaker's edges are found by the raw user id"
    assert_nowhere(ledger.engine, raw_ids(LIBRARY), control="Quokkaline")

    # What is stored instead: the tenant's keyed hashes, the same for the same raw id.
    stored = scope_ids.stored_scopes(ledger.engine, tenant, LIBRARY)
    assert all(scope_ids.is_stored(v) for v in raw_ids(stored))
    assert {t.scopes for t in _turn_events(ledger.engine, tenant)} == {stored}
    assert {t.subject for t in _turn_events(ledger.engine, tenant)} == {stored.user}
    assert "## Project memory\n" in block.text and stored.project not in block.text  # no stored key shown


def test_other_raw_ids_select_none_of_that_memory(ledger: MemoryLedger, tenant: str) -> None:
    _record(ledger, tenant, LIBRARY)
    other = Scopes(session="sess-other", project="/home/alice/other-project")

    assert "Quokkaline uses PostgreSQL" in ledger.context(tenant, REQUEST, scopes=LIBRARY).text
    assert "Quokkaline uses PostgreSQL" not in ledger.context(tenant, REQUEST, scopes=other).text


def test_the_same_raw_id_is_a_different_stored_id_in_each_tenant(ledger: MemoryLedger) -> None:
    first, second = (f"ids-{uuid.uuid4().hex[:8]}" for _ in range(2))
    a = scope_ids.stored_id(ledger.engine, first, "project", "/home/alice/secret-project")
    b = scope_ids.stored_id(ledger.engine, second, "project", "/home/alice/secret-project")
    again = scope_ids.stored_id(ledger.engine, first, "project", "/home/alice/secret-project")
    as_user = scope_ids.stored_id(ledger.engine, first, "user", "/home/alice/secret-project")

    assert a == again
    assert a not in (b, as_user)
    assert a.startswith("hid.project.") and as_user.startswith("hid.user.")
    scope_ids.forget_cached()  # a new process reads the same secret back
    assert scope_ids.stored_id(ledger.engine, first, "project", "/home/alice/secret-project") == a


def test_a_stored_id_passed_back_selects_the_same_scope(ledger: MemoryLedger, tenant: str) -> None:
    _record(ledger, tenant, LIBRARY)
    fact = next(i for i in ledger.search(tenant, "Quokkaline PostgreSQL", scopes=LIBRARY) if i.kind == "fact")
    assert fact.scope_key is not None and scope_ids.is_stored(fact.scope_key)
    shown = Scopes(**{str(fact.scope): fact.scope_key})  # as a caller copies it from the fact

    assert "Quokkaline uses PostgreSQL" in ledger.context(tenant, REQUEST, scopes=shown).text


def test_a_stored_id_of_another_kind_is_refused(ledger: MemoryLedger, tenant: str) -> None:
    user_id = scope_ids.stored_id(ledger.engine, tenant, "user", "acct-1")

    with pytest.raises(InvalidIdentifier, match=r"scopes\.project .*is a stored user id, not a project id"):
        ledger.search(tenant, "anything", scopes=Scopes(project=user_id))


def test_the_subject_is_stored_as_its_user_id_for_erasure(ledger: MemoryLedger, tenant: str) -> None:
    _record(ledger, tenant, Scopes(session="sess-erasure", user="acct-9"), subject=SUBJECT)

    with ledger.engine.connect() as conn:
        expected = scope_ids.stored_id(conn, tenant, "user", SUBJECT)
    assert {t.subject for t in _turn_events(ledger.engine, tenant)} == {expected}
    assert not find_anywhere(ledger.engine, [SUBJECT])[SUBJECT.lower()]


@pytest.mark.parametrize(
    ("scopes", "subject", "field"),
    [
        pytest.param(Scopes(user="u" * 201), None, "scopes.user", id="over-long"),
        pytest.param(Scopes(project=""), None, "scopes.project", id="empty"),
        pytest.param(Scopes(session="s\x00"), None, "scopes.session", id="nul"),
        pytest.param(Scopes(session="s"), "x" * 201, "subject", id="over-long-subject"),
    ],
)
def test_a_bad_raw_id_is_refused_before_anything_is_written(
    ledger: MemoryLedger, tenant: str, scopes: Scopes, subject: str | None, field: str
) -> None:
    with pytest.raises(InvalidIdentifier) as refused:
        ledger.record_turns(tenant, [TurnInput(role="user", text="hello", scopes=scopes, subject=subject)])

    assert refused.value.field == field
    with ledger.engine.connect() as conn:
        assert event_reads.read_all(conn, tenant_id=tenant) == []
        assert conn.execute(sa.select(tenant_secrets).where(tenant_secrets.c.tenant_id == tenant)).all() == []


def test_a_promotion_needs_the_target_scope_key(ledger: MemoryLedger, tenant: str) -> None:
    with pytest.raises(InvalidCommand, match="needs the project scope key"):
        ledger.promote(tenant, kind="decision", scope="project", scopes=Scopes(user="u"), statement="x")


# --- the secret --------------------------------------------------------------------


def test_processes_making_a_tenant_secret_at_once_end_with_one(ledger: MemoryLedger, tenant: str) -> None:
    barrier = threading.Barrier(6)
    got: list[str] = []

    def first_use() -> None:
        barrier.wait()
        with ledger.engine.connect() as conn:  # no cache: each thread goes to the database
            got.append(scope_ids.key_for(conn, tenant).stored_id("user", "acct-1"))

    scope_ids.forget_cached()
    threads = [threading.Thread(target=first_use) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(got) == 6 and len(set(got)) == 1
    with ledger.engine.connect() as conn:
        rows = conn.execute(sa.select(tenant_secrets).where(tenant_secrets.c.tenant_id == tenant)).all()
    assert len(rows) == 1 and rows[0].secret is not None and len(rows[0].secret) == 32


def test_a_caller_rolling_back_keeps_the_secret_it_caused(ledger: MemoryLedger, tenant: str) -> None:
    with ledger.engine.connect() as conn:
        conn.begin()
        during = scope_ids.stored_id(conn, tenant, "session", "s-1")
        conn.rollback()
    scope_ids.forget_cached()

    assert scope_ids.stored_id(ledger.engine, tenant, "session", "s-1") == during


def test_context_fails_open_when_the_tenant_key_cannot_be_read(tenant: str) -> None:
    unreachable = db.create_engine(sa.engine.make_url("postgresql+psycopg://nobody@127.0.0.1:9/none"), pool_size=1)
    try:
        request = context.SelectRequest(tenant_id=tenant, scopes=LIBRARY, request=REQUEST)
        served = context.build_context(unreachable, request)
    finally:
        unreachable.dispose()

    assert served.selection.empty_reason is not None
    assert served.selection.empty_reason.startswith("memory unavailable (DatabaseUnavailable")
    assert "END PERSISTENT MEMORY" in served.block.text and not served.selection.items


# --- the switch ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def plain(ledger: MemoryLedger) -> Iterator[MemoryLedger]:
    """A second deployment on the same database with hashing switched off."""
    url = ledger.database.url.render_as_string(hide_password=False)
    opened = MemoryLedger.open(Settings(DATABASE_URL=url, hash_scope_ids=False))
    try:
        yield opened
    finally:
        opened.close()


def test_with_the_switch_off_raw_ids_are_stored_as_given(plain: MemoryLedger, tenant: str) -> None:
    _record(plain, tenant, PLAIN)

    assert "Quokkaline uses PostgreSQL" in plain.context(tenant, REQUEST, scopes=PLAIN).text
    assert {t.scopes for t in _turn_events(plain.engine, tenant)} == {PLAIN}
    found = find_anywhere(plain.engine, [str(PLAIN.project), str(PLAIN.session)])
    assert "public.events.payload" in found[str(PLAIN.project)]
    assert "public.events.stream_id" in found[str(PLAIN.session)]


def test_a_tenant_keeps_its_first_mode_when_the_switch_flips(
    ledger: MemoryLedger, plain: MemoryLedger, tenant: str
) -> None:
    _record(ledger, tenant, LIBRARY)  # first seen with hashing on
    scope_ids.forget_cached()

    assert "Quokkaline uses PostgreSQL" in plain.context(tenant, REQUEST, scopes=LIBRARY).text
    plain.record_turn(tenant, "user", "Quokkaline also uses Redis.", scopes=LIBRARY)
    assert_nowhere(ledger.engine, raw_ids(LIBRARY), control="Quokkaline")


def test_tenants_with_scoped_events_before_the_upgrade_keep_raw_ids(database: TestDatabase) -> None:
    url = database.new_database("idsupgrade")
    engine = db.create_engine(url, pool_size=2)
    try:
        migrate.upgrade(engine, "0006")
        event = TurnRecorded(turn_id="t1", role="user", text="hi", scopes=Scopes(project="/home/old/project"))
        new = NewEvent(event=event, event_id="turn:t1", occurred_at=datetime.now(UTC))
        with engine.begin() as tx:
            event_store.append(tx, "old-tenant", "conversation:default", [new], None)
        migrate.upgrade(engine, "0007")

        assert not scope_ids.key_for(engine, "old-tenant").hashes
        assert scope_ids.key_for(engine, "new-tenant").hashes
        assert scope_ids.stored_id(engine, "old-tenant", "project", "/home/old/project") == "/home/old/project"
    finally:
        engine.dispose()
        scope_ids.forget_cached()
        db.drop_database(database.server_url, str(url.database))


# --- through HTTP --------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(database: TestDatabase, ledger: MemoryLedger) -> Iterator[tuple[ApiServer, str, httpx.Client]]:
    """``memledger serve`` on this module's database (switch on), a tenant and its client."""
    url = ledger.database.url.render_as_string(hide_password=False)
    server = start_server({**database.env, "DATABASE_URL": url}, "--no-workers")
    try:
        tenant = f"ids-http-{uuid.uuid4().hex[:8]}"
        _, key = ledger.create_key(tenant)
        wait_until_serving(server)
        yield server, tenant, server.client(key)
    finally:
        stop_server(server)


def test_http_stores_no_raw_id_and_the_same_raw_ids_select_the_same_memory(
    ledger: MemoryLedger, http: tuple[ApiServer, str, httpx.Client]
) -> None:
    _, tenant, client = http
    scopes = msgspec.to_builtins(HTTP)
    turns = [
        {"role": "user", "text": text, "scopes": scopes, "turn_id": f"{tenant}-{n}", "subject": SUBJECT}
        for n, text in enumerate(TURNS)
    ]
    _ok(client.post("/v1/turns", json={"turns": turns}))
    ledger.process()

    context = _ok(client.get("/v1/memory/context", params={"request": REQUEST, **scopes}))
    selected = _ok(client.post("/v1/memory/select", json={"request": REQUEST, "scopes": scopes}))
    found = _ok(client.get("/v1/search", params={"q": "Quokkaline database", **scopes}))
    promote = {"kind": "decision", "scope": "project", "scopes": scopes, "statement": "Quokkaline ships on Fridays."}
    promoted = _ok(client.post("/v1/memory/promote", json=promote))
    graph = _ok(client.get("/v1/graph", params={"entity": "me", "user": HTTP.user}))
    ledger.process()
    later = _ok(client.get("/v1/memory/context", params={"request": "When does Quokkaline ship?", **scopes}))

    assert "Quokkaline uses PostgreSQL" in context["block"]
    assert any("PostgreSQL" in item["text"] for item in selected["items"])
    assert any("PostgreSQL" in item["text"] for item in found)
    assert promoted["memory_id"] in later["item_ids"]
    assert graph["edges"], "the speaker's edges are found by the raw user id"
    assert_nowhere(ledger.engine, [*raw_ids(HTTP), SUBJECT], control="Quokkaline")


def _ok(response: httpx.Response) -> Any:
    assert response.status_code in (200, 202), response.text
    return response.json()
