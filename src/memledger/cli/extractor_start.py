"""Where an extractor that never ran here starts: the whole past (the default), or the end
of the ledger (``--from-now``), for ``worker``, ``extract`` and ``serve``."""

from __future__ import annotations

import sys

from memledger.service.extraction import ExtractionWorker

FROM_NOW_HELP = (
    "an extractor (or version) that never ran here starts at the end of the ledger: only turns"
    " recorded from now on (default: off, it extracts the whole past once, a model call per conversation)"
)


def announce_start(worker: ExtractionWorker, from_now: bool) -> None:
    """Start a new extractor version at the end of the ledger if asked; else say, on
    stderr, that it is about to extract the whole past."""
    if from_now:
        if worker.start_from_now():
            print(f"{worker.name}: starts at the end of the ledger (turns from now on)", file=sys.stderr)
        return
    if worker.is_new() and (pending := worker.pending()):
        print(
            f"{worker.name} has not run here before: it extracts all {pending} turns recorded so far"
            " (--from-now starts it at the end of the ledger instead)",
            file=sys.stderr,
        )
