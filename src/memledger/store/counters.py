"""The extraction_counters table: limits and refusals, per conversation and extractor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from memledger.store.schema import extraction_counters as t

COUNT_COLUMNS = (
    "entities",
    "relationships",
    "facts",
    "skipped_entities",
    "skipped_relationships",
    "skipped_facts",
    "dropped_low_confidence",
    "refused_secrets",
)


# Statements built once, their rows sent as one JSON text parameter (as the event
# store sends its batches): building and compiling a statement per call cost more
# CPU than the whole round trip.
def _recordset(*columns: sa.ColumnClause[Any]) -> sa.TableValuedAlias:
    return (
        sa.func.jsonb_to_recordset(sa.cast(sa.bindparam("rows", type_=sa.Text), JSONB))
        .table_valued(*columns)
        .render_derived(name="given", with_types=True)
    )


_wanted = _recordset(sa.column("tenant_id", sa.Text), sa.column("conversation", sa.Text))
_LOAD = (
    sa.select(t.c.tenant_id, t.c.conversation, *(t.c[c] for c in COUNT_COLUMNS))
    .select_from(
        t.join(_wanted, sa.and_(t.c.tenant_id == _wanted.c.tenant_id, t.c.conversation == _wanted.c.conversation))
    )
    .where(t.c.extractor == sa.bindparam("extractor", type_=sa.Text))
)
_given = _recordset(
    sa.column("tenant_id", sa.Text),
    sa.column("conversation", sa.Text),
    *(sa.column(c, sa.Integer) for c in COUNT_COLUMNS),
)
_upsert = postgresql.insert(t).from_select(
    ["tenant_id", "extractor", "conversation", *COUNT_COLUMNS],
    sa.select(
        _given.c.tenant_id,
        sa.bindparam("extractor", type_=sa.Text),
        _given.c.conversation,
        *(_given.c[c] for c in COUNT_COLUMNS),
    ),
)
_SAVE = _upsert.on_conflict_do_update(
    index_elements=["tenant_id", "extractor", "conversation"],
    set_={**{c: _upsert.excluded[c] for c in COUNT_COLUMNS}, "updated_at": sa.func.now()},
)
_encoder = msgspec.json.Encoder()


def load(conn: Connection, extractor: str, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, int]]:
    """Counts per (tenant, conversation) for ``extractor``; missing keys are absent."""
    wanted = [{"tenant_id": tenant, "conversation": conversation} for tenant, conversation in keys]
    if not wanted:
        return {}
    rows = conn.execute(_LOAD, {"rows": _encoder.encode(wanted).decode(), "extractor": extractor}).all()
    return {(r[0], r[1]): dict(zip(COUNT_COLUMNS, r[2:], strict=True)) for r in rows}


def save(tx: Connection, extractor: str, rows: dict[tuple[str, str], dict[str, int]]) -> None:
    """Write the new totals of each (tenant, conversation), in one statement (rows in
    key order, so two writers lock them in the same order). A count left out is 0."""
    if not rows:
        return
    given = [
        {"tenant_id": tenant_id, "conversation": conversation} | {c: counts.get(c, 0) for c in COUNT_COLUMNS}
        for (tenant_id, conversation), counts in sorted(rows.items())
    ]
    tx.execute(_SAVE, {"rows": _encoder.encode(given).decode(), "extractor": extractor})


def totals(conn: Connection, tenant_id: str | None = None) -> dict[str, int]:
    """Sums of every count, for status reports."""
    stmt = sa.select(*(sa.func.coalesce(sa.func.sum(t.c[c]), 0) for c in COUNT_COLUMNS))
    if tenant_id is not None:
        stmt = stmt.where(t.c.tenant_id == tenant_id)
    row = conn.execute(stmt).one()
    return dict(zip(COUNT_COLUMNS, (int(v) for v in row), strict=True))
