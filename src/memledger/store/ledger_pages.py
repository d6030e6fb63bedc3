"""Reading the whole ledger page after page from few statements: ``read_all``'s
pages, in its order and gap-safe alike, streamed, so that the server produces the
next rows while the caller decodes and handles the ones it has (``recorded_rows.stream``;
what it reads ahead is at most the rest of the statement).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.errors import InvalidCommand
from memledger.events.envelope import START, Cursor, Recorded
from memledger.store import direct, event_reads, recorded_rows
from memledger.store.identifiers import check_identifier
from memledger.store.schema import events

# Pages per statement: a statement reads up to this many pages, and a caller that
# stops early waits for the rest of its statement's rows (drained, not cancelled,
# so that its transaction stays usable).
PAGES_PER_STATEMENT = 20


def read_pages(
    conn: Connection,
    *,
    after: Cursor = START,
    page: int = 1000,
    tenant_id: str | None = None,
    types: Iterable[str] | None = None,
) -> Iterator[list[Recorded]]:
    """The events ``read_all`` would return from ``after`` on, page after page until
    none is visible, in pages of up to ``page`` events (the last may be shorter).

    Each statement is ``read_all``'s with a limit of ``PAGES_PER_STATEMENT`` pages,
    so the same visibility rule holds: no event is returned while one that sorts
    before it may still commit. Runs in ``conn``'s transaction (begun if none is).
    Bad arguments raise here, before any page is read.

    For reading through: while the caller holds a page, its statement stays open
    (and its snapshot with it), so long work per page belongs to ``read_all``'s
    short reads instead. ``conn`` is the statement's until the pages end or the
    iterator is closed.
    """
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise InvalidCommand(f"page must be an int of at least 1, not {page!r}")
    params: dict[str, Any] = {
        "after_tx": str(after.tx_id),
        "after_position": after.position,
        "limit": page * PAGES_PER_STATEMENT,
    }
    if tenant_id is not None:
        params["tenant_id"] = check_identifier("tenant_id", tenant_id)
    if types is not None:
        params["types"] = event_reads.checked_types(types)
    sql, fixed = direct.driver_statement(_statement(tenant_id is not None, types is not None), conn.dialect)
    return _pages(conn, sql, {**fixed, **params}, page)


@functools.cache
def _statement(by_tenant: bool, by_types: bool) -> sa.Select[Any]:
    """``read_all``'s statement, its types as one array parameter (the driver runs it).

    The limit is a subquery: the planner, unable to see its value, plans for a tenth
    of the matching rows, a walk of the (tx_id, position) index that sends rows in
    order as it finds them. Seeing a limit of many pages, it would rather sort them
    (a bitmap scan, sorted on disk), sending nothing until all are sorted.
    """
    limit = sa.select(sa.bindparam("limit", type_=sa.Integer)).scalar_subquery()
    stmt = event_reads.read_all_statement(by_tenant, False).limit(limit)
    if by_types:
        stmt = stmt.where(events.c.event_type == sa.any_(sa.bindparam("types", type_=sa.ARRAY(sa.Text))))
    return stmt


def _pages(conn: Connection, sql: str, params: dict[str, Any], page: int) -> Iterator[list[Recorded]]:
    if not conn.in_transaction():
        conn.begin()  # as a first statement through SQLAlchemy would: it then commits or rolls back
    driver: psycopg.Connection[Any] = conn.connection.driver_connection  # type: ignore[assignment]
    while True:
        read = 0
        held: list[Recorded] = []
        slices = recorded_rows.stream(driver, sql, params, page)
        try:
            for part in slices:
                read += len(part)
                held.extend(part)
                while len(held) >= page:
                    done, held = held[:page], held[page:]
                    params["after_tx"], params["after_position"] = str(done[-1].tx_id), done[-1].position
                    yield done
            if held:
                params["after_tx"], params["after_position"] = str(held[-1].tx_id), held[-1].position
                yield held
        finally:  # stopped or failed mid-statement: end it now, not when the generator is collected
            slices.close()
        if read < params["limit"]:
            return
