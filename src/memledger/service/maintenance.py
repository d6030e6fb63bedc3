"""Graph maintenance: merging the entities the rules find to be one (``EntitiesMerged``,
with its evidence), undoing a merge (``EntitiesSplit``), and what maintenance has done
and would do (``memledger maintenance run|status``).

A merge changes no row but the entities read model's ``merged_into``: every read
resolves through it, so a rebuild gives the same graph and a split restores both
sides. Edge decay and pruning happen when reading (``projectors.relationships.graph_aging``); there
is nothing for maintenance to write for them.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import msgspec
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import offline
from memledger.errors import InvalidCommand, NotFound
from memledger.events.catalogue import EntitiesMerged, EntitiesSplit, Event
from memledger.events.envelope import Metadata, NewEvent
from memledger.events.keys import item_stream
from memledger.projectors.entities import merges as entity_merges
from memledger.projectors.entities.merges import EntityVectors, MergeInput
from memledger.projectors.relationships import graph_aging
from memledger.service import maintenance_rules
from memledger.service.maintenance_rules import MergeCandidate
from memledger.service.memory import read_model_through
from memledger.store import batch_append, db
from memledger.store.identifiers import check_identifier

MERGED_BY = "maintenance"
MAX_MERGED = 1000  # the most entities one merge command names
MAX_COMPARED = 20_000  # the most entity vectors one run compares pairwise (the embedding rule)


class MaintenanceReport(msgspec.Struct, frozen=True):
    """What a run found and did. ``merges``: the merges proposed (appended unless
    ``dry_run``); ``entities_merged``: how many entities they fold into others;
    ``cosine_rule``: whether the embedding rule ran, and if not why."""

    tenant_id: str
    dry_run: bool
    entities: int
    merges: list[MergeCandidate]
    entities_merged: int
    cosine_rule: str
    seconds: float
    shown: bool


class MaintenanceStatus(msgspec.Struct, frozen=True):
    """Where a tenant's graph stands: merges made, merges the rules would propose now,
    entities pruning hides, and the aging settings reads apply."""

    tenant_id: str
    entities: int
    merged_entities: int
    last_merged_at: datetime | None
    pending_merges: int
    hidden_entities: int
    half_life_days: float
    min_mentions: int
    recent_days: float
    cosine_rule: str


class MergeDone(msgspec.Struct, frozen=True):
    """A merge or split appended, and whether the read model shows it on return."""

    kept_entity_id: str
    merged_entity_ids: list[str]
    shown: bool


def _cosine_note(vectors: EntityVectors) -> str:
    if not vectors.count:
        return "skipped: no entity of the tenant has an embedding (the embeddings projection makes them)"
    if not vectors.ids:
        return f"skipped: {vectors.count} entity vectors, more than the {MAX_COMPARED} a run compares"
    return f"ran over {vectors.count} entity vectors (people left out)"


def _new(event: Event, actor: str) -> NewEvent:
    return NewEvent(
        event=event, event_id=f"maint:{uuid.uuid4()}", occurred_at=datetime.now(UTC), metadata=Metadata(actor=actor)
    )


def _append(engine: Engine, tenant_id: str, events: Sequence[tuple[str, Event]], actor: str) -> None:
    appends = [
        batch_append.StreamAppend(tenant_id, item_stream(kept), [_new(event, actor)], None) for kept, event in events
    ]
    with db.begin(engine) as tx:
        batch_append.append_many(tx, appends)


def _shown(owner: Engine | None, tenant_id: str, kept: str) -> bool:
    return owner is not None and read_model_through(owner, tenant_id, "entities", item_stream(kept))


def find_merges(
    engine: Engine, tenant_id: str, embedding_model: str | None = None
) -> tuple[list[MergeInput], list[MergeCandidate], str]:
    """The tenant's entities, the merges the rules propose among them, and whether the
    embedding rule ran, comparing the entities' vectors of ``embedding_model`` (the
    application's embedder's; the offline model's when None). Nothing written."""
    check_identifier("tenant_id", tenant_id)
    model = embedding_model or offline().model
    with db.reading(engine) as conn:
        rows = entity_merges.merge_inputs(conn, tenant_id)
        vectors = entity_merges.entity_vectors(conn, tenant_id, MAX_COMPARED, model)
    merges = maintenance_rules.find_candidates(rows, vectors if vectors.ids else None)
    return rows, merges, _cosine_note(vectors)


def run(
    engine: Engine,
    tenant_id: str,
    *,
    owner: Engine | None = None,
    dry_run: bool = False,
    actor: str = MERGED_BY,
    embedding_model: str | None = None,
) -> MaintenanceReport:
    """Find the merges the rules propose (``find_merges``) and, unless ``dry_run``, append
    one ``EntitiesMerged`` per group, all in one transaction. With ``owner``, the entities
    read model is brought up to them before returning (``shown``). Running again
    proposes nothing new: merged entities are not proposed twice, nor are entities a
    split kept apart."""
    started = time.perf_counter()
    rows, merges, cosine = find_merges(engine, tenant_id, embedding_model)
    events = [
        (
            m.kept_entity_id,
            EntitiesMerged(
                kept_entity_id=m.kept_entity_id,
                merged_entity_ids=m.merged_entity_ids,
                rule=m.rule,
                score=m.score,
                merged_by=actor,
                evidence=m.evidence[:1000],
            ),
        )
        for m in merges
    ]
    shown = dry_run or not events
    if events and not dry_run:
        _append(engine, tenant_id, events, actor)
        shown = _shown(owner, tenant_id, events[-1][0])
    return MaintenanceReport(
        tenant_id=tenant_id,
        dry_run=dry_run,
        entities=len(rows),
        merges=merges,
        entities_merged=sum(len(m.merged_entity_ids) for m in merges),
        cosine_rule=cosine,
        seconds=round(time.perf_counter() - started, 3),
        shown=shown,
    )


def _entities(engine: Engine, tenant_id: str) -> list[MergeInput]:
    with db.reading(engine) as conn:
        return entity_merges.merge_inputs(conn, tenant_id)


def _by_id(rows: Sequence[MergeInput]) -> dict[str, MergeInput]:
    return {r.entity_id: r for r in rows}


def _check_ids(kept: str, merged: Sequence[str]) -> list[str]:
    check_identifier("kept", kept, max_length=1000)
    wanted = [check_identifier("merged", m, max_length=1000) for m in merged]
    if not wanted:
        raise InvalidCommand("name at least one entity to merge into (or split from) the kept one")
    if len(wanted) > MAX_MERGED:
        raise InvalidCommand(f"one command merges at most {MAX_MERGED} entities, not {len(wanted)}")
    if kept in wanted:
        raise InvalidCommand(f"{kept!r} cannot be merged into itself")
    return sorted(set(wanted))


def merge(
    engine: Engine,
    tenant_id: str,
    kept: str,
    merged: Sequence[str],
    *,
    owner: Engine | None = None,
    actor: str = "operator",
    score: float = 1.0,
) -> MergeDone:
    """Merge ``merged`` into ``kept`` by hand (rule "manual"). Refused, with nothing
    written (InvalidCommand; NotFound for an unknown id): an entity of another type,
    retracted, merged already, or one a split keeps apart from ``kept``."""
    check_identifier("tenant_id", tenant_id)
    wanted = _check_ids(kept, merged)
    if not 0.0 <= score <= 1.0:
        raise InvalidCommand(f"score must be between 0 and 1, not {score}")
    rows = _by_id(_entities(engine, tenant_id))
    target = _known(rows, tenant_id, kept)
    if target.merged_into is not None:
        raise InvalidCommand(f"{kept!r} was merged into {target.merged_into!r}: merge into that one")
    for entity in wanted:
        row = _known(rows, tenant_id, entity)
        problem = _unmergeable(row, target)
        if problem:
            raise InvalidCommand(f"{entity!r} cannot be merged into {kept!r}: {problem}")
    event = EntitiesMerged(
        kept_entity_id=kept, merged_entity_ids=tuple(wanted), rule="manual", score=score, merged_by=actor
    )
    _append(engine, tenant_id, [(kept, event)], actor)
    return MergeDone(kept, wanted, _shown(owner, tenant_id, kept))


def _known(rows: dict[str, MergeInput], tenant_id: str, entity: str) -> MergeInput:
    row = rows.get(entity)
    if row is None:
        raise NotFound(f"tenant {tenant_id!r} has no entity {entity!r}")
    return row


def _unmergeable(row: MergeInput, kept: MergeInput) -> str | None:
    if row.entity_type != kept.entity_type:
        return f"it is a {row.entity_type}, not a {kept.entity_type}"
    if row.merged_into is not None:
        return f"it was merged into {row.merged_into!r} already"
    if "retracted" in (row.status, kept.status):
        return "a retracted entity is not merged"
    if kept.entity_id in row.kept_apart:
        return "a split keeps them apart"
    return None


def split(
    engine: Engine,
    tenant_id: str,
    kept: str,
    merged: Sequence[str] | None = None,
    *,
    owner: Engine | None = None,
    actor: str = "operator",
    reason: str = "",
) -> MergeDone:
    """Undo the merge of ``merged`` (None: every entity merged straight into ``kept``)
    into ``kept``; they are never merged with it again by the rules. Refused with
    nothing written (InvalidCommand) when one of them is not merged into ``kept``."""
    check_identifier("tenant_id", tenant_id)
    rows = _by_id(_entities(engine, tenant_id))
    _known(rows, tenant_id, kept)
    members = sorted(r.entity_id for r in rows.values() if r.merged_into == kept)
    wanted = members if merged is None else _check_ids(kept, merged)
    if not wanted:
        raise InvalidCommand(f"no entity is merged into {kept!r}")
    for entity in wanted:
        if _known(rows, tenant_id, entity).merged_into != kept:
            raise InvalidCommand(f"{entity!r} is not merged into {kept!r}")
    event = EntitiesSplit(kept_entity_id=kept, merged_entity_ids=tuple(wanted), split_by=actor, reason=reason[:1000])
    _append(engine, tenant_id, [(kept, event)], actor)
    return MergeDone(kept, wanted, _shown(owner, tenant_id, kept))


def status(
    engine: Engine,
    tenant_id: str,
    *,
    aging: graph_aging.Aging = graph_aging.DEFAULT_AGING,
    embedding_model: str | None = None,
) -> MaintenanceStatus:
    """Merges made and pending (``find_merges``), entities hidden, and ``aging``, the
    aging reads apply (nothing written)."""
    rows, pending, cosine = find_merges(engine, tenant_id, embedding_model)
    with db.reading(engine) as conn:
        summary = entity_merges.merge_summary(conn, tenant_id)
        hidden = graph_aging.hidden_count(conn, tenant_id, aging)
    return MaintenanceStatus(
        tenant_id=tenant_id,
        entities=len(rows),
        merged_entities=summary.merged,
        last_merged_at=summary.last_merged_at,
        pending_merges=len(pending),
        hidden_entities=hidden,
        half_life_days=aging.half_life_days,
        min_mentions=aging.min_mentions,
        recent_days=aging.recent_days,
        cosine_rule=cosine,
    )
