"""``memledger db status|start|stop|advance-ids|compact`` and ``memledger migrate``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.errors import InvalidCommand
from memledger.service import compaction, database_server


def register(commands: Any) -> None:
    """Add the database commands to the parser."""
    db_parser = commands.add_parser("db", help="the database memledger uses")
    db_sub = db_parser.add_subparsers(dest="db_command", required=True)
    status = db_sub.add_parser("status", help="which server, its versions, the migration head")
    status.add_argument("--json", action="store_true", help="print one JSON object (default: text for people)")
    status.set_defaults(handler=status_command)
    start = db_sub.add_parser("start", help="start the embedded PostgreSQL (with no DATABASE_URL)")
    start.set_defaults(handler=start_command)
    stop = db_sub.add_parser("stop", help="stop the embedded PostgreSQL cleanly (with no DATABASE_URL)")
    stop.set_defaults(handler=stop_command)
    advance = db_sub.add_parser(
        "advance-ids",
        help="after restoring a logical dump on another server: move the server's transaction ids past the ledger's",
    )
    advance.set_defaults(handler=advance_ids_command)
    compact = db_sub.add_parser(
        "compact",
        help="after erasures: rewrite the tables and indexes holding erasable text (VACUUM FULL, then"
        " CHECKPOINT), so erased text leaves PostgreSQL's files; locks each table exclusively while it runs:"
        " a maintenance window's step",
    )
    compact.add_argument(
        "--json", action="store_true", help="print one JSON object (default: a line per table for people)"
    )
    compact.set_defaults(handler=compact_command)
    mig = commands.add_parser("migrate", help="run the ledger's migrations up to head")
    mig.set_defaults(handler=migrate_command)


def status_command(args: argparse.Namespace) -> int:
    """Print the server in use, PostgreSQL and pgvector versions, migrations, oldest writer;
    with the embedded server, whether it was running (this command starts it) and its data."""
    settings = Settings()
    was_running = settings.database_url is None and database_server.embedded_pid(settings.pgdata) is not None
    database = bootstrap.connect(settings, run_migrations=False)
    try:
        found = database_server.report(database.engine)
        server = found.server
        report = {
            "server": database.describe(),
            "embedded": database.embedded,
            "embedded_data": str(settings.pgdata) if database.embedded else None,
            "embedded_was_running": was_running if database.embedded else None,
            "embedded_pid": database_server.embedded_pid(settings.pgdata) if database.embedded else None,
            "postgres_version": server.server_version,
            "pgvector_version": server.pgvector_version,
            "database": server.database,
            "migration_current": found.migration_current,
            "migration_head": found.migration_head,
            "oldest_write_transaction_s": server.oldest_write_transaction_s,
            "ledger_ids_ahead_of_server": found.ids_ahead,
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


def start_command(args: argparse.Namespace) -> int:
    """Start the embedded server (or find it running), and say where its data is."""
    pgdata = _embedded_only("start")
    was_running = database_server.embedded_pid(pgdata) is not None
    database_server.start_embedded(pgdata)
    state = "was already running" if was_running else "started"
    print(f"embedded PostgreSQL {state} (pid {database_server.embedded_pid(pgdata)}); data in {pgdata}")
    return 0


def stop_command(args: argparse.Namespace) -> int:
    """Stop the embedded server cleanly; commands that need it start it again."""
    pgdata = _embedded_only("stop")
    if database_server.stop_embedded(pgdata):
        print(f"stopped the embedded PostgreSQL; data in {pgdata}")
    else:
        print(f"the embedded PostgreSQL was not running; data in {pgdata}")
    return 0


def _embedded_only(verb: str) -> Path:
    """The embedded server's data directory; ``InvalidCommand`` when DATABASE_URL names
    another server, which is its operator's to start and stop."""
    settings = Settings()
    if settings.database_url is not None:
        raise InvalidCommand(
            f"db {verb} manages only the embedded PostgreSQL, and DATABASE_URL is set: start and stop"
            " that server with its own tools (unset DATABASE_URL to use the embedded one)"
        )
    return settings.pgdata


def advance_ids_command(args: argparse.Namespace) -> int:
    """Assign empty transactions until the server is past the ledger's transaction ids
    (a ledger restored from a logical dump); the next command starts as usual."""
    database = bootstrap.connect(Settings(), run_migrations=False)
    try:
        advanced = database_server.advance_ids(database.engine)
    finally:
        database.close()
    print(f"advanced the server's transaction ids by {advanced}; the ledger reads in order")
    return 0


def migrate_command(args: argparse.Namespace) -> int:
    """Migrate the database to head."""
    database = bootstrap.connect(Settings(), run_migrations=True)
    try:
        print(f"migrated {database.describe()} to {database_server.migration_current(database.engine)}")
    finally:
        database.close()
    return 0


def compact_command(args: argparse.Namespace) -> int:
    """Rewrite every erasable table and its indexes, then CHECKPOINT; exit 1 when the
    checkpoint was refused (the old files then go at the server's next one)."""
    print(
        "compacting: each table is locked exclusively while it is rewritten (reads and writes wait)",
        file=sys.stderr,
    )
    database = bootstrap.connect(Settings(), run_migrations=False)
    try:
        report = compaction.compact(database.engine)
    finally:
        database.close()
    if args.json:
        print(json_line(msgspec.to_builtins(report)))
        return 0 if report.checkpoint else 1
    for table in report.rewritten:
        print(f"rewrote {table.table}: {table.bytes_before} -> {table.bytes_after} bytes in {table.seconds:.3f} s")
    if report.checkpoint:
        print(f"checkpoint done; {len(report.rewritten)} table(s) compacted in {report.seconds:.3f} s")
        return 0
    print(
        "WARNING: CHECKPOINT refused (needs superuser or pg_checkpoint): the old files stay on disk"
        " until the server's next checkpoint"
    )
    return 1
