"""``memledger serve`` (the HTTP API), ``memledger mcp`` and ``memledger keys``."""

from __future__ import annotations

import argparse
import logging
import logging.config
import threading
from typing import Any

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_tenant, port
from memledger.cli.extractor_start import FROM_NOW_HELP, announce_start
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.errors import InvalidCommand
from memledger.service import database_server, keys, maintenance_schedule
from memledger.service.background import Background


def register(commands: Any) -> None:
    """Add serve, mcp and keys to the parser."""
    serve = commands.add_parser(
        "serve",
        help="run the HTTP API (OpenAPI at /openapi.json) with the extraction worker and projectors",
    )
    serve.add_argument("--host", default="127.0.0.1", help="the address to bind (default: %(default)s)")
    serve.add_argument("--port", type=port, default=8765, help="the port to listen on (default: %(default)s)")
    serve.add_argument(
        "--no-workers",
        action="store_true",
        help="serve requests only: the extraction worker, projectors and sealer run elsewhere"
        " (memledger worker, memledger projections run) (default: off, they run in this process)",
    )
    serve.add_argument("--workers", action="store_true", help=argparse.SUPPRESS)  # a no-op: workers run by default
    serve.add_argument("--from-now", action="store_true", help=FROM_NOW_HELP)
    serve.add_argument(
        "--no-access-log", action="store_true", help="log no line per request (default: off, one line each)"
    )
    serve.set_defaults(handler=serve_command)
    mcp = commands.add_parser("mcp", help="run the MCP server (stdio, or streamable HTTP)")
    mcp.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio for one agent process, http for many (default: %(default)s)",
    )
    mcp.add_argument("--host", default="127.0.0.1", help="with http: the address to bind (default: %(default)s)")
    mcp.add_argument("--port", type=port, default=8766, help="with http: the port (default: %(default)s)")
    mcp.add_argument("--tenant", help="the tenant (stdio: required); over HTTP the API key decides")
    mcp.set_defaults(handler=mcp_command)
    keys_parser = commands.add_parser("keys", help="API keys (each bound to one tenant)")
    sub = keys_parser.add_subparsers(dest="keys_command", required=True)
    create = sub.add_parser("create", help="issue a key; it is printed once")
    add_tenant(create, about=" (the key reads and writes only it)")
    create.add_argument("--label", default="", help="a note to tell keys apart, e.g. 'laptop' (default: none)")
    add_json(create, "the key id, tenant and key as JSON")
    create.set_defaults(handler=create_key_command)
    listing = sub.add_parser("list", help="a tenant's keys (never the keys themselves)")
    add_tenant(listing)
    listing.set_defaults(handler=list_keys_command)
    revoke = sub.add_parser("revoke", help="stop a key from working")
    revoke.add_argument("key_id", help="the key's id, as keys create or keys list printed it (k-…)")
    add_tenant(revoke)
    revoke.set_defaults(handler=revoke_key_command)


def serve_command(args: argparse.Namespace) -> int:
    """Serve the HTTP API until interrupted, with the workers unless ``--no-workers``."""
    import uvicorn

    from memledger.api.app import create_app

    if args.no_workers and args.from_now:
        raise InvalidCommand("--from-now is for the extraction worker, which --no-workers turns off")
    if args.no_workers and args.workers:
        raise InvalidCommand("--workers and --no-workers contradict each other")
    logging.config.dictConfig(_log_config(access=not args.no_access_log))
    settings = Settings()
    database = bootstrap.connect(settings)
    try:
        database.check_app_role()
    except BaseException:
        database.close()
        raise
    bootstrap.warm_tokenizers(database)  # litellm's import starts now, in the background
    bootstrap.preload_embedder(database)  # so no request waits for the model
    background = None if args.no_workers else _start_workers(database, args.from_now)
    interval_s = 0.0 if args.no_workers else settings.maintenance_interval_s
    model = database.embedder.model
    upkeep = maintenance_schedule.start(database.engine, database.for_tenant, interval_s, model)
    stop_watch = _watch_embedded(database)
    _log.info("%s", _startup_line(args, database, background))
    try:
        app = create_app(database, max_body_bytes=settings.max_request_bytes)
        bootstrap.freeze_startup_heap()
        uvicorn.run(app, host=args.host, port=args.port, log_config=None, access_log=not args.no_access_log)
    finally:
        stop_watch.set()
        if upkeep is not None:
            upkeep.stop()
        if background is not None:
            background.stop()
        database.close()
    return 0


_log = logging.getLogger("memledger.serve")

# How often serve looks for the embedded server's process: a read of postmaster.pid.
EMBEDDED_CHECK_S = 2.0

# Common log format without the byte count, which uvicorn's access record lacks.
_ACCESS_FORMAT = '%(client_addr)s - - [%(asctime)s] "%(request_line)s" %(status_code)s'


def _log_config(*, access: bool) -> dict[str, Any]:
    """Logging for ``serve``: memledger's lines and the access log on stderr, uvicorn's
    own chatter (startup banners) only when something is wrong."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(message)s"},
            "access": {
                "()": "uvicorn.logging.AccessFormatter",
                "fmt": _ACCESS_FORMAT,
                "datefmt": "%d/%b/%Y:%H:%M:%S %z",
                "use_colors": False,
            },
        },
        "handlers": {
            "plain": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"},
            "access": {"class": "logging.StreamHandler", "formatter": "access", "stream": "ext://sys.stderr"},
        },
        "loggers": {
            "memledger": {"handlers": ["plain"], "level": "INFO", "propagate": False},
            "uvicorn.error": {"handlers": ["plain"], "level": "WARNING", "propagate": False},
            "uvicorn.access": {"handlers": ["access"] if access else [], "level": "INFO", "propagate": False},
        },
    }


def _start_workers(database: bootstrap.App, from_now: bool) -> Background:
    """The extraction worker, projectors and sealer, in threads beside the API."""
    worker = bootstrap.build_worker(database)
    announce_start(worker, from_now)
    return bootstrap.start_background(database, worker)


def _watch_embedded(database: bootstrap.App) -> threading.Event:
    """With the embedded server, a thread that starts it again if it dies; the event
    stops the thread. An external server is its operator's to keep running."""
    stop = threading.Event()
    if database.embedded:
        threading.Thread(
            target=database_server.watch_embedded,
            args=(database.settings.pgdata,),
            kwargs={"should_stop": stop.is_set, "interval_s": EMBEDDED_CHECK_S},
            name="memledger-embedded-watch",
            daemon=True,
        ).start()
    return stop


def _startup_line(args: argparse.Namespace, database: bootstrap.App, background: Background | None) -> str:
    """The one line that says where the API is, on which database, extracted by what."""
    where = (
        f"embedded PostgreSQL in {database.settings.pgdata}"
        if database.embedded
        else database.url.render_as_string(hide_password=True)
    )
    if background is None:
        return f"memledger serving http://{args.host}:{args.port} on {where}; no workers (--no-workers)"
    chosen = background.loop.worker.extractor
    return f"memledger serving http://{args.host}:{args.port} on {where}; extractor {chosen.name}@{chosen.version}"


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
