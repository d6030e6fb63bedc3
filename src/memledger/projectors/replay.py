"""Replaying the ledger into a fresh copy of a projection, fast.

Used by ``rebuild.build_copy``. A projector may offer a ``replayer()``: its fold
for a copy that nobody else writes, keeping its state in memory between batches
(so nothing is read back from the copy) and split into the pure fold and the
write. Then three stages overlap, so that Python and PostgreSQL work at the same
time on two cores instead of one after the other:

- a thread reads and decodes the next page of the ledger;
- the calling thread folds it;
- ``lanes`` threads write the batches, each batch with its checkpoint in one
  transaction. Batches commit strictly in ledger order: a lane does its writes,
  then waits for the batch before it to commit before it takes the checkpoint
  lock, advances it and commits. More than one lane only for a replayer whose
  batches never touch the same rows (turns: insert-only, deduplicated in memory),
  so that the database's share (the text search vectors) uses both cores.

Exactly once, as ``runner.run_batch``: a batch's rows and its checkpoint commit
together, in order. On any error the replay stops after the last batch that
committed and returns; the caller goes on from there the ordinary way, batch by
batch, which applies what it can and isolates and records what fails.

Erasure: erased events are skipped (a fresh copy never holds them). An erasure
record that was committed before the replay started needs nothing more: every
event it erased was erased before the replay read it. One that appears during the
replay may have erased events the fold already took, so the replay stops just
before it and the ordinary way goes on from there, refolding the tenant
(``runner.refold``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from queue import Empty, Full, Queue
from typing import Any, NamedTuple, Protocol

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from memledger.errors import LedgerError, ProjectionFailed
from memledger.events.catalogue import SubjectErased
from memledger.events.envelope import START, Cursor, Recorded
from memledger.projectors import checkpoints
from memledger.projectors.base import Projector
from memledger.projectors.runner import ERASURE, reads
from memledger.store import db, event_reads

log = logging.getLogger(__name__)

REPLAY_BATCH = 50_000  # events per batch (one write transaction), unless the replayer says
REPLAY_PAGE = 5_000  # events per read of the ledger
# What a failing fold or write may raise; anything else is a bug and propagates.
_FAILURES = (LedgerError, sa_exc.SQLAlchemyError, ValueError, TypeError, KeyError, AttributeError, LookupError)


class Replayer(Protocol):
    """A projector's fold for a copy only it writes, every write of which commits
    in order. A batch is the events ``evolve`` took since the last ``flush``;
    ``flush`` returns what writes the batch's rows (not the checkpoint), which
    must not depend on anything a later ``evolve`` changes.

    Optional attributes: ``flush_every`` (events per batch) and ``lanes``
    (writers side by side; only for batches that never write the same rows)."""

    def evolve(self, page: Sequence[Recorded]) -> None: ...

    def flush(self) -> Callable[[Connection], None]: ...


class _Pipe:
    """A bounded hand-over between stages that gives up when told to stop."""

    def __init__(self, size: int) -> None:
        self.queue: Queue[Any] = Queue(maxsize=size)
        self.stop = threading.Event()

    def put(self, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                return True
            except Full:
                continue
        return False

    def get(self) -> Any:
        while not self.stop.is_set():
            try:
                return self.queue.get(timeout=0.1)
            except Empty:
                continue
        return None


class _Page(NamedTuple):
    """What the reader hands the fold: the events to fold (erased ones and erasure
    records left out) and where the page it read ends."""

    events: list[Recorded]
    cursor: Cursor
    read: int  # events read, folded or not


class _Commits:
    """The order batches commit in, and what the lanes have committed."""

    def __init__(self, after: Cursor) -> None:
        self.cond = threading.Condition()
        self.done = -1  # sequence number of the last committed batch
        self.after = after
        self.applied = 0
        self.failed: BaseException | None = None

    def wait_turn(self, seq: int) -> Cursor:
        with self.cond:
            self.cond.wait_for(lambda: self.done == seq - 1 or self.failed is not None)
            if self.failed is not None:
                raise ProjectionFailed("replay", 0, "an earlier batch failed")
            return self.after

    def committed(self, seq: int, cursor: Cursor, count: int) -> int:
        with self.cond:
            self.done, self.after = seq, cursor
            self.applied += count
            self.cond.notify_all()
            return self.applied

    def fail(self, error: BaseException) -> None:
        with self.cond:
            if self.failed is None:
                self.failed = error
            self.cond.notify_all()


def replay(
    engine: Engine,
    projector: Projector,
    replayer: Replayer,
    checkpoint: str,
    schema_map: dict[str | None, str | None],
    *,
    batch_size: int = REPLAY_BATCH,
    until: Cursor | None = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Fill a copy from its checkpoint with ``replayer``; return the events applied
    (every one up to the copy's checkpoint when it returns). A batch holds
    ``batch_size`` events (or the replayer's ``flush_every``), read in pages."""
    with engine.connect() as conn:
        start = checkpoints.get(conn, checkpoint)
    if start is None or start.state != "live":
        return 0
    lanes = max(1, int(getattr(replayer, "lanes", 1)))
    batch = max(1, int(getattr(replayer, "flush_every", batch_size)))
    pages, writes = _Pipe(4), _Pipe(lanes)
    commits = _Commits(start.cursor)
    reader = threading.Thread(target=_read, args=(engine, projector, start.cursor, batch, until, pages))
    threads = [reader] + [
        threading.Thread(target=_lane, args=(engine, checkpoint, schema_map, writes, commits, progress))
        for _ in range(lanes)
    ]
    for thread in threads:
        thread.start()
    stopped: BaseException | None = None
    try:
        _fold(replayer, pages, writes, commits, batch)
    except _FAILURES as e:
        stopped = e  # the batches handed over before still get written
    finally:
        pages.stop.set()
        for _ in range(lanes):
            writes.put(None)
        for thread in threads:
            thread.join()
    if stopped is not None or commits.failed is not None:
        log.warning(
            "projection %s: replay stopped (%s); going on batch by batch", checkpoint, stopped or commits.failed
        )
    return commits.applied


def _fold(replayer: Replayer, pages: _Pipe, writes: _Pipe, commits: _Commits, batch: int) -> None:
    """Evolve page after page; hand each full batch (and the last) to the lanes."""
    seq, pending, cursor = 0, 0, None
    while (page := pages.get()) is not None and commits.failed is None:
        replayer.evolve(page.events)
        pending, cursor = pending + page.read, page.cursor
        if pending >= batch:
            if not writes.put((seq, replayer.flush(), cursor, pending)):
                return
            seq, pending = seq + 1, 0
    if pending and cursor is not None and commits.failed is None:
        writes.put((seq, replayer.flush(), cursor, pending))


def _read(engine: Engine, projector: Projector, after: Cursor, batch: int, until: Cursor | None, pages: _Pipe) -> None:
    """Put the pages of the projector's events after ``after`` (up to ``until``,
    or to an erasure record the replay did not know of at its start), then None.
    Pages end where batches do, so a batch is what one ``read_all`` of ``batch``
    events would return."""
    read = 0
    try:
        with engine.connect() as conn:
            known = _erasures(conn)
            while True:
                limit = min(REPLAY_PAGE, batch - read % batch)
                page = event_reads.read_all(conn, after=after, limit=limit, types=reads(projector))
                conn.rollback()  # a short read transaction per page: no snapshot held
                if until is not None:
                    page = [rec for rec in page if rec.cursor <= until]
                page, stop = _before_new_erasure(page, known)
                if page and not pages.put(_Page(_foldable(page), page[-1].cursor, len(page))):
                    break
                if stop or not page:
                    break
                read += len(page)
                after = page[-1].cursor
    except _FAILURES as e:
        log.warning("projection replay: reading stopped (%s)", e)
    pages.put(None)


def _erasures(conn: Connection) -> set[str]:
    """The event ids of the erasure records readers see now."""
    known: set[str] = set()
    after = START
    while page := event_reads.read_all(conn, after=after, limit=REPLAY_PAGE, types=[ERASURE]):
        known.update(rec.event_id for rec in page)
        after = page[-1].cursor
    conn.rollback()
    return known


def _before_new_erasure(page: list[Recorded], known: set[str]) -> tuple[list[Recorded], bool]:
    """The page up to the first erasure record not in ``known``, and whether there was one."""
    for i, rec in enumerate(page):
        if isinstance(rec.event, SubjectErased) and rec.event_id not in known:
            return page[:i], True
    return page, False


def _foldable(page: list[Recorded]) -> list[Recorded]:
    """The events a fold takes: not erased, not erasure records."""
    return [rec for rec in page if not rec.erased and not isinstance(rec.event, SubjectErased)]


def _lane(
    engine: Engine,
    checkpoint: str,
    schema_map: dict[str | None, str | None],
    writes: _Pipe,
    commits: _Commits,
    progress: Callable[[int], None] | None,
) -> None:
    """Write batches, each with its checkpoint, committing in sequence order."""
    try:
        while (item := writes.get()) is not None:
            seq, write, cursor, count = item
            with db.begin(engine) as tx:
                # A crash loses an unflushed commit together with its checkpoint,
                # and the copy is private until swapped in: no need to wait for
                # the disk at every batch.
                tx.execute(sa.text("SET LOCAL synchronous_commit = off"))  # text(): a setting
                conn = tx.execution_options(schema_translate_map=schema_map)
                write(conn)
                after = commits.wait_turn(seq)
                cp = checkpoints.lock(conn, checkpoint)
                if cp is None or cp.cursor != after or cp.state != "live":
                    raise ProjectionFailed(checkpoint, cursor.position, "the copy moved under the replay")
                checkpoints.advance(conn, checkpoint, cursor, count)
            applied = commits.committed(seq, cursor, count)
            if progress is not None:
                progress(applied)
    except _FAILURES as e:
        commits.fail(e)
        writes.stop.set()
