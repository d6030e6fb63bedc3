"""How the graph ages when read: an edge's weight decays from its last reinforcement,
and an entity rarely mentioned, with nothing recent around it, is hidden (never
deleted). Nothing here writes: the read models hold event times, and a reader
supplies the reading time, so a rebuild reads the same and an as-of read shows the
weights of its moment."""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.projectors.entities.projector import entities
from memledger.projectors.relationships.projector import relationships

DAY_S = 86_400.0


class Aging(msgspec.Struct, frozen=True):
    """The settings of read-time aging (``config.Settings``: edge_half_life_days,
    prune_min_mentions, prune_recent_days). ``min_mentions`` 0: nothing is hidden."""

    half_life_days: float = 90.0
    min_mentions: int = 2
    recent_days: float = 90.0


# The settings' defaults: what a read given no aging applies.
DEFAULT_AGING = Aging()


def edge_weight(confidence: float, last_reinforced: datetime, at: datetime, half_life_days: float) -> float:
    """``confidence`` * 0.5^(age / half-life), the age running from the edge's last
    reinforcement to the reading time ``at`` (an edge from the future of ``at`` has not
    decayed). Pure."""
    age_days = max(0.0, (at - last_reinforced).total_seconds() / DAY_S)
    return round(confidence * 0.5 ** (age_days / half_life_days), 6)  # type: ignore[no-any-return]


def is_pruned(
    mention_count: int, last_seen_at: datetime, latest_edge: datetime | None, since: datetime, aging: Aging
) -> bool:
    """Whether an entity (neither merged nor kept by a merge) is hidden: mentioned fewer
    than ``min_mentions`` times, last seen before ``since``, and no active edge touching
    it reinforced since then (``latest_edge``: its newest). Pure; ``hidden`` in SQL."""
    if mention_count >= aging.min_mentions or last_seen_at >= since:
        return False
    return latest_edge is None or latest_edge < since


def window_start(latest_sighting: datetime, aging: Aging) -> datetime:
    """Where the recent window starts: ``recent_days`` before the tenant's latest
    sighting of any entity, so an idle tenant's graph is not hidden by the clock."""
    return latest_sighting - timedelta(days=aging.recent_days)


def hidden(tenant_id: sa.ColumnElement[str], aging: Aging) -> sa.ColumnElement[bool]:
    """SQL: whether a row of the entities table of tenant ``tenant_id`` (a value or a
    bound parameter: the window is worked out once per statement) is hidden by pruning
    (``is_pruned``). An entity others were merged into is never
    hidden (its group was mentioned at least twice), nor is one merged itself (it
    reads as its kept entity)."""
    if aging.min_mentions <= 0:
        return sa.false()
    e, r = entities.c, relationships.c
    member, newest = entities.alias("member"), entities.alias("newest")
    latest = sa.select(sa.func.max(newest.c.last_seen_at)).where(newest.c.tenant_id == tenant_id).scalar_subquery()
    start = latest - sa.literal(timedelta(days=aging.recent_days))
    recent_edge = sa.exists().where(
        r.tenant_id == e.tenant_id,
        r.status == "active",
        sa.or_(r.source_entity_id == e.entity_id, r.target_entity_id == e.entity_id),
        r.last_seen_at >= start,
    )
    has_members = sa.exists().where(member.c.tenant_id == e.tenant_id, member.c.merged_into == e.entity_id)
    return sa.and_(
        e.merged_into.is_(None),
        e.mention_count < aging.min_mentions,
        e.last_seen_at < start,
        sa.not_(recent_edge),
        sa.not_(has_members),
    )


def hidden_count(conn: Connection, tenant_id: str, aging: Aging) -> int:
    """How many of the tenant's active entities pruning hides (auditors still see
    them: provenance, statistics). Reads ``conn``'s snapshot."""
    e = entities.c
    tenant = sa.literal(tenant_id, sa.Text)
    stmt = sa.select(sa.func.count()).where(e.tenant_id == tenant, e.status == "active", hidden(tenant, aging))
    return int(conn.execute(stmt).scalar_one())
