"""The extraction_counters table: limits and refusals, per conversation and extractor."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from memledger.store.schema import extraction_counters as t

COUNT_COLUMNS = (
    "entities",
    "relationships",
    "skipped_entities",
    "skipped_relationships",
    "dropped_low_confidence",
    "refused_secrets",
)


def load(
    conn: Connection, extractor: str, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], dict[str, int]]:
    """Counts per (tenant, conversation) for ``extractor``; missing keys are absent."""
    wanted = list(keys)
    if not wanted:
        return {}
    stmt = sa.select(t.c.tenant_id, t.c.conversation, *(t.c[c] for c in COUNT_COLUMNS)).where(
        t.c.extractor == extractor, sa.tuple_(t.c.tenant_id, t.c.conversation).in_(wanted)
    )
    return {(r[0], r[1]): dict(zip(COUNT_COLUMNS, r[2:], strict=True)) for r in conn.execute(stmt).all()}


def save(tx: Connection, extractor: str, rows: dict[tuple[str, str], dict[str, int]]) -> None:
    """Write the new totals of each (tenant, conversation), in one statement (rows in
    key order, so two writers lock them in the same order)."""
    if not rows:
        return
    values = [
        {"tenant_id": tenant_id, "extractor": extractor, "conversation": conversation}
        | {c: counts.get(c, 0) for c in COUNT_COLUMNS}
        for (tenant_id, conversation), counts in sorted(rows.items())
    ]
    stmt = postgresql.insert(t).values(values)
    tx.execute(
        stmt.on_conflict_do_update(
            index_elements=["tenant_id", "extractor", "conversation"],
            set_={**{c: stmt.excluded[c] for c in COUNT_COLUMNS}, "updated_at": sa.func.now()},
        )
    )


def totals(conn: Connection, tenant_id: str | None = None) -> dict[str, int]:
    """Sums of every count, for status reports."""
    stmt = sa.select(*(sa.func.coalesce(sa.func.sum(t.c[c]), 0) for c in COUNT_COLUMNS))
    if tenant_id is not None:
        stmt = stmt.where(t.c.tenant_id == tenant_id)
    row = conn.execute(stmt).one()
    return dict(zip(COUNT_COLUMNS, (int(v) for v in row), strict=True))
