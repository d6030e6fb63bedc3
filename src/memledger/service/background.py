"""The work a server does beside its requests, in threads of its process: the projectors
following the ledger, the sealer, the extraction worker, and, for an embedding chain, the
backfill of its fallbacks' rows. ``bootstrap.start_background`` builds one from the settings."""

from __future__ import annotations

import threading

from sqlalchemy.engine import Engine

from memledger.adapters.embedding import Embedder
from memledger.adapters.embedding_chain import EmbeddingChain
from memledger.projectors.embeddings import backfill as embedding_backfill
from memledger.service import integrity, projections
from memledger.service.extraction_loop import WorkerLoop


class Background:
    """The projectors (embedding with ``embedder``), the sealer and ``loop``'s extraction
    worker on ``engine`` (the owner's), each in a daemon thread, started at once; the
    backfill every ``backfill_interval_s`` when ``embedder`` is a chain (0: never)."""

    def __init__(
        self,
        engine: Engine,
        loop: WorkerLoop,
        embedder: Embedder,
        *,
        poll_interval_s: float,
        backfill_interval_s: float,
    ) -> None:
        self._stop = threading.Event()
        self.loop = loop
        follow = {"poll_interval": poll_interval_s, "should_stop": self._stop.is_set, "embedder": embedder}
        self.threads = [
            threading.Thread(
                target=projections.run_live, args=(engine,), kwargs=follow, name="memledger-projectors", daemon=True
            ),
            threading.Thread(
                target=integrity.run_sealer,
                args=(engine,),
                kwargs={"should_stop": self._stop.is_set},
                name="memledger-sealer",
                daemon=True,
            ),
            threading.Thread(
                target=self.loop.run, kwargs={"should_stop": self._stop.is_set}, name="memledger-worker", daemon=True
            ),
        ]
        if isinstance(embedder, EmbeddingChain) and backfill_interval_s > 0:  # rows of its fallbacks to re-embed
            self.threads.append(embedding_backfill.thread(engine, embedder, backfill_interval_s, self._stop.is_set))
        for thread in self.threads:
            thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask each to finish its current batch, and wait for them."""
        self._stop.set()
        self.loop.stop()
        for thread in self.threads:
            thread.join(timeout)
