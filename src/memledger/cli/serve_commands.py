"""``memledger serve`` (the HTTP API), ``memledger mcp`` and ``memledger keys``."""

from __future__ import annotations

import argparse
from typing import Any

from memledger import bootstrap
from memledger.cli.arguments import port
from memledger.cli.extraction_commands import FROM_NOW_HELP, announce_start
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.errors import InvalidCommand
from memledger.service import keys


def register(commands: Any) -> None:
    """Add serve, mcp and keys to the parser."""
    serve = commands.add_parser("serve", help="run the HTTP API (OpenAPI at /openapi.json)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port, default=8765)
    serve.add_argument("--workers", action="store_true", help="also run the projectors and the extraction worker")
    serve.add_argument("--from-now", action="store_true", help=f"with --workers: {FROM_NOW_HELP}")
    serve.set_defaults(handler=serve_command)
    mcp = commands.add_parser("mcp", help="run the MCP server (stdio, or streamable HTTP)")
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    mcp.add_argument("--host", default="127.0.0.1")
    mcp.add_argument("--port", type=port, default=8766)
    mcp.add_argument("--tenant", help="the tenant (stdio); over HTTP the API key decides")
    mcp.set_defaults(handler=mcp_command)
    keys_parser = commands.add_parser("keys", help="API keys (each bound to one tenant)")
    sub = keys_parser.add_subparsers(dest="keys_command", required=True)
    create = sub.add_parser("create", help="issue a key; it is printed once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--label", default="")
    create.add_argument("--json", action="store_true")
    create.set_defaults(handler=create_key_command)
    listing = sub.add_parser("list", help="a tenant's keys (never the keys themselves)")
    listing.add_argument("--tenant", required=True)
    listing.set_defaults(handler=list_keys_command)
    revoke = sub.add_parser("revoke", help="stop a key from working")
    revoke.add_argument("key_id")
    revoke.add_argument("--tenant", required=True)
    revoke.set_defaults(handler=revoke_key_command)


def serve_command(args: argparse.Namespace) -> int:
    """Serve the HTTP API until interrupted."""
    import uvicorn

    from memledger.api.app import create_app

    if args.from_now and not args.workers:
        raise InvalidCommand("--from-now is for the extraction worker: say --workers too")
    settings = Settings()
    database = bootstrap.connect(settings)
    try:
        database.check_app_role()
    except BaseException:
        database.close()
        raise
    bootstrap.preload_embedder(database)  # so no request waits for the model
    background = None
    if args.workers:
        worker = bootstrap.build_worker(database)
        announce_start(worker, args.from_now)
        background = bootstrap.start_background(database, worker)
    try:
        uvicorn.run(
            create_app(database, max_body_bytes=settings.max_request_bytes),
            host=args.host,
            port=args.port,
            log_level="warning",
        )
    finally:
        if background is not None:
            background.stop()
        database.close()
    return 0


def mcp_command(args: argparse.Namespace) -> int:
    """Serve the MCP tools until the client goes away (stdio) or interrupted (http)."""
    from memledger.mcp_server import run

    database = bootstrap.connect(Settings())
    try:
        database.check_app_role()
        run(database, transport=args.transport, tenant_id=args.tenant, host=args.host, port=args.port)
    finally:
        database.close()
    return 0


def create_key_command(args: argparse.Namespace) -> int:
    """Issue a key and print it (only now: just its hash is stored)."""
    database = bootstrap.connect(Settings())
    try:
        key_id, key = keys.create(database.engine, args.tenant, label=args.label, issued_by="cli")
    finally:
        database.close()
    if args.json:
        print(json_line({"key_id": key_id, "tenant_id": args.tenant, "key": key}))
    else:
        print(f"key {key_id} for tenant {args.tenant} (shown once, store it now):\n{key}")
    return 0


def list_keys_command(args: argparse.Namespace) -> int:
    """Print a tenant's keys."""
    database = bootstrap.connect(Settings())
    try:
        rows = keys.list_keys(database.engine, args.tenant)
    finally:
        database.close()
    for row in rows:
        state = f"revoked {row.revoked_at:%Y-%m-%d}" if row.revoked_at else "active"
        print(f"{row.key_id}  {row.issued_at:%Y-%m-%d %H:%M}  {state:18} {row.label}")
    return 0


def revoke_key_command(args: argparse.Namespace) -> int:
    """Revoke a key."""
    database = bootstrap.connect(Settings())
    try:
        keys.revoke(database.engine, args.tenant, args.key_id, actor="cli")
    finally:
        database.close()
    print(f"revoked {args.key_id}")
    return 0
