"""``memledger db status`` and ``memledger migrate``."""

from __future__ import annotations

import argparse
from typing import Any

from memledger import bootstrap
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.store import db, migrate, restored


def register(commands: Any) -> None:
    """Add the database commands to the parser."""
    db_parser = commands.add_parser("db", help="the database memledger uses")
    db_sub = db_parser.add_subparsers(dest="db_command", required=True)
    status = db_sub.add_parser("status", help="which server, its versions, the migration head")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(handler=status_command)
    advance = db_sub.add_parser(
        "advance-ids",
        help="after restoring a logical dump on another server: move the server's transaction ids past the ledger's",
    )
    advance.set_defaults(handler=advance_ids_command)
    mig = commands.add_parser("migrate", help="run the ledger's migrations up to head")
    mig.set_defaults(handler=migrate_command)


def status_command(args: argparse.Namespace) -> int:
    """Print the server in use, PostgreSQL and pgvector versions, migrations, oldest writer."""
    database = bootstrap.connect(Settings(), run_migrations=False)
    try:
        with database.engine.connect() as conn:
            server = db.server_status(conn)
        current = migrate.current(database.engine)
        report = {
            "server": database.describe(),
            "embedded": database.embedded,
            "postgres_version": server.server_version,
            "pgvector_version": server.pgvector_version,
            "database": server.database,
            "migration_current": current,
            "migration_head": migrate.head(),
            "oldest_write_transaction_s": server.oldest_write_transaction_s,
            "ledger_ids_ahead_of_server": _ids_ahead(database) if current is not None else None,
            "idle_in_transaction_session_timeout": server.idle_in_transaction_timeout,
        }
    finally:
        database.close()
    if args.json:
        print(json_line(report))
    else:
        for key, value in report.items():
            print(f"{key:38} {value if value is not None else '-'}")
    return 0


def _ids_ahead(database: bootstrap.Database) -> int:
    """How far the ledger's transaction ids are ahead of the server's."""
    with database.engine.connect() as conn:
        return restored.ids_behind(conn)


def advance_ids_command(args: argparse.Namespace) -> int:
    """Assign empty transactions until the server is past the ledger's transaction ids
    (a ledger restored from a logical dump); the next command starts as usual."""
    database = bootstrap.connect(Settings(), run_migrations=False)
    try:
        advanced = restored.advance_ids(database.engine)
    finally:
        database.close()
    print(f"advanced the server's transaction ids by {advanced}; the ledger reads in order")
    return 0


def migrate_command(args: argparse.Namespace) -> int:
    """Migrate the database to head."""
    database = bootstrap.connect(Settings(), run_migrations=True)
    try:
        print(f"migrated {database.describe()} to {migrate.current(database.engine)}")
    finally:
        database.close()
    return 0
