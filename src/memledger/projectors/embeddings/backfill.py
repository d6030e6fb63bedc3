"""The backfill: rows a fallback model of the embedding chain wrote, re-embedded with
the first model (the tenants') once it answers again, so search finds them.

A round reads up to ``limit`` rows under another model, finds each one's text in the
tenant's events (the text whose hash the row holds, from an event not erased),
embeds the texts the cache has no vector of the first model for with that model
alone (the chain's breaker makes this fail fast while it cools down), caches them
as the projector does (the erasure held off, the events re-read), then moves each
row still as it was read to the first model's cached vector. The row is then the
one the projector, or a rebuild, writes for that text now: the cache holds the first
model's vector. The move holds the projection's checkpoint, as a batch does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from memledger.adapters.embedding_chain import ChainEmbedder
from memledger.errors import EmbeddingFailed, LedgerError
from memledger.events.envelope import START, Recorded
from memledger.projectors import checkpoints
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.projectors.embeddings.projector import (
    EMBED_BATCH,
    HANDLES,
    NAME,
    embeddings,
    item_text,
    still_said,
    text_sha256,
)
from memledger.projectors.embeddings.queries import FallbackRow
from memledger.store import db, embedding_cache, event_reads
from memledger.store.outage import OUTAGES

log = logging.getLogger(__name__)

ROUND_ROWS = 256
_PAGE = 1000


class Backfilled(msgspec.Struct):
    """One round: rows moved to the first model, texts embedded for them, and whether
    the first model failed (the rest wait for the next round)."""

    moved: int = 0
    embedded: int = 0
    failed: bool = False


def backfill(engine: Engine, chain: ChainEmbedder, *, limit: int = ROUND_ROWS) -> Backfilled:
    """One round over up to ``limit`` fallback rows; nothing to do for a chain of one."""
    done = Backfilled()
    if len(chain.models) < 2:
        return done
    with engine.connect() as conn:
        cp = checkpoints.get(conn, NAME)
        if cp is None or cp.state != "live":
            return done
        rows = embedding_queries.fallback_rows(conn, chain.model, limit)
        texts, sources = _texts(conn, rows)
        cached = embedding_cache.lookup(conn, chain.model, texts.keys())
    missing = sorted((sha for sha in texts if sha not in cached), key=lambda sha: (len(texts[sha]), sha))
    for start in range(0, len(missing), EMBED_BATCH):
        chunk = missing[start : start + EMBED_BATCH]
        try:
            vectors = chain.embed([texts[sha] for sha in chunk])
        except EmbeddingFailed as e:
            log.info("embedding backfill: %s still fails (%s); %d rows wait", chain.model, e, len(rows) - done.moved)
            done.failed = True
            break
        with db.begin(engine) as tx:
            said = still_said(tx, [rec for sha in chunk for rec in sources[sha]], chunk)
            embedding_cache.store(
                tx, chain.model, {sha: v for sha, v in zip(chunk, vectors, strict=True) if sha in said}
            )
        done.embedded += len(chunk)
    done.moved = _move(engine, chain.model, rows)
    if done.moved:
        log.info("embedding backfill: moved %d rows to %s", done.moved, chain.model)
    return done


def not_first(conn: Connection, first: str) -> dict[str, int]:
    """Rows under a model other than ``first``, counted by model (of every tenant): a
    later model of the chain's wait for the backfill. Reads the ``(model, tenant_id)``
    index on either side of ``first``, so its cost is those rows', not the table's."""
    e = embeddings.c
    wanted = sa.bindparam("first", first, type_=sa.Text)
    stmt = (
        sa.select(e.model, sa.func.count())
        .where(sa.or_(e.model < wanted, e.model > wanted))
        .group_by(e.model)
        .order_by(e.model)
    )
    return {str(model): int(n) for model, n in conn.execute(stmt).all()}


def _move(engine: Engine, first: str, rows: Sequence[FallbackRow]) -> int:
    """Move the rows whose text has a cached vector of ``first``, holding the checkpoint."""
    with db.begin(engine) as tx:
        if checkpoints.lock(tx, NAME) is None:
            return 0
        vectors = embedding_cache.lookup(tx, first, {r.text_sha256 for r in rows})
        return embedding_queries.move_to(tx, first, rows, vectors)


def _texts(conn: Connection, rows: Sequence[FallbackRow]) -> tuple[dict[str, str], dict[str, list[Recorded]]]:
    """The text of each row (by hash) found in its tenant's events not erased, and the
    events that give it; a row whose text no such event gives is left out."""
    texts: dict[str, str] = {}
    sources: dict[str, list[Recorded]] = {}
    by_tenant: dict[str, dict[tuple[str, str], str]] = {}
    for row in rows:
        by_tenant.setdefault(row.tenant_id, {})[(row.item_kind, row.item_id)] = row.text_sha256
    for tenant_id, wanted in sorted(by_tenant.items()):
        pending, after = set(wanted), START
        while pending and (
            page := event_reads.read_all(conn, after=after, limit=_PAGE, tenant_id=tenant_id, types=HANDLES)
        ):
            for rec in page:
                found = item_text(rec)
                if found is None:
                    continue
                (_, kind, item_id), item = found
                sha = text_sha256(item.text)
                if wanted.get((kind, item_id)) == sha:
                    texts[sha] = item.text
                    sources.setdefault(sha, []).append(rec)
                    pending.discard((kind, item_id))
            after = page[-1].cursor
    return texts, sources


def run(engine: Engine, chain: ChainEmbedder, *, interval_s: float, should_stop: Callable[[], bool]) -> None:
    """A round every ``interval_s`` (at once again while rounds move rows) until
    ``should_stop``; an outage or a failed round waits for the next interval."""
    while not should_stop():
        try:
            done = backfill(engine, chain)
        except OUTAGES as e:
            log.warning("embedding backfill: the database is unavailable (%s)", e)
            done = Backfilled(failed=True)
        except (LedgerError, SQLAlchemyError) as e:
            log.warning("embedding backfill: the round failed (%s); next round in %.0f s", e, interval_s)
            done = Backfilled(failed=True)
        if done.moved and not done.failed:
            continue
        deadline = time.monotonic() + interval_s
        while not should_stop() and time.monotonic() < deadline:
            time.sleep(min(0.2, interval_s))


def thread(
    engine: Engine, chain: ChainEmbedder, interval_s: float, should_stop: Callable[[], bool]
) -> threading.Thread:
    """A daemon thread (not started) that runs ``run``."""
    return threading.Thread(
        target=run,
        args=(engine, chain),
        kwargs={"interval_s": interval_s, "should_stop": should_stop},
        name="memledger-embedding-backfill",
        daemon=True,
    )
