"""Waiting until the read models reflect the ledger up to a position (``memledger
import --wait``, ``MemoryLedger.import_turns(wait=True)``): the extraction worker has
read past it, and every projection has applied what was committed by then, the
extraction's results included, so the next context shows it.

No ``memledger serve`` running: this process extracts and projects, as
``MemoryLedger.process`` does, on both halves of the machine at once. This thread
extracts the backlog in large batches, while a second one (``_Follower``) keeps the
projections following the ledger, the embeddings' (the slowest: a model run per text)
included, its texts spread over several threads (``EmbedderPool``). A worker holding
the extractor's lock: it is left to extract, and only its checkpoint is watched;
projecting alongside it is harmless (each batch locks its projection's checkpoint).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from memledger.adapters.embedding import Embedder, offline
from memledger.adapters.embedding_pool import EmbedderPool
from memledger.errors import InvalidCommand, LedgerError, ProjectionFailed
from memledger.events.envelope import START
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.projectors import checkpoints, registry, runner
from memledger.service import projections
from memledger.service.extraction import TURN_TAG, ExtractionWorker
from memledger.service.extraction_pool import ExtractorPool, pooled
from memledger.store import event_reads

log = logging.getLogger(__name__)

# Extraction batches run between two looks at the checkpoint and the clock.
_BATCHES_PER_LOOK = 5
_POLL_S = 0.1

# Turns per extraction batch while a backlog is extracted here: one short write
# transaction (and its commit) per batch, so a larger batch spends less waiting on the disk.
BACKLOG_BATCH_TURNS = 250

# Threads that embed a backlog's texts side by side, and processes that extract it:
# one per core, up to four.
WORKERS = max(1, min(4, os.cpu_count() or 1))

# A backlog this large is extracted in processes of their own: each imports the
# package and loads the heuristic's word lists first, a second or two of CPU.
POOL_FROM_TURNS = 20_000

# The longest ``process_now`` waits for a transaction elsewhere to end: an hour.
MAX_PROCESS_TIMEOUT_S = 3600.0

Progress = Callable[[int, int], None]  # (turns extracted, events projected), so far


@dataclass(frozen=True)
class Readiness:
    """Whether the read models got there within the timeout, after how long, and, if
    not, which checkpoints were behind (the extractor's, or projections')."""

    ready: bool
    seconds: float
    behind: tuple[str, ...] = ()


def wait_until_ready(
    owner: Engine,
    worker: ExtractionWorker,
    position: int,
    *,
    timeout_s: float,
    progress: Progress | None = None,
    workers: int = WORKERS,
    embedder: Embedder | None = None,
) -> Readiness:
    """Extract and project through ``position`` (a turn's), or wait for the worker that
    is doing it, for up to ``timeout_s``. ``owner`` is the owner's engine: extraction and
    projection write every tenant's rows. What the ledger holds is never at risk: a
    timeout only means the read models follow later. ``workers`` threads embed and
    processes extract (the heuristic's reading), one per core by default; the
    embeddings projection embeds with ``embedder`` (the application's; the offline
    default when None)."""
    started = time.monotonic()
    deadline = started + timeout_s
    projections.install_all(owner)
    extracted = _extracted_counter(worker, progress)
    with _pooled_embedder(embedder or offline(), workers) as pooled, _Follower(owner, pooled) as follower:
        with _backlog_worker(worker, workers) as backlog:  # its processes end with the extraction
            if not _extract_through(backlog, position, deadline, extracted):
                return Readiness(False, time.monotonic() - started, (worker.name,))
        with owner.connect() as conn:
            target = event_reads.committed_head(conn)  # the extraction's results, committed with its checkpoint
        turns = extracted()
        applied = follower.stop()

        def projected(events: int) -> None:
            if progress is not None:
                progress(turns, applied + events)

        caught_up = projections.catch_up_to(owner, target, deadline, projected, embedder=pooled)
    behind = tuple(name for name, done in caught_up.items() if not done)
    return Readiness(not behind, time.monotonic() - started, behind)


def process_now(owner: Engine, worker: ExtractionWorker, *, timeout_s: float, embedder: Embedder | None) -> int:
    """``MemoryLedger.process``, in this thread: extract every turn committed before the
    call, then apply every event committed by then, the extraction's results included,
    to the projections; the turns extracted. A transaction still open anywhere on the
    server keeps newer events from gap-safe readers (``event_reads``): it is waited for,
    up to ``timeout_s``, and what it still holds back then is left to later, logged."""
    if not 0 <= timeout_s <= MAX_PROCESS_TIMEOUT_S:  # also refuses NaN
        raise InvalidCommand(f"timeout_s must be 0 to {MAX_PROCESS_TIMEOUT_S:.0f} seconds, not {timeout_s!r}")
    deadline = time.monotonic() + timeout_s
    with owner.connect() as conn:
        last_turn = event_reads.committed_head(conn, types=[TURN_TAG])
    turns = worker.drain().turns
    extracted = last_turn == START or worker.reached(last_turn.position)
    while not extracted and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        turns += worker.drain().turns
        extracted = worker.reached(last_turn.position)
    with owner.connect() as conn:
        target = event_reads.committed_head(conn)
    projections.catch_up_all(owner, embedder=embedder)  # everything visible, however much
    caught_up = projections.catch_up_to(owner, target, deadline, embedder=embedder)  # then what was held back
    behind = [name for name, done in caught_up.items() if not done]
    if not extracted:
        behind.insert(0, worker.name)
    if behind:
        log.warning("process: %s not up to date after %.1f s (a transaction left open?)", ", ".join(behind), timeout_s)
    return turns


def _extract_through(worker: ExtractionWorker, position: int, deadline: float, extracted: Callable[[], int]) -> bool:
    """Run the worker's batches until its checkpoint is past ``position``; while another
    worker holds the lock, poll the checkpoint instead. False at the deadline."""
    while not worker.reached(position):
        if time.monotonic() >= deadline:
            return False
        report = worker.drain(lambda: time.monotonic() >= deadline, max_batches=_BATCHES_PER_LOOK)
        extracted()
        if report.busy_elsewhere or not report.turns:  # another worker's batch, or turns not readable yet
            time.sleep(_POLL_S)
    return True


def _extracted_counter(worker: ExtractionWorker, progress: Progress | None) -> Callable[[], int]:
    """A function returning the turns extracted since it was made (whoever extracted
    them), and reporting them to ``progress``."""
    if progress is None:
        return lambda: 0
    before = worker.pending()

    def extracted() -> int:
        done = max(0, before - worker.pending())
        progress(done, 0)
        return done

    return extracted


@contextmanager
def _backlog_worker(worker: ExtractionWorker, workers: int) -> Iterator[ExtractionWorker]:
    """``worker`` for a backlog: batches of at least ``BACKLOG_BATCH_TURNS``, and, for a
    large one, the heuristic read in ``workers`` processes (``extraction_pool``). Same
    extractor name and version: the same checkpoint, lock and streams."""
    config = dataclasses.replace(worker.config, batch_turns=max(worker.config.batch_turns, BACKLOG_BATCH_TURNS))
    if workers <= 1 or worker.pending() < POOL_FROM_TURNS:
        yield dataclasses.replace(worker, config=config)
        return
    with ExtractorPool(HeuristicExtractor(), workers=workers) as pool:
        extractor = pooled(worker.extractor, pool)
        yield dataclasses.replace(worker, extractor=extractor or worker.extractor, config=config)


@contextmanager
def _pooled_embedder(inner: Embedder, workers: int) -> Iterator[Embedder]:
    """``inner`` embedding with ``workers`` threads (an ``EmbedderPool`` around it) until
    the block ends, for the embeddings projector. Same model, same vectors; an embedding
    chain is not pooled."""
    if workers <= 1 or isinstance(inner, EmbedderPool) or hasattr(inner, "embed_any"):
        yield inner  # a chain is left whole: a pool around it would hide its fallbacks
        return
    with EmbedderPool(inner, workers=workers) as pool:
        yield pool


class _Follower:
    """A thread applying every installed projection's batches as they become visible,
    until ``stop``: the projections (turns, embeddings) catch up while this process
    extracts, instead of after. Whatever it leaves, or fails at, the final catch-up
    to the target does (and reports)."""

    def __init__(self, engine: Engine, embedder: Embedder) -> None:
        self.engine = engine
        self.embedder = embedder
        self.applied = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memledger-ready-projections", daemon=True)

    def __enter__(self) -> _Follower:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> int:
        """Stop after the batch running; the events applied."""
        self._stopping.set()
        self._thread.join()
        return self.applied

    def _run(self) -> None:
        with self.engine.connect() as conn:
            installed = {cp.name for cp in checkpoints.all_checkpoints(conn)}
        following = [p for p in registry.all_projectors(self.embedder) if p.name in installed]
        while following and not self._stopping.is_set():
            busy = False
            for projector in list(following):
                if self._stopping.is_set():
                    return
                try:
                    done = runner.run_batch(self.engine, projector)
                except (ProjectionFailed, LedgerError) as e:  # the final catch-up reports it
                    log.info("projection %s left to the final catch-up: %s", projector.name, e)
                    following.remove(projector)
                    continue
                self.applied += done
                busy |= done > 0
            if not busy:
                self._stopping.wait(_POLL_S)
