"""Re-extraction without losing history: try another extractor in shadow read models.

``rebuild_into`` replays the ledger's turns through an extractor (or version)
into shadow copies of the facts, entities and relationships projections, beside
the live ones; ``diff`` says what would be added, lost or changed. Nothing is
appended and nothing live is touched: switching is a separate, explicit step
that appends events (the new extractor's worker runs from the start of the
ledger); the ledger is never rewritten.

In the shadow, events that some extractor produced are replaced by what the new
extractor makes of the same turns; every other event (promotions, retractions
and resolutions made by people) is kept, unless erased.

Erasure: a shadow copy is made of the turns' words, through the trial extractor,
and only that extractor could make it again without the erased ones; erasure does
not have it. So an erasure drops every shadow copy (``drop_all``, in the erasure's
transaction) and names them in its report: the operator builds the trial again,
from a ledger without the erased words, and compares like with like (``diff`` of
a dropped shadow is ``NotFound``). A re-extraction that an erasure overtakes fails
(``NotFound``), its copies gone: erasure and the creation of copies take one lock,
and every batch folded into a copy holds it shared after checking the copy still
exists, so a batch read before an erasure is never folded after it. Erased events
are never replayed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidCommand, NotFound
from memledger.events.envelope import Cursor, Recorded
from memledger.extraction.directives import with_directives
from memledger.extraction.policy import Counts, Policy, conversation_of, to_events
from memledger.extraction.protocol import Extractor, TurnExtraction, extract_per_tenant
from memledger.projectors import registry, runner
from memledger.projectors.base import Projector, live_schema
from memledger.projectors.rebuild import _drop_schema as drop_schema
from memledger.projectors.summaries import SUMMARIES, summarise
from memledger.service import tenant_settings
from memledger.service.extraction import TURN_TAG
from memledger.service.extraction_inputs import project_names, to_turn_text
from memledger.store import db, event_reads, lock_keys

SHADOWED = ("facts", "entities", "relationships")
_LABEL = re.compile(r"^[a-z0-9_]{1,40}$")
_namespaces = sa.table("pg_namespace", sa.column("nspname"))


def shadow_schema(name: str, label: str) -> str:
    """The schema of projection ``name``'s shadow copy ``label``."""
    if not _LABEL.match(label):
        raise InvalidCommand(f"shadow label {label!r} must be 1-40 characters of a-z, 0-9 and _")
    return f"{live_schema(name)}_shadow_{label}"


def _projectors() -> list[Projector]:
    return [registry.by_name(name) for name in SHADOWED]


def rebuild_into(
    engine: Engine,
    extractor: Extractor,
    label: str,
    *,
    batch_turns: int = 50,
    max_entities: int = 20,
    max_relationships: int = 50,
    max_facts: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Build the shadow copies ``label`` with ``extractor``; return turns extracted."""
    projectors = _projectors()
    policy = Policy(max_entities, max_relationships, max_facts=max_facts)
    with db.begin(engine) as tx:
        _lock_shadows(tx, shared=False)
        for p in projectors:
            drop_schema(tx, shadow_schema(p.name, label))
            runner.create_tables(tx, p, shadow_schema(p.name, label), indexes=False)
    counts: dict[tuple[str, str], Counts] = {}
    after, turns_done = Cursor(0, 0), 0
    while True:
        with engine.connect() as conn:
            page = event_reads.read_all(conn, after=after, limit=batch_turns * 5)
        if not page:
            break
        after = page[-1].cursor
        replayed = _replay(engine, extractor, page, counts, policy)
        turns_done += sum(1 for rec in page if rec.event.__struct_config__.tag == TURN_TAG)
        with db.begin(engine) as tx:
            _check_not_dropped(tx, label)
            for p in projectors:
                mapped = tx.execution_options(schema_translate_map={live_schema(p.name): shadow_schema(p.name, label)})
                batch = [rec for rec in replayed if rec.event.__struct_config__.tag in p.handles]
                if batch:
                    p.apply(mapped, batch)
        if progress is not None:
            progress(turns_done)
    return turns_done


def _lock_shadows(tx: Connection, *, shared: bool) -> None:
    """The lock of the shadow copies, until ``tx`` ends: erasure (dropping them) and
    ``rebuild_into`` (creating them) take it; each batch folded into a copy, shared."""
    key = lock_keys.named(lock_keys.REEXTRACTION_SHADOWS)
    lock = sa.func.pg_advisory_xact_lock_shared(key) if shared else sa.func.pg_advisory_xact_lock(key)
    tx.execute(sa.select(lock))


def _check_not_dropped(tx: Connection, label: str) -> None:
    """Before folding a batch into the copies ``label``: hold erasure off, and refuse
    (``NotFound``) if one dropped the copies since the batch was read."""
    _lock_shadows(tx, shared=True)
    if not _exists(tx, label):
        raise NotFound(
            f"shadow {label!r} was dropped while it was built (an erasure drops every shadow); build it again"
        )


def _exists(conn: Connection, label: str) -> bool:
    schemas = [shadow_schema(name, label) for name in SHADOWED]
    stmt = sa.select(sa.func.count()).select_from(_namespaces).where(_namespaces.c.nspname.in_(schemas))
    return int(conn.execute(stmt).scalar_one()) == len(schemas)


def drop_all(tx: Connection) -> list[str]:
    """Erasure: drop every shadow copy, in the caller's transaction; returns their labels.

    Takes the shadows' lock: a re-extraction creating copies waits, and one folding a
    batch finishes it first (then finds its copies gone, and fails).
    """
    _lock_shadows(tx, shared=False)
    labels: set[str] = set()
    for name in SHADOWED:
        prefix = f"{live_schema(name)}_shadow_"  # as shadow_schema names them
        found = tx.execute(
            sa.select(_namespaces.c.nspname).where(_namespaces.c.nspname.startswith(prefix, autoescape=True))
        )
        labels |= {str(schema)[len(prefix) :] for schema in found.scalars()}
    labels = {label for label in labels if _LABEL.match(label)}
    for label in sorted(labels):
        for name in SHADOWED:
            drop_schema(tx, shadow_schema(name, label))
    return sorted(labels)


def _replay(
    engine: Engine,
    extractor: Extractor,
    page: Sequence[Recorded],
    counts: dict[tuple[str, str], Counts],
    policy: Policy,
) -> list[Recorded]:
    """The page with extractor output replaced by ``extractor``'s, in ledger order."""
    with engine.connect() as conn:
        turns = project_names(conn, [to_turn_text(rec) for rec in page if _extractable(rec)])
        settings = {t: tenant_settings.load(conn, t) for t in {t.tenant_id for t in turns}}
    found = extract_per_tenant(extractor, turns) if turns else {}
    out: list[Recorded] = []
    for rec in page:
        if rec.metadata.extractor is not None:
            continue  # an extractor's output: replaced by the new extractor's
        if rec.erased:
            continue  # as the live projections, which skip it (its words read "[erased]")
        out.append(rec)
        if not _extractable(rec):
            continue
        turn = to_turn_text(rec)
        extraction = found.get((turn.tenant_id, turn.turn_id), TurnExtraction())
        if turn.role == "user":
            extraction = with_directives(extraction, turn.text)
        count = counts.setdefault((turn.tenant_id, conversation_of(turn)), Counts())
        tenant = settings[turn.tenant_id]
        turn_policy = dataclasses.replace(
            policy, auto_promote=tenant.auto_promote, broad_scope_writes=tenant.broad_scope_writes
        )
        for stream, new in to_events(
            turn, extraction, count, turn_policy, extractor=extractor.name, version=extractor.version
        ):
            out.append(
                Recorded(
                    tenant_id=rec.tenant_id,
                    position=rec.position,
                    tx_id=rec.tx_id,
                    stream_id=stream,
                    stream_version=0,
                    event_id=new.event_id,
                    occurred_at=new.occurred_at,
                    recorded_at=rec.recorded_at,
                    metadata=new.metadata,
                    event=new.event,
                )
            )
    return out


class Change(msgspec.Struct, frozen=True):
    """One item that differs between the live and the shadow read models."""

    kind: str
    change: str  # added | lost | changed
    tenant_id: str
    item_id: str
    live: str | None
    shadow: str | None


def diff(engine: Engine, label: str) -> list[Change]:
    """What switching to the shadow ``label`` would add, lose or change; ``NotFound``
    if there is no such shadow (never built, dropped, or dropped by an erasure)."""
    with engine.connect() as conn:
        if not _exists(conn, label):
            raise NotFound(
                f"no shadow {label!r} (an erasure drops every shadow); build it with"
                f" memledger extract --extractor E --rebuild-into {label}"
            )
    changes: list[Change] = []
    for kind, name, _ in SUMMARIES:
        # Two connections: execution_options changes a connection in place.
        with engine.connect() as conn:
            live = summarise(conn, kind)
        shadow_map = {live_schema(name): shadow_schema(name, label)}
        with engine.connect().execution_options(schema_translate_map=shadow_map) as mapped:
            shadow = summarise(mapped, kind)
        for key in sorted(live.keys() | shadow.keys()):
            before, after = live.get(key), shadow.get(key)
            if before == after:
                continue
            change = "added" if before is None else "lost" if after is None else "changed"
            changes.append(Change(kind, change, key[0], key[1], before, after))
    return changes


def drop(engine: Engine, label: str) -> bool:
    """Remove the shadow copies ``label``; False if there were none (not even a
    partial copy, as a failed build leaves)."""
    schemas = [shadow_schema(name, label) for name in SHADOWED]
    with db.begin(engine) as tx:
        stmt = sa.select(_namespaces.c.nspname).where(_namespaces.c.nspname.in_(schemas))
        found = list(tx.execute(stmt).scalars())
        for schema in found:
            drop_schema(tx, str(schema))
    return bool(found)


def _extractable(rec: Recorded) -> bool:
    """A turn, not erased (an erased turn reads "[erased]": the worker passes it over)."""
    return rec.event.__struct_config__.tag == TURN_TAG and not rec.erased
