"""Erasing what a person said (``memledger erase --tenant T (--subject S | --all-subjects)``).

One transaction: find what the erasure covers (``erasure_scope``), set those
events' private fields to NULL (the one update the ledger's trigger allows; the
hash chain covers their digest, not them, so it still verifies), forget the
embedding-cache entries of their texts, drop every re-extraction shadow copy
(``reextraction.drop_all``: only the trial extractor could rebuild them without the
erased words; the report names them, to build again), and append a
``SubjectErased`` record.
Then, after the commit, each installed projection catches up past the record
(the runner refolds the tenant there, so no read model keeps anything erased),
and the touched tables are vacuumed.

Erasure locks out the extraction workers while it runs (it takes their locks),
so that no batch extracted from a turn before the erasure is appended after it;
and it takes the tenant's erasure lock, which every writer of the embedding cache
holds (shared) while it checks that its texts' events are not erased and stores
them, so that no vector of a text read before the erasure is cached after it.
Events stored before private fields existed (migration 0006) hold their text in
the chained payload and cannot be erased: they are counted, not hidden.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from memledger.adapters.embedding import Embedder
from memledger.errors import NotFound
from memledger.events.catalogue import SubjectErased
from memledger.events.envelope import Metadata, NewEvent, Recorded
from memledger.projectors import checkpoints, registry, runner
from memledger.projectors.embeddings import projector as embeddings
from memledger.service import erasure_scope, keys, ledger_pages, projections, reextraction, scope_ids, tenant_settings
from memledger.store import db, embedding_cache, event_reads, event_store, lock_keys
from memledger.store.identifiers import check_identifier
from memledger.store.schema import embedding_cache as embedding_cache_table
from memledger.store.schema import events
from memledger.store.vacuum import vacuum

ERASURE_STREAM = "erasures"
WHOLE_TENANT = "*"  # the subject a whole-tenant erasure records
MAX_LISTED_TURNS = 1000  # beyond this, the record counts the turns without listing them
EXTRACTION_CHECKPOINTS = "extract:"  # service.extraction.checkpoint_name's prefix
_PAGE = 5000


class ErasureReport(msgspec.Struct, frozen=True):
    """What an erasure did.

    ``subject`` is as stored (a keyed hash when the tenant hashes its ids);
    ``position`` is the ``SubjectErased`` record's (None when nothing was left to
    erase); ``legacy_events`` were covered but hold their text in the chained
    payload (stored before migration 0006) and could not be erased;
    ``projections`` says, per installed projection, whether it caught up past the
    record (so its rows hold nothing erased); ``dropped_shadows`` are the labels of
    the re-extraction shadow copies dropped (``reextraction.rebuild_into`` builds
    them again).
    """

    tenant_id: str
    subject: str | None
    erased_events: int
    turns: int
    legacy_events: int
    forgotten_vectors: int
    position: int | None
    projections: dict[str, bool]
    vacuumed: list[str]
    dropped_shadows: list[str] = []


def erase(
    engine: Engine,
    tenant_id: str,
    subject: str | None = None,
    *,
    reason: str = "",
    actor: str | None = None,
    refresh: bool = True,
    vacuum_after: bool = True,
    timeout_s: float = 30.0,
    embedder: Embedder | None = None,
) -> ErasureReport:
    """Erase what ``subject`` (a raw user id, mapped as ``scope_ids`` stores it) said in
    ``tenant_id``, or with no subject, every person's words in the tenant.

    ``NotFound`` for a tenant with no events, or a subject with no turns, no context
    served and nothing promoted into their user scope; bad ids raise ``InvalidIdentifier``;
    nothing is written then. Erasing again finds nothing left and writes nothing. ``refresh``
    catches the installed projections up past the record (up to ``timeout_s`` each;
    ``embedder``: the application's); ``vacuum_after`` vacuums the tables the erasure changed.
    """
    tenant_id = check_identifier("tenant_id", tenant_id)
    if subject is not None:
        scope_ids.check_raw("subject", subject)
    ledger_pages.require_tenant(engine, tenant_id)
    stored = None if subject is None else scope_ids.stored_id(engine, tenant_id, "user", subject)
    with db.begin(engine) as tx:
        _lock_out(tx, tenant_id)
        scope = _covered(tx, tenant_id, stored, subject)
        erased = event_store.erase_private(tx, tenant_id, [r.position for r in scope.records])
        report = ErasureReport(tenant_id, stored, erased, 0, len(scope.records) - erased, 0, None, {}, [])
        if not erased:
            return report
        forgotten = _forget_vectors(tx, tenant_id, scope)
        dropped = reextraction.drop_all(tx)
        record = _record(stored, scope, erased, reason)
        position = _append_record(tx, tenant_id, record, actor)
    keys.forget(tenant_id)  # what this process keeps of the tenant for reads is read afresh
    tenant_settings.forget(tenant_id)
    refreshed = catch_up_through(engine, position, timeout_s, embedder) if refresh else {}
    vacuumed = vacuum(engine, _touched_tables(refreshed)) if vacuum_after else []
    return msgspec.structs.replace(
        report,
        turns=record.turns,
        forgotten_vectors=forgotten,
        position=position,
        projections=refreshed,
        vacuumed=vacuumed,
        dropped_shadows=dropped,
    )


def _covered(tx: Connection, tenant_id: str, stored: str | None, subject: str | None) -> erasure_scope.Scope:
    """What the erasure covers: every person's words in the tenant (no subject), or the
    subject's (``stored`` as the tenant keeps it); NotFound for a subject never heard of."""
    recs = _tenant_events(tx, tenant_id)
    if stored is None:
        return erasure_scope.for_tenant(recs)
    scope = erasure_scope.for_subject(recs, stored)
    if not scope.subject_seen:
        raise NotFound(
            f"tenant {tenant_id!r} has no turns or context requests of subject {subject!r},"
            " and no promotion into their user scope"
        )
    return scope


def _append_record(tx: Connection, tenant_id: str, record: SubjectErased, actor: str | None) -> int:
    """Append the erasure's record to the tenant's erasure stream; its position."""
    now = datetime.now(UTC)
    new = NewEvent(event=record, event_id=f"erase:{uuid.uuid4()}", occurred_at=now, metadata=Metadata(actor=actor))
    return event_store.append(tx, tenant_id, ERASURE_STREAM, [new], None).positions[0]


def _lock_out(tx: Connection, tenant_id: str) -> None:
    """One erasure of a tenant at a time, no embedding-cache write of the tenant's
    texts in flight (``embedding_cache.lock_for_erasure``); and no extraction batch.

    An extraction worker holds a session lock keyed on its checkpoint's name for a
    whole batch (read turns, extract, append: ``ExtractionWorker.run_once``);
    taking the same keys waits for the batches running now, and makes workers skip
    their turn until this transaction ends.
    """
    embedding_cache.lock_for_erasure(tx, tenant_id)
    keys = sorted(cp.name for cp in checkpoints.all_checkpoints(tx) if cp.name.startswith(EXTRACTION_CHECKPOINTS))
    for key in keys:
        tx.execute(sa.select(sa.func.pg_advisory_xact_lock(lock_keys.named(key))))


def _tenant_events(tx: Connection, tenant_id: str) -> list[Recorded]:
    out: list[Recorded] = []
    after = 0
    while page := event_reads.read_tenant(tx, tenant_id, after_position=after, limit=_PAGE):
        out.extend(page)
        after = page[-1].position
    return out


def _forget_vectors(tx: Connection, tenant_id: str, scope: erasure_scope.Scope) -> int:
    """Delete the cache entries of the erased texts, except those another event of the
    tenant, or any other tenant's rows, still use (the cache is shared)."""
    erased = {embeddings.text_sha256(text) for text in scope.texts}
    kept = {embeddings.text_sha256(text) for text in scope.kept_texts}
    wanted = erased - kept
    if checkpoints.get(tx, embeddings.NAME) is not None:  # else no tenant has rows
        wanted -= embeddings.hashes_in_use(tx, wanted, other_than=tenant_id)
    return embedding_cache.forget(tx, wanted)


def _record(subject: str | None, scope: erasure_scope.Scope, erased: int, reason: str) -> SubjectErased:
    listed = tuple(scope.turn_ids) if len(scope.turn_ids) <= MAX_LISTED_TURNS else ()
    return SubjectErased(
        subject=subject or WHOLE_TENANT,
        reason=reason,
        turn_ids=listed,
        whole_tenant=subject is None,
        turns=len(scope.turn_ids),
        erased_events=erased,
    )


def catch_up_through(
    engine: Engine, position: int, timeout_s: float, embedder: Embedder | None = None
) -> dict[str, bool]:
    """Catch every installed projection up past ``position`` (up to ``timeout_s`` each;
    the embeddings projection embedding with ``embedder``); whether each got there."""
    with engine.connect() as conn:
        target = event_reads.cursor_at(conn, position)
        installed = {cp.name for cp in checkpoints.all_checkpoints(conn)}
    return {
        projector.name: projections.catch_up_one(engine, projector, target, time.monotonic() + timeout_s)
        for projector in registry.all_projectors(embedder)
        if projector.name in installed
    }


def _touched_tables(refreshed: dict[str, bool]) -> list[sa.Table]:
    tables = [events, embedding_cache_table]
    for projector in registry.all_projectors():
        if projector.name in refreshed:
            tables.extend(runner.projection_tables(projector))
    return tables
