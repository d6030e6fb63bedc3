"""Queries on the merges the entities read model holds: which entity another reads as,
which read as one, and what a merge rule needs to know of every entity."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.projectors import bulk
from memledger.projectors.embeddings.projector import embeddings
from memledger.projectors.entities.projector import entities
from memledger.projectors.relationships import graph_aging

# Merges form trees (an entity may be merged into one that others were merged into
# before it was merged itself); this bounds how far a read follows them.
MAX_CHAIN = 16


class MergeInput(msgspec.Struct, frozen=True):
    """What the merge rules read of one entity."""

    entity_id: str
    entity_type: str
    name: str
    aliases: list[str]
    mention_count: int
    first_position: int
    status: str
    merged_into: str | None
    kept_apart: list[str]


class MergeSummary(msgspec.Struct, frozen=True):
    """How many of a tenant's entities read as another, and when the last was merged."""

    merged: int
    last_merged_at: datetime | None


_INPUTS = bulk.as_json(
    sa.select(*(entities.c[f] for f in MergeInput.__struct_fields__)).where(
        entities.c.tenant_id == sa.bindparam("tenant_id", type_=sa.Text)
    )
)


def merge_inputs(conn: Connection, tenant_id: str) -> list[MergeInput]:
    """Every entity of the tenant (any status), for the merge rules: one round trip,
    decoded without per-column processing. Reads ``conn``'s snapshot."""
    return bulk.fetch(conn, _INPUTS, MergeInput, {"tenant_id": tenant_id})


def _parents(conn: Connection, tenant_id: str, ids: Iterable[str]) -> dict[str, str]:
    e = entities.c
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    stmt = sa.select(e.entity_id, e.merged_into).where(
        e.tenant_id == tenant_id, e.entity_id.in_(wanted), e.merged_into.is_not(None)
    )
    return {str(a): str(b) for a, b in conn.execute(stmt).all()}


def roots(conn: Connection, tenant_id: str, ids: Iterable[str]) -> dict[str, str]:
    """For each of ``ids`` that was merged, the entity it reads as (merges followed to
    the end); ids absent read as themselves. Reads ``conn``'s snapshot."""
    wanted = set(ids)
    parent: dict[str, str] = {}
    ask = set(wanted)
    for _ in range(MAX_CHAIN):
        found = _parents(conn, tenant_id, ask - parent.keys())
        if not found:
            break
        parent |= found
        ask = set(found.values())
    return {i: root for i in wanted if (root := follow(parent, i)) != i}


def follow(parent: dict[str, str], entity: str) -> str:
    """The end of ``entity``'s merges in a child-to-parent map. Pure."""
    for _ in range(MAX_CHAIN):
        if entity not in parent:
            break
        entity = parent[entity]
    return entity


def members(conn: Connection, tenant_id: str, kept_ids: Iterable[str]) -> dict[str, list[str]]:
    """For each of ``kept_ids``, the entities that read as it (merges followed down),
    sorted; kept ids without any are absent. Reads ``conn``'s snapshot."""
    e = entities.c
    out: dict[str, list[str]] = {}
    frontier = {k: k for k in set(kept_ids)}  # entity -> the kept id it belongs to
    for _ in range(MAX_CHAIN):
        if not frontier:
            break
        stmt = sa.select(e.entity_id, e.merged_into).where(
            e.tenant_id == tenant_id, e.merged_into.in_(sorted(frontier))
        )
        found = {str(child): frontier[str(parent)] for child, parent in conn.execute(stmt).all()}
        for child, kept in found.items():
            out.setdefault(kept, []).append(child)
        frontier = found
    return {kept: sorted(ids) for kept, ids in out.items()}


def has_merges(conn: Connection, tenant_id: str) -> bool:
    """Whether any entity of the tenant reads as another (the partial index answers)."""
    e = entities.c
    stmt = sa.select(sa.literal(1)).where(e.tenant_id == tenant_id, e.merged_into.is_not(None)).limit(1)
    return conn.execute(stmt).first() is not None


def any_merged(tenant_id: sa.ColumnElement[str]) -> sa.Exists:
    """``has_merges`` as a clause, for a statement that asks it on its own round trip
    (uncorrelated: PostgreSQL answers it once, from the partial index)."""
    e = entities.c
    return sa.exists().where(e.tenant_id == tenant_id, e.merged_into.is_not(None))


def merge_summary(conn: Connection, tenant_id: str) -> MergeSummary:
    """How many of the tenant's entities read as another, and the last merge's time."""
    e = entities.c
    stmt = sa.select(sa.func.count(), sa.func.max(e.merged_at)).where(
        e.tenant_id == tenant_id, e.merged_into.is_not(None)
    )
    count, last = conn.execute(stmt).one()
    return MergeSummary(merged=int(count), last_merged_at=last)


def tenants(conn: Connection) -> list[str]:
    """Every tenant that has an entity, in order (the owner's connection: row-level
    security would show one tenant's only)."""
    e = entities.c
    return [str(t) for t in conn.execute(sa.select(e.tenant_id).distinct().order_by(e.tenant_id)).scalars()]


def resolve_ends(conn: Connection, tenant_id: str, rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Edge rows (``graph_queries``' columns: source id at 1, relation at 4, target id at
    5, symmetric at 8) with each end read as the entity it was merged into; of rows that
    become one (an edge said of two names of one entity) the first only."""
    root = roots(conn, tenant_id, {row[1] for row in rows} | {row[5] for row in rows})
    out: list[list[Any]] = []
    said: set[tuple[str, str, str]] = set()
    for row in rows:
        resolved = list(row)
        resolved[1], resolved[5] = root.get(row[1], row[1]), root.get(row[5], row[5])
        ends = sorted((resolved[1], resolved[5])) if row[8] else [resolved[1], resolved[5]]
        if (ends[0], row[4], ends[1]) not in said:
            said.add((ends[0], row[4], ends[1]))
            out.append(resolved)
    return out


@dataclass(frozen=True)
class EntityVectors:
    """How many entity vectors the tenant has, and (when there are at most as many as
    asked for) their ids and a matrix of them, a row each in the same order."""

    count: int
    ids: list[str]
    matrix: npt.NDArray[np.float32]


def entity_vectors(conn: Connection, tenant_id: str, limit: int, model: str) -> EntityVectors:
    """The vectors of ``model`` (the tenant's; a fallback's rows wait for the backfill)
    the embeddings read model holds for the tenant's entities, if there are at most
    ``limit``: what the cosine merge rule compares. Reads ``conn``'s snapshot."""
    v = embeddings.c
    where = (v.tenant_id == tenant_id, v.item_kind == "entity", v.model == model)
    count = int(conn.execute(sa.select(sa.func.count()).where(*where)).scalar_one())
    if not count or count > limit:
        return EntityVectors(count, [], np.zeros((0, 0), dtype=np.float32))
    rows = conn.execute(sa.select(v.item_id, v.embedding).where(*where).order_by(v.item_id)).all()
    matrix = np.vstack([np.asarray(vector, dtype=np.float32) for _, vector in rows])
    return EntityVectors(count, [str(item) for item, _ in rows], matrix)


def shown_as(conn: Connection, tenant_id: str, entity_ids: Iterable[str], aging: graph_aging.Aging) -> dict[str, str]:
    """For each of ``entity_ids``, the entity it reads as (itself unless merged into
    another), unless pruning hides that one; ids of no entity, or hidden, are absent."""
    wanted = set(entity_ids)
    if not wanted:
        return {}
    root = roots(conn, tenant_id, wanted)
    tenant = sa.literal(tenant_id, sa.Text)
    stmt = sa.select(entities.c.entity_id).where(
        entities.c.tenant_id == tenant,
        entities.c.entity_id.in_(sorted({root.get(i, i) for i in wanted})),
        sa.not_(graph_aging.hidden(tenant, aging)),
    )
    shown = set(conn.execute(stmt).scalars())
    return {i: root.get(i, i) for i in wanted if root.get(i, i) in shown}
