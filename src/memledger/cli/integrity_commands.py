"""``memledger verify``: recompute the ledger's hash chains."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_tenant
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import integrity


def register(commands: Any) -> None:
    """Add ``verify`` to the parser."""
    verify = commands.add_parser("verify", help="check the ledger's hash chains; name the first bad event")
    add_tenant(verify, required=False, about=" (its chain only)")
    add_json(verify)
    verify.set_defaults(handler=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    """Exit 0 if every chain verifies, 1 (and the first bad event per tenant) if not."""
    database = bootstrap.connect(Settings())
    try:
        result = integrity.verify(database.engine, args.tenant)
    finally:
        database.close()
    stopped = [f for f in result.findings if f.stopped]
    verified = result.events - len(stopped)  # a stopped walk counted the altered event too
    if args.json:
        print(json_line({**msgspec.to_builtins(result), "ok": result.ok, "verified": verified}))
        return 0 if result.ok else 1
    print(_summary(verified, result.tenants, len(stopped)))
    for f in result.findings:
        where = "stopped at its first altered event," if f.stopped else "event"
        print(f"tenant {f.tenant_id}: {where} position {f.position} ({f.event_id}): {f.problem}")
    print("ledger OK" if result.ok else "LEDGER ALTERED")
    return 0 if result.ok else 1


def _summary(verified: int, tenants: int, stopped: int) -> str:
    """How many events verified; with a tenant whose walk stopped, that its later
    events were not checked (the count is of those before its first altered event)."""
    line = f"verified {verified} events of {tenants} tenant(s)"
    if not stopped:
        return line
    return (
        f"{line} before stopping at the first altered event of {stopped} of them;"
        " the events after it in that tenant's chain were not checked"
    )
