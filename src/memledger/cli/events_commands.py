"""``memledger events tail``: the ledger as JSON lines, optionally following it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memledger import bootstrap
from memledger.cli.arguments import add_tenant, positive_int
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import ledger_pages
from memledger.service.health import event_record


def register(commands: Any) -> None:
    """Add the events commands to the parser."""
    events_parser = commands.add_parser("events", help="read the ledger")
    sub = events_parser.add_subparsers(dest="events_command", required=True)
    tail = sub.add_parser("tail", help="print events as JSON lines, in ledger order")
    add_tenant(tail, required=False, about=" (its events only)")
    tail.add_argument(
        "--after",
        default="0",
        help="start after this position (N) or cursor (TX:POSITION); default: the beginning",
    )
    tail.add_argument(
        "--type",
        action="append",
        dest="types",
        help="only events of this type, e.g. turn.recorded (repeatable; default: all types)",
    )
    tail.add_argument(
        "--limit", type=positive_int, default=None, help="stop after this many events (default: no limit)"
    )
    tail.add_argument(
        "--follow",
        action="store_true",
        help="keep printing new events until interrupted (default: off, stop at the end)",
    )
    tail.set_defaults(handler=tail_command)


def tail_command(args: argparse.Namespace) -> int:
    """Print the ledger from a cursor; with --follow, keep going until interrupted."""
    settings = Settings()
    database = bootstrap.connect(settings)
    printed = 0

    def done() -> bool:
        return args.limit is not None and printed >= args.limit

    # One tenant's events: as an auditor, fenced to it. All tenants': the operator's view.
    engine = database.for_tenant(args.tenant) if args.tenant is not None else database.engine
    try:
        after = ledger_pages.parse_cursor(args.after, engine, "--after")
        if not args.follow:  # one pass over what is there now
            while not done():
                page = ledger_pages.read_page(engine, after=after, tenant_id=args.tenant, types=args.types)
                if not page:
                    break
                after = page[-1].cursor
                printed += _print(page, args.limit, printed)
            return 0
        pages = ledger_pages.follow(
            engine,
            after=after,
            tenant_id=args.tenant,
            types=args.types,
            poll_interval=settings.poll_interval_s,
            notify=settings.notify_on_append,
            url=database.url,
            should_stop=done,
        )
        for page in pages:
            printed += _print(page, args.limit, printed)
    finally:
        database.close()
    return 0


def _print(page: list[Any], limit: int | None, printed: int) -> int:
    room = len(page) if limit is None else max(0, limit - printed)
    for rec in page[:room]:
        sys.stdout.write(json_line(event_record(rec)) + "\n")
    sys.stdout.flush()
    return min(room, len(page))
