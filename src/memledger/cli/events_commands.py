"""``memledger events tail``: the ledger as JSON lines, optionally following it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memledger import bootstrap
from memledger.cli.output import event_record, json_line
from memledger.config import Settings
from memledger.errors import InvalidCommand
from memledger.events.envelope import START, Cursor, Recorded
from memledger.store import event_store
from memledger.store.follow import Wakeup, follow


def register(commands: Any) -> None:
    """Add the events commands to the parser."""
    events_parser = commands.add_parser("events", help="read the ledger")
    sub = events_parser.add_subparsers(dest="events_command", required=True)
    tail = sub.add_parser("tail", help="print events as JSON lines, in ledger order")
    tail.add_argument("--tenant", help="only this tenant's events")
    tail.add_argument(
        "--after",
        default="0",
        help="start after this position (N) or cursor (TX:POSITION); default: the beginning",
    )
    tail.add_argument("--type", action="append", dest="types", help="only events of this type")
    tail.add_argument("--limit", type=int, default=None, help="stop after this many events")
    tail.add_argument("--follow", action="store_true", help="keep printing new events")
    tail.set_defaults(handler=tail_command)


def parse_after(text: str, conn: Any) -> Cursor:
    """A cursor from ``N`` (a position) or ``TX:POSITION``."""
    try:
        if ":" in text:
            tx, position = text.split(":", 1)
            return Cursor(int(tx), int(position))
        position = int(text)
    except ValueError:
        raise InvalidCommand(f"--after must be a position N or a cursor TX:N, not {text!r}") from None
    return START if position <= 0 else event_store.cursor_at(conn, position)


def tail_command(args: argparse.Namespace) -> int:
    """Print the ledger from a cursor; with --follow, keep going until interrupted."""
    settings = Settings()
    database = bootstrap.connect(settings)
    wakeup = Wakeup(database.url) if args.follow and settings.notify_on_append else None
    printed = 0

    def done() -> bool:
        return args.limit is not None and printed >= args.limit

    try:
        with database.engine.connect() as conn:
            after = parse_after(args.after, conn)
            if not args.follow:  # one pass over what is there now
                while not done():
                    page = event_store.read_all(
                        conn, after=after, tenant_id=args.tenant, types=args.types
                    )
                    if not page:
                        break
                    after = page[-1].cursor
                    printed += _print(page, args.limit, printed)
                return 0
        pages = follow(
            database.engine,
            after=after,
            tenant_id=args.tenant,
            types=args.types,
            poll_interval=settings.poll_interval_s,
            wakeup=wakeup,
            should_stop=done,
        )
        for page in pages:
            printed += _print(page, args.limit, printed)
    finally:
        if wakeup is not None:
            wakeup.close()
        database.close()
    return 0


def _print(page: list[Recorded], limit: int | None, printed: int) -> int:
    room = len(page) if limit is None else max(0, limit - printed)
    for rec in page[:room]:
        sys.stdout.write(json_line(event_record(rec)) + "\n")
    sys.stdout.flush()
    return min(room, len(page))
