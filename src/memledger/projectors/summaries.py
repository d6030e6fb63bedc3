"""One line per item of the facts, entities and relationships read models, for comparing
two copies (live and shadow) item by item."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.projectors.entities.projector import entities
from memledger.projectors.facts.projector import facts
from memledger.projectors.relationships.projector import relationships

# (item kind, projection name, key columns and described columns)
SUMMARIES: tuple[tuple[str, str, tuple[sa.Column[object], ...]], ...] = (
    ("fact", "facts", (facts.c.tenant_id, facts.c.memory_id, facts.c.statement, facts.c.status)),
    ("entity", "entities", (entities.c.tenant_id, entities.c.entity_id, entities.c.name, entities.c.status)),
    (
        "relationship",
        "relationships",
        (relationships.c.tenant_id, relationships.c.relationship_key, relationships.c.status),
    ),
)


def summarise(conn: Connection, kind: str) -> dict[tuple[str, str], str]:
    """(tenant, item id) -> "described | columns" for every item of ``kind``."""
    columns = next(cols for k, _, cols in SUMMARIES if k == kind)
    rows = conn.execute(sa.select(*columns)).all()
    return {(str(r[0]), str(r[1])): " | ".join(str(v) for v in r[2:]) for r in rows}


def status(conn: Connection, kind: str, tenant_id: str, item_id: str) -> str | None:
    """The status of one item of ``kind`` ("active", "retracted", ...), or None if the
    read model lacks it. Each summary's columns start with the tenant and the item id
    and end with the status."""
    columns = next(cols for k, _, cols in SUMMARIES if k == kind)
    stmt = sa.select(columns[-1]).where(columns[0] == tenant_id, columns[1] == item_id)
    found = conn.execute(stmt).scalar()
    return None if found is None else str(found)
