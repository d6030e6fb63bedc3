"""The heuristic extractor run in worker processes, for a backlog extracted here
(``readiness.wait_until_ready``).

The heuristic reads each turn alone and is pure Python: in the waiting process it
would hold the interpreter's lock while the embeddings projector's threads wait for
it between model runs. In processes of their own, a batch's turns are read on both
cores, and the waiting process only appends what they found. Same extractor, same
version, same candidates: ``name`` and ``version`` are the heuristic's, so the
checkpoint and the events are those of the worker it stands in for.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from memledger.extraction import name_guess
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.modes import ModeSwitch
from memledger.extraction.protocol import Extractor, TurnExtraction, TurnText

log = logging.getLogger(__name__)

# A part of a batch smaller than this is read in the waiting process: not worth the trip.
MIN_PART = 16


class ExtractorPool:
    """``HeuristicExtractor`` with each ``extract`` call's turns split over ``workers``
    processes (started on first use, with ``spawn``: no connection or thread of this
    process is copied). A pool whose process died is replaced by reading in this
    process, so a batch is never lost to it."""

    def __init__(self, inner: HeuristicExtractor, *, workers: int = 2) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.inner = inner
        self.name = inner.name
        self.version = inner.version
        self.workers = workers
        self._processes: ProcessPoolExecutor | None = None
        self._broken = False

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        """The heuristic's candidates for ``turns``, by turn id."""
        parts = _parts(list(turns), self.workers)
        if len(parts) <= 1 or self._broken:
            return self.inner.extract(turns)
        try:
            futures = [self._pool().submit(_extract_part, part) for part in parts]
            found: dict[str, TurnExtraction] = {}
            for future in futures:
                found.update(future.result())
        except BrokenProcessPool as e:
            log.warning("the extraction processes stopped (%s); extracting in this process", e)
            self._broken = True
            return self.inner.extract(turns)
        return found

    def _pool(self) -> ProcessPoolExecutor:
        if self._processes is None:
            context = multiprocessing.get_context("spawn")
            self._processes = ProcessPoolExecutor(self.workers, mp_context=context, initializer=name_guess.warm)
        return self._processes

    def close(self) -> None:
        """Stop the processes (a no-op if none started)."""
        if self._processes is not None:
            self._processes.shutdown(wait=True, cancel_futures=True)
            self._processes = None

    def __enter__(self) -> ExtractorPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _parts(turns: list[TurnText], workers: int) -> list[list[TurnText]]:
    """The user turns (the heuristic reads no others) in up to ``workers`` contiguous
    parts of at least ``MIN_PART``."""
    read = [t for t in turns if t.role == "user"]
    count = max(1, min(workers, len(read) // MIN_PART))
    size = -(-len(read) // count) if read else 0
    return [read[at : at + size] for at in range(0, len(read), size)] if read else []


_PROCESS_EXTRACTOR: list[HeuristicExtractor] = []  # one per worker process, made on its first part


def _extract_part(turns: list[TurnText]) -> dict[str, TurnExtraction]:
    if not _PROCESS_EXTRACTOR:
        _PROCESS_EXTRACTOR.append(HeuristicExtractor())
    return dict(_PROCESS_EXTRACTOR[0].extract(turns))


def pooled(extractor: Extractor, pool: ExtractorPool) -> Extractor | None:
    """``extractor`` with every heuristic it switches between (``ModeSwitch``) read by
    ``pool``; model extractors are kept as they are. None when there is no heuristic
    of the pool's version to stand in for (nothing to gain)."""

    def swap(one: Extractor) -> Extractor:
        same = isinstance(one, HeuristicExtractor) and (one.name, one.version) == (pool.name, pool.version)
        return pool if same else one

    if isinstance(extractor, HeuristicExtractor):
        return pool if swap(extractor) is pool else None
    if isinstance(extractor, ModeSwitch):
        default = swap(extractor.default)
        by_mode = {mode: swap(one) for mode, one in extractor.by_mode.items()}
        if default is not pool and pool not in by_mode.values():
            return None
        return ModeSwitch(default, by_mode)
    return None
