"""Operating the projections: run them live, rebuild, verify, report status.

The embeddings projection embeds with the ``embedder`` a function is given: the
application's (``bootstrap``), or the offline default when None.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime

from sqlalchemy.engine import Engine, make_url

from memledger.adapters.embedding import Embedder, offline
from memledger.errors import ProjectionFailed
from memledger.events.envelope import Cursor
from memledger.projectors import checkpoints, registry, runner
from memledger.projectors import rebuild as rebuilding
from memledger.projectors.base import Projector
from memledger.projectors.embeddings import projector as embeddings
from memledger.projectors.entities import projector as entities
from memledger.projectors.rebuild import TableDiff
from memledger.projectors.status import EmbeddingChainStatus, ProjectionStatus, embedding_chain, status
from memledger.store import db
from memledger.store.follow import Wakeup


def select(names: Sequence[str] | None, embedder: Embedder | None = None) -> tuple[Projector, ...]:
    """The projectors named (all of them for None, an empty list, or "all")."""
    if not names or list(names) == ["all"]:
        return registry.all_projectors(embedder)
    return tuple(registry.by_name(name, embedder) for name in names)


def install_all(engine: Engine) -> None:
    """Create every projection's live copy and checkpoint if missing; a live v2 copy of
    entities or embeddings is made v3 in place (their ``upgrade_in_place``: a v3 adds
    only what the live rows already allow, so the copy needs no rebuild)."""
    for projector in registry.all_projectors():
        runner.install(engine, projector)
    entities.upgrade_in_place(engine)
    embeddings.upgrade_in_place(engine)


def catch_up_all(
    engine: Engine, names: Sequence[str] | None = None, *, embedder: Embedder | None = None
) -> dict[str, int]:
    """Inline mode: bring the projections up to date now; events applied per name."""
    applied = {}
    for projector in select(names, embedder):
        runner.install(engine, projector)
        applied[projector.name] = runner.catch_up(engine, projector)
    return applied


def catch_up_to(
    engine: Engine,
    target: Cursor,
    deadline: float,
    progress: Callable[[int], None] | None = None,
    *,
    embedder: Embedder | None = None,
) -> dict[str, bool]:
    """Bring every installed projection up to ``target``, one after the other, until
    ``deadline`` (``time.monotonic()``); whether each got there. ``progress`` gets the
    events applied so far, in all."""
    with engine.connect() as conn:
        installed = {cp.name for cp in checkpoints.all_checkpoints(conn)}
    applied = [0]

    def count(events: int) -> None:
        applied[0] += events
        if progress is not None:
            progress(applied[0])

    return {
        projector.name: catch_up_one(engine, projector, target, deadline, count)
        for projector in registry.all_projectors(embedder)
        if projector.name in installed
    }


def catch_up_one(
    engine: Engine, projector: Projector, target: Cursor, deadline: float, applied: Callable[[int], None] | None = None
) -> bool:
    """Apply ``projector``'s batches up to ``target`` (not past it: appends go on
    meanwhile) until ``deadline`` (``time.monotonic()``); whether it got there. False
    for a failed projection. Racing a worker is harmless: each batch locks the checkpoint."""
    while True:
        try:
            done = runner.run_batch(engine, projector, until=target)
        except ProjectionFailed:
            return False
        if applied is not None and done:
            applied(done)
        if runner.wait_for(engine, projector, target, timeout=0):
            return True
        if time.monotonic() > deadline:  # far behind, or a transaction elsewhere holds the target back
            return False
        if not done:
            time.sleep(_POLL_S)


_POLL_S = 0.05


def run_live(
    engine: Engine,
    names: Sequence[str] | None = None,
    *,
    poll_interval: float = 0.1,
    wakeup: Wakeup | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    embedder: Embedder | None = None,
) -> None:
    """Follow the ledger with the named projections until ``should_stop``."""
    chosen = select(names, embedder)
    runner.follow(engine, chosen, poll_interval=poll_interval, wakeup=wakeup, should_stop=should_stop)


def rebuild(
    engine: Engine, name: str, progress: Callable[[int], None] | None = None, *, embedder: Embedder | None = None
) -> int:
    """Rebuild one projection beside the live one and swap it in; events applied."""
    return rebuilding.rebuild(engine, registry.by_name(name, embedder), progress=progress)


def rebuild_side_by_side(
    engine: Engine, names: Sequence[str] | None, jobs: int, make_embedder: Callable[[], Embedder] | None = None
) -> Iterator[tuple[str, int, float]]:
    """Rebuild the named projections, ``jobs`` at a time in separate processes (a
    rebuild's fold is Python, so threads would share one core); yields (name, events
    applied, seconds) as each swaps in. Each is the ordinary no-downtime ``rebuild``:
    projections share nothing but the ledger they read, so they need no ordering.
    ``make_embedder`` (picklable: each process builds its own) gives the configured
    model; without it, the offline one."""
    chosen = [p.name for p in select(names)]
    url = engine.url.render_as_string(hide_password=False)
    context = multiprocessing.get_context("spawn")  # no forked connections or threads
    with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
        futures = [pool.submit(_rebuild_in_process, url, name, make_embedder) for name in chosen]
        for future in as_completed(futures):
            yield future.result()


def _rebuild_in_process(url: str, name: str, make_embedder: Callable[[], Embedder] | None) -> tuple[str, int, float]:
    engine = db.create_engine(make_url(url), pool_size=4)  # a rebuild reads and writes side by side
    try:
        began = time.perf_counter()
        applied = rebuild(engine, name, embedder=make_embedder() if make_embedder is not None else None)
        return name, applied, time.perf_counter() - began
    finally:
        engine.dispose()


def verify(
    engine: Engine, name: str, progress: Callable[[int], None] | None = None, *, embedder: Embedder | None = None
) -> list[TableDiff]:
    """Compare one projection's live rows with a scratch rebuild, table by table."""
    return rebuilding.verify(engine, registry.by_name(name, embedder), progress=progress)


def statuses(engine: Engine) -> list[ProjectionStatus]:
    """The status of every projection."""
    now = datetime.now(UTC)
    with engine.connect() as conn:
        return [status(conn, projector, now) for projector in registry.all_projectors()]


def embedding_chain_status(engine: Engine, embedder: Embedder | None = None) -> EmbeddingChainStatus:
    """``embedder``'s chain (the application's), its counters, and the rows waiting for
    the backfill."""
    with engine.connect() as conn:
        return embedding_chain(conn, embedder or offline())


def reset_failure(engine: Engine, name: str) -> bool:
    """Let a failed projection try again from where it stopped; False when it had not
    failed (nothing to retry)."""
    registry.by_name(name)
    return runner.reset_failure(engine, name)
