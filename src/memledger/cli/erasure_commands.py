"""``memledger erase --tenant T (--subject S | --all-subjects)``: erase what a person
(or everyone in the tenant) said."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_tenant
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.errors import InvalidCommand
from memledger.service import erasure


def register(commands: Any) -> None:
    """Add ``erase`` to the parser."""
    erase = commands.add_parser(
        "erase",
        help="erase a person's words (--subject S), or everyone's in the tenant (--all-subjects), "
        "from the ledger and read models",
    )
    add_tenant(erase)
    whose = erase.add_mutually_exclusive_group()
    whose.add_argument(
        "--subject",
        help="the person: the subject their turns were recorded with (a turn's subject field, by default"
        " its user scope), as sent (give it or --all-subjects)",
    )
    whose.add_argument(
        "--all-subjects",
        action="store_true",
        help="every person's words in the tenant (default: off; instead of --subject)",
    )
    erase.add_argument(
        "--reason", default="", help="why, for the SubjectErased record, e.g. the request's reference (default: empty)"
    )
    erase.add_argument("--actor", help="who asked for it, for the record (default: none)")
    erase.add_argument(
        "--no-wait", action="store_true", help="do not catch the projections up afterwards (default: off, wait)"
    )
    erase.add_argument(
        "--no-vacuum", action="store_true", help="do not VACUUM the tables afterwards (default: off, vacuum)"
    )
    add_json(erase, "one JSON object")
    erase.set_defaults(handler=erase_command)


def erase_command(args: argparse.Namespace) -> int:
    """Exit 0 when everything covered was erased and every projection caught up;
    1 when events could not be erased (stored before 0006) or a projection did not."""
    if args.subject is None and not args.all_subjects:  # a whole tenant's words, only when asked by name
        raise InvalidCommand(
            f"say whose words to erase: --subject S, or --all-subjects for everyone in {args.tenant!r}"
        )
    database = bootstrap.connect(Settings())
    try:
        report = erasure.erase(
            database.engine,
            args.tenant,
            args.subject,
            reason=args.reason,
            actor=args.actor,
            refresh=not args.no_wait,
            vacuum_after=not args.no_vacuum,
            embedder=database.embedder,
        )
    finally:
        database.close()
    complete = not report.legacy_events and all(report.projections.values())
    if args.json:
        print(json_line({**msgspec.to_builtins(report), "complete": complete}))
        return 0 if complete else 1
    who = f"subject {args.subject!r}" if args.subject else "every subject"
    if report.position is None and not report.legacy_events:
        print(f"nothing left to erase for {who} in tenant {report.tenant_id!r}")
        return 0
    print(
        f"erased {report.erased_events} event(s) ({report.turns} turn(s)) of {who} in tenant {report.tenant_id!r};"
        f" {report.forgotten_vectors} cached vector(s) forgotten"
    )
    if report.position is not None:
        print(f"recorded as SubjectErased at position {report.position}")
    behind = "NOT caught up yet: run `memledger projections run --once`"
    for name, current in sorted(report.projections.items()):
        print(f"projection {name}: {'erased' if current else behind}")
    if report.dropped_shadows:
        labels = ", ".join(report.dropped_shadows)
        print(f"re-extraction shadows dropped (build them again to compare): {labels}")
    if report.legacy_events:
        print(
            f"WARNING: {report.legacy_events} event(s) were stored before erasable content existed"
            " (migration 0006): their text is part of the chained payload and was not erased"
        )
    return 0 if complete else 1
