"""``memledger scope-assertion``: the secrets and assertions that let an app, not its
agent, name a request's user (``MEMLEDGER_SCOPE_SECRET``, service/scope_assertions.py)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from memledger.cli.arguments import add_tenant, nonblank, positive_int
from memledger.config import Settings
from memledger.errors import InvalidCommand
from memledger.service import scope_assertions

DEFAULT_TTL_S = 300


def register(commands: Any) -> None:
    """Add scope-assertion (secret, mint) to the parser."""
    parser = commands.add_parser(
        "scope-assertion",
        help="signed scope assertions: what a request naming a user carries when MEMLEDGER_SCOPE_SECRET is set",
    )
    sub = parser.add_subparsers(dest="scope_command", required=True)
    secret = sub.add_parser("secret", help="print a tenant's scope secret, for its app to mint assertions with")
    add_tenant(secret, about=" (the secret asserts users of it only)")
    secret.set_defaults(handler=secret_command)
    mint = sub.add_parser("mint", help="print an assertion naming a user, for the X-Memledger-Scope header")
    add_tenant(mint)
    mint.add_argument(
        "--user", type=nonblank, required=True, help="the user key a request will name, as it names it (required)"
    )
    mint.add_argument(
        "--ttl", type=positive_int, default=DEFAULT_TTL_S, help="seconds it stays valid (default: %(default)s)"
    )
    mint.set_defaults(handler=mint_command)


def _deployment_secret() -> str:
    secret = Settings().scope_secret
    if secret is None:
        raise InvalidCommand("MEMLEDGER_SCOPE_SECRET is not set: scope assertions are not asked for")
    return secret.get_secret_value()


def secret_command(args: argparse.Namespace) -> int:
    """Print the tenant's scope secret (derived from MEMLEDGER_SCOPE_SECRET)."""
    print(scope_assertions.tenant_secret(_deployment_secret(), args.tenant))
    return 0


def mint_command(args: argparse.Namespace) -> int:
    """Print an assertion for ``--user`` of ``--tenant``, valid for ``--ttl`` seconds."""
    secret = scope_assertions.tenant_secret(_deployment_secret(), args.tenant)
    expires_at = int(time.time()) + args.ttl
    print(scope_assertions.mint(secret, args.tenant, args.user, expires_at=expires_at))
    return 0
