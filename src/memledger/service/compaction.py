"""Compaction: rewrite the files of every table that holds erasable text (``memledger db compact``).

An erasure NULLs the text and VACUUMs (``service.erasure``), but plain VACUUM only
marks the space free: the bytes stay in the heap and index pages until overwritten.
Compaction rewrites the tables and their indexes into new files and drops the old
ones. It locks each table exclusively while it runs: an operator's step, for a
maintenance window (docs/operations.md, Erasure and PostgreSQL's files).
"""

from __future__ import annotations

import time

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.projectors import checkpoints, registry, runner
from memledger.store import db
from memledger.store.schema import embedding_cache, events
from memledger.store.vacuum import Rewritten, rewrite


class CompactionReport(msgspec.Struct, frozen=True):
    """What ``compact`` rewrote, whether the closing CHECKPOINT ran, and how long it all took."""

    rewritten: list[Rewritten]
    checkpoint: bool
    seconds: float


def erasable_tables(engine: Engine) -> list[sa.Table]:
    """The ledger's tables holding text an erasure removes: the events, the embedding
    cache, and every installed projection's tables (turns, facts, entities,
    relationships, embeddings)."""
    with db.reading(engine) as conn:
        installed = {cp.name for cp in checkpoints.all_checkpoints(conn)}
    tables = [events, embedding_cache]
    for projector in registry.all_projectors():
        if projector.name in installed:
            tables.extend(runner.projection_tables(projector))
    return tables


def compact(engine: Engine) -> CompactionReport:
    """Rewrite every erasable table and its indexes (``store.vacuum.rewrite``), one table at a
    time under an exclusive lock, then CHECKPOINT. Use the owner's engine."""
    started = time.monotonic()
    rewritten, checkpointed = rewrite(engine, erasable_tables(engine))
    return CompactionReport(rewritten, checkpointed, round(time.monotonic() - started, 3))
