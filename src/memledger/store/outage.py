"""Riding out a database outage in the background loops (projectors, sealer, worker).

A loop that follows the ledger keeps all of its state in the database (checkpoints
commit with the work they cover), so when PostgreSQL restarts, runs out of disk or
turns read-only, the right thing is to wait and try again, not to let the thread
die: nobody would restart it, and the service would look alive while nothing moved.
The waits double up to a cap, so a long outage costs one attempt every few seconds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from sqlalchemy import exc as sa_exc

from memledger.errors import DatabaseUnavailable

# Driver errors the loops wait out: every DBAPIError (a connection cut at a restart is
# an OperationalError; a read-only disk surfaces as "could not open file", 42501) and
# the LedgerError that store.db translates them into.
OUTAGES: tuple[type[BaseException], ...] = (DatabaseUnavailable, sa_exc.DBAPIError)


# SQLSTATE classes that say the server cannot do the work now, whatever the work:
# connection (08), insufficient resources such as a full disk (53), operator
# intervention such as a shutdown (57), system errors such as I/O (58).
_OUTAGE_CLASSES = ("08", "53", "57", "58")
# Program limit exceeded (54): a value too big for its type, such as a tsvector over
# PostgreSQL's size limit. psycopg raises it as an OperationalError, but the same work fails again
# however long one waits: retried as an outage, it stalled a projection for good.
_WORK_TOO_BIG = "54"


def is_outage(error: sa_exc.DBAPIError) -> bool:
    """True if ``error`` says the database is unavailable (down, restarting, disk full or
    read-only), so the same work will succeed later; False if the work itself failed."""
    state = getattr(error.orig, "sqlstate", None) or ""
    if state[:2] == _WORK_TOO_BIG:
        return False
    return (
        isinstance(error, sa_exc.OperationalError)
        or state[:2] in _OUTAGE_CLASSES
        or state == "25006"  # read_only_sql_transaction: a standby, or default_transaction_read_only
        or "Read-only file system" in str(error.orig)  # EROFS, which PostgreSQL reports as 42501
    )


class Backoff:
    """Waits after failures that double from ``first_s`` to ``max_s``; a success resets them.

    The first failure of a run is logged as a warning, the rest at debug level until
    the next success (a long outage does not flood the log); the recovery is logged too.
    """

    def __init__(self, what: str, log: logging.Logger, *, first_s: float = 0.1, max_s: float = 2.0) -> None:
        self.what, self.log = what, log
        self.first_s, self.max_s = first_s, max_s
        self.failures = 0
        self._since = 0.0

    def failed(self, error: BaseException) -> float:
        """Record a failure; the seconds to wait before the next attempt."""
        if self.failures == 0:
            self._since = time.monotonic()
            self.log.warning(
                "%s: the database is unavailable, retrying with backoff: %s", self.what, _first_line(error)
            )
        else:
            self.log.debug("%s: still unavailable: %s", self.what, _first_line(error))
        delay: float = min(self.max_s, self.first_s * 2.0**self.failures)
        self.failures += 1
        return delay

    def succeeded(self) -> None:
        """The database answered: the next failure waits ``first_s`` again."""
        if self.failures:
            self.log.info(
                "%s: the database is back after %.1f s (%d failed attempts)",
                self.what,
                time.monotonic() - self._since,
                self.failures,
            )
        self.failures = 0

    def wait(self, error: BaseException, should_stop: Callable[[], bool] = lambda: False) -> None:
        """Record a failure and wait, returning early once ``should_stop`` says so."""
        deadline = time.monotonic() + self.failed(error)
        while not should_stop() and time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
