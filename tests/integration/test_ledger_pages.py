"""``ledger_pages.read_pages``: read_all's pages streamed from few statements, on a
real PostgreSQL. Each test writes under its own tenant and reads it alone."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.errors import EventDecodeError, InvalidCommand, UnknownEventType
from memledger.events import FactExtracted, NewEvent, Recorded
from memledger.events.envelope import START, Cursor
from memledger.store import direct, event_reads, event_store, ledger_pages
from tests.conftest import TestDatabase, settle, turn_event
from tests.integration.test_projections_support import fresh_database


def _fact(key: str) -> NewEvent:
    return NewEvent(
        event=FactExtracted(
            memory_id=f"m-{key}",
            scope="session",
            scope_key="s1",
            key=key,
            statement=key,
            category="preference",
            confidence=0.9,
        ),
        event_id=f"evt-{uuid.uuid4().hex}",
        occurred_at=turn_event().occurred_at,
    )


def _append(engine: Engine, tenant: str, stream: str, news: list[NewEvent]) -> None:
    with engine.begin() as tx:
        event_store.append(tx, tenant, stream, news, None)


def _paged_read_all(engine: Engine, **filters: object) -> list[Recorded]:
    """Everything read_all returns from the start, page by page, once the tenant's events
    are visible to it."""
    if isinstance(tenant := filters.get("tenant_id"), str):
        settle(engine, tenant)
    out: list[Recorded] = []
    after = START
    with engine.connect() as conn:
        while page := event_reads.read_all(conn, after=after, limit=4, **filters):  # type: ignore[arg-type]
            out.extend(page)
            after = page[-1].cursor
    return out


def _read_pages(engine: Engine, page: int, **filters: object) -> list[list[Recorded]]:
    with engine.connect() as conn:
        return list(ledger_pages.read_pages(conn, page=page, **filters))  # type: ignore[arg-type]


@pytest.fixture
def small_statements(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two pages per statement, so that a read of a few events crosses statements."""
    monkeypatch.setattr(ledger_pages, "PAGES_PER_STATEMENT", 2)


def test_pages_hold_what_read_all_returns_in_its_order(engine: Engine, tenant: str, small_statements: None) -> None:
    for i in range(5):
        _append(engine, tenant, f"s{i % 2}", [turn_event(f"turn {i}.{j}") for j in range(i + 1)])
        _append(engine, tenant, "facts", [_fact(f"k{i}")])
    expected = _paged_read_all(engine, tenant_id=tenant)
    assert len(expected) == 20

    pages = _read_pages(engine, 3, tenant_id=tenant)

    assert [len(p) for p in pages] == [3, 3, 3, 3, 3, 3, 2]
    assert [r for p in pages for r in p] == expected
    assert pages[-1][-1].cursor == expected[-1].cursor


def test_pages_keep_the_type_filter(engine: Engine, tenant: str, small_statements: None) -> None:
    _append(engine, tenant, "mixed", [turn_event("a"), turn_event("b")])
    _append(engine, tenant, "facts", [_fact("x"), _fact("y"), _fact("z")])
    _append(engine, tenant, "mixed", [turn_event("c")])

    pages = _read_pages(engine, 2, tenant_id=tenant, types=["fact.extracted"])

    read = [r for p in pages for r in p]
    assert [type(r.event) for r in read] == [FactExtracted] * 3
    assert read == _paged_read_all(engine, tenant_id=tenant, types=["fact.extracted"])


def test_reading_after_a_cursor_starts_after_it(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "s", [turn_event(str(i)) for i in range(6)])
    everything = _paged_read_all(engine, tenant_id=tenant)

    with engine.connect() as conn:
        pages = list(ledger_pages.read_pages(conn, after=everything[2].cursor, page=10, tenant_id=tenant))

    assert [r for p in pages for r in p] == everything[3:]


def test_stopping_early_leaves_the_transaction_usable(engine: Engine, tenant: str) -> None:
    # 4 MB in one statement: more than sockets buffer, so the server is still sending.
    _append(engine, tenant, "s", [turn_event(f"{i} " + "x" * 100_000) for i in range(40)])
    settle(engine, tenant)  # another session's open transaction would hide them from the read

    with engine.connect() as conn:
        pages = ledger_pages.read_pages(conn, page=2, tenant_id=tenant)
        first = next(pages)
        pages.close()  # mid-statement: twenty pages per statement, one read
        again = event_reads.read_all(conn, tenant_id=tenant, limit=2)
        assert conn.execute(sa.select(sa.literal(1))).scalar_one() == 1

    assert again == first


def test_an_open_writer_holds_later_commits_back(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "before", [turn_event("before")])
    settle(engine, tenant)
    with engine.connect() as held:
        holding = held.begin()
        event_store.append(held, tenant, "held", [turn_event("held")], None)  # takes the older transaction id
        _append(engine, tenant, "later", [turn_event("later")])

        while_held = [r.stream_id for p in _read_pages(engine, 10, tenant_id=tenant) for r in p]
        holding.commit()
    settle(engine, tenant)
    after = [r.stream_id for p in _read_pages(engine, 10, tenant_id=tenant) for r in p]

    assert while_held == ["before"]  # "later" committed, but "held" may still sort before it
    assert after == ["before", "held", "later"]


def test_bad_arguments_raise_before_anything_is_read(engine: Engine) -> None:
    with engine.connect() as conn:
        for page in (0, -1, True, 2.5):
            with pytest.raises(InvalidCommand, match="page must be"):
                ledger_pages.read_pages(conn, page=page)  # type: ignore[arg-type]
        with pytest.raises(UnknownEventType):
            ledger_pages.read_pages(conn, types=["no.such.type"])
        with pytest.raises(InvalidCommand):
            ledger_pages.read_pages(conn, tenant_id="")
        assert not conn.in_transaction()


def test_an_empty_ledger_view_yields_no_page(engine: Engine, tenant: str) -> None:
    with engine.connect() as conn:
        assert list(ledger_pages.read_pages(conn, tenant_id=tenant, after=Cursor(0, 0))) == []


def test_a_statement_of_many_pages_walks_the_index_without_sorting(engine: Engine, tenant: str) -> None:
    # With its limit in sight, the planner would sort many pages' rows before sending one.
    with engine.begin() as tx:
        for i in range(20):
            event_store.append(tx, tenant, f"s{i}", [turn_event(str(j)) for j in range(50)], None)
    with engine.connect() as conn:
        conn.execute(sa.text("ANALYZE events"))
        sql, fixed = direct.driver_statement(ledger_pages._statement(False, False), conn.dialect)
        params = {**fixed, "after_tx": "0", "after_position": 0, "limit": 1000 * ledger_pages.PAGES_PER_STATEMENT}
        cursor = conn.connection.driver_connection.cursor()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "Index Scan using ix_events_tx_id_position" in plan, plan
    assert "Sort" not in plan, plan


def test_an_event_that_cannot_be_decoded_raises_and_leaves_the_transaction_usable(
    database: TestDatabase, tenant: str, small_statements: None
) -> None:
    # a database of its own: the row it writes would stop other tests' projectors
    with fresh_database(database, "pages_bad") as engine:
        _undecodable_read(engine, tenant)


def _undecodable_read(engine: Engine, tenant: str) -> None:
    _append(engine, tenant, "s", [turn_event(str(i)) for i in range(3)])
    with engine.begin() as tx:  # a row no append would write: its payload lacks the turn's fields
        tx.execute(
            sa.text(
                "INSERT INTO events (tenant_id, stream_id, stream_version, event_id, event_type, schema_version,"
                " payload, occurred_at) VALUES (:t, 'bad', 1, :e, 'turn.recorded', 2, CAST(:p AS jsonb), now())"
            ),
            {"t": tenant, "e": f"evt-{uuid.uuid4().hex}", "p": '{"x": 1}'},
        )
    _append(engine, tenant, "s", [turn_event("after")])
    settle(engine, tenant)

    with engine.connect() as conn:
        with pytest.raises(EventDecodeError):
            for _ in ledger_pages.read_pages(conn, page=2, tenant_id=tenant):
                pass
        assert conn.execute(sa.select(sa.literal(1))).scalar_one() == 1
