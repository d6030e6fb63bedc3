"""``memledger verify``: recompute the ledger's hash chains."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import integrity


def register(commands: Any) -> None:
    """Add ``verify`` to the parser."""
    verify = commands.add_parser("verify", help="check the ledger's hash chains; name the first bad event")
    verify.add_argument("--tenant", help="only this tenant's chain")
    verify.add_argument("--json", action="store_true")
    verify.set_defaults(handler=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    """Exit 0 if every chain verifies, 1 (and the first bad event per tenant) if not."""
    database = bootstrap.connect(Settings())
    try:
        result = integrity.verify(database.engine, args.tenant)
    finally:
        database.close()
    if args.json:
        print(json_line({**msgspec.to_builtins(result), "ok": result.ok}))
    else:
        print(f"verified {result.events} events of {result.tenants} tenant(s)")
        for f in result.findings:
            print(f"tenant {f.tenant_id}: event at position {f.position} ({f.event_id}): {f.problem}")
        print("ledger OK" if result.ok else "LEDGER ALTERED")
    return 0 if result.ok else 1
