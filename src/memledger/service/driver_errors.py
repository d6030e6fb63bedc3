"""Driver errors as the package's own, for surfaces that meet them outside a use case
(a read between use cases, a key checked before a route or a tool runs): they answer
with the ``LedgerError`` the store gives, or whether the database is down, and never
show SQLAlchemy's message, which holds SQL and parameters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import exc as sa_exc

from memledger.store.db import translate
from memledger.store.outage import is_outage

__all__ = ["is_outage", "translate", "translated"]


@contextmanager
def translated() -> Iterator[None]:
    """Driver errors raised as the ``LedgerError`` the store translates them into
    (``DatabaseUnavailable`` while the database is down)."""
    try:
        yield
    except sa_exc.DBAPIError as e:
        raise translate(e) from e
