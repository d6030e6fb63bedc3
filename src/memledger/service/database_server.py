"""The PostgreSQL server memledger runs on, for ``memledger db``, ``migrate`` and ``serve``:
what it is (versions, migrations, transaction ids) and the embedded server's life."""

from __future__ import annotations

import msgspec
from sqlalchemy.engine import Engine

from memledger.store import db, migrate, restored
from memledger.store.db import ServerStatus
from memledger.store.embedded_server import embedded_pid, start_embedded, stop_embedded, watch_embedded

__all__ = [
    "ServerReport",
    "ServerStatus",
    "advance_ids",
    "embedded_pid",
    "migration_current",
    "report",
    "start_embedded",
    "stop_embedded",
    "watch_embedded",
]


class ServerReport(msgspec.Struct, frozen=True):
    """What ``memledger db status`` says of the server, whichever server it is."""

    server: ServerStatus
    migration_current: str | None  # None: never migrated
    migration_head: str | None  # the newest revision this version ships
    ids_ahead: int | None  # how far the ledger's transaction ids are ahead; None before migrating


def report(engine: Engine) -> ServerReport:
    """The server's versions, its migration against this version's head, and whether a
    restored ledger is ahead of the server's transaction ids."""
    with engine.connect() as conn:
        server = db.server_status(conn)
    current = migrate.current(engine)
    return ServerReport(
        server=server,
        migration_current=current,
        migration_head=migrate.head(),
        ids_ahead=_ids_ahead(engine) if current is not None else None,
    )


def _ids_ahead(engine: Engine) -> int:
    """How far the ledger's transaction ids are ahead of the server's."""
    with engine.connect() as conn:
        return restored.ids_behind(conn)


def advance_ids(engine: Engine) -> int:
    """Assign empty transactions until the server is past the ledger's transaction ids (a
    ledger restored from a logical dump); how many were assigned."""
    return restored.advance_ids(engine)


def migration_current(engine: Engine) -> str | None:
    """The revision the database is at, or None if it was never migrated."""
    return migrate.current(engine)
