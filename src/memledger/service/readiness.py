"""Waiting until the read models reflect the ledger up to a position (``memledger
import --wait``, ``MemoryLedger.import_turns(wait=True)``): the extraction worker has
read past it, and every projection has applied what was committed by then, the
extraction's results included, so the next context shows it.

No ``memledger serve`` running: this process extracts and projects, as
``MemoryLedger.process`` does. A worker holding the extractor's lock: it is left to
extract, and only its checkpoint is watched; projecting alongside it is harmless (each
batch locks its projection's checkpoint).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.engine import Engine

from memledger.service import projections
from memledger.service.extraction import ExtractionWorker
from memledger.store import event_reads

# Extraction batches run between two looks at the checkpoint and the clock.
_BATCHES_PER_LOOK = 5
_POLL_S = 0.1

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
) -> Readiness:
    """Extract and project through ``position`` (a turn's), or wait for the worker that
    is doing it, for up to ``timeout_s``. ``owner`` is the owner's engine: extraction and
    projection write every tenant's rows. What the ledger holds is never at risk: a
    timeout only means the read models follow later."""
    started = time.monotonic()
    deadline = started + timeout_s
    projections.install_all(owner)
    extracted = _extracted_counter(worker, progress)
    if not _extract_through(worker, position, deadline, extracted):
        return Readiness(False, time.monotonic() - started, (worker.name,))
    with owner.connect() as conn:
        target = event_reads.committed_head(conn)  # the extraction's results, committed with its checkpoint
    turns = extracted()

    def projected(events: int) -> None:
        if progress is not None:
            progress(turns, events)

    caught_up = projections.catch_up_to(owner, target, deadline, projected)
    behind = tuple(name for name, done in caught_up.items() if not done)
    return Readiness(not behind, time.monotonic() - started, behind)


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
