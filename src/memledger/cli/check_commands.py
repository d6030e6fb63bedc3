"""``memledger check [--smoke] [--json]``: is this installation working?"""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import check

MARKS = {"ok": "✓", "failed": "✗", "skipped": "-"}


def register(commands: Any) -> None:
    """Add ``check`` to the parser."""
    parser = commands.add_parser(
        "check",
        help="test the installation: database, migrations, projections, embedder, model",
        description="Run each step of a connection test and report its time; read-only unless --smoke.",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="also record a turn in a scratch tenant, extract it, ask for context, then erase"
        " the tenant (default: read-only)",
    )
    add_json(parser, "one JSON object")
    parser.set_defaults(handler=check_command)


def check_command(args: argparse.Namespace) -> int:
    """Exit 0 when every step that ran passed, 1 otherwise (an unreachable database too)."""
    opened: list[bootstrap.App] = []

    def connect() -> check.Probes:
        database = bootstrap.connect(bootstrap.check_settings(Settings()), run_migrations=False)
        opened.append(database)
        return bootstrap.check_probes(database)

    try:
        report = check.run(connect, smoke=args.smoke)
    finally:
        for database in opened:
            database.close()
    if args.json:
        print(json_line(msgspec.to_builtins(report)))
    else:
        for step in report.steps:
            print(f"{MARKS[step.status]} {step.name:<12} {step.ms:>8.1f} ms  {step.detail}")
        print("all good" if report.ok else "CHECK FAILED")
    return 0 if report.ok else 1
