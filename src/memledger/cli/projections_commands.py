"""``memledger projections status|run|rebuild|verify|retry``."""

from __future__ import annotations

import argparse
import functools
import signal
import sys
import time
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json, positive_int
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import projections, replica_reads


def register(commands: Any) -> None:
    """Add the projections commands to the parser."""
    parser = commands.add_parser("projections", help="operate the read models")
    sub = parser.add_subparsers(dest="projections_command", required=True)
    status = sub.add_parser("status", help="version, position, lag and state of each projection")
    add_json(status, "one JSON object per projection")
    status.set_defaults(handler=status_command)
    run = sub.add_parser("run", help="follow the ledger live (until interrupted)")
    run.add_argument("names", nargs="*", help="projections to run (default: all)")
    run.add_argument("--once", action="store_true", help="catch up, then exit (default: off, keep following)")
    run.set_defaults(handler=run_command)
    rebuild = sub.add_parser("rebuild", help="rebuild beside the live copy, then swap")
    rebuild.add_argument("names", nargs="+", help="projection names, or: all (required)")
    rebuild.add_argument(
        "--jobs",
        type=positive_int,
        default=1,
        help="rebuild this many projections at once, each in its own process (default: 1)",
    )
    rebuild.set_defaults(handler=rebuild_command)
    verify = sub.add_parser("verify", help="compare the live rows with a scratch rebuild")
    verify.add_argument("names", nargs="+", help="projection names, or: all (required)")
    add_json(verify, "one JSON object per table")
    verify.set_defaults(handler=verify_command)
    retry = sub.add_parser("retry", help="let a failed projection try again")
    retry.add_argument("name", help="the failed projection (see projections status)")
    retry.set_defaults(handler=retry_command)


def _progress(label: str) -> Any:
    started = time.monotonic()

    def report(applied: int) -> None:
        rate = applied / max(time.monotonic() - started, 1e-6)
        print(f"\r{label}: {applied:,} events ({rate:,.0f}/s)", end="", file=sys.stderr, flush=True)

    return report


def status_command(args: argparse.Namespace) -> int:
    """Print each projection's status."""
    database = bootstrap.connect(Settings())
    try:
        rows = projections.statuses(database.engine)
        replicas = replica_reads.lag(database.reads, database.engine)
        chain = projections.embedding_chain_status(database.engine, database.embedder)
    finally:
        database.close()
    # The chain's counters are a serving process's (GET /health?detail=1); this one embedded nothing.
    chain = msgspec.structs.replace(chain, switches=None, answered=None, provider_failures=None)
    if args.json:
        for row in rows:
            print(json_line(msgspec.to_builtins(row)))
        print(json_line({"embedding_chain": msgspec.to_builtins(chain)}))  # keyed apart, as a replica's
        for lag in replicas:  # MEMLEDGER_READ_DATABASE_URLS: one line each, keyed apart from projections
            print(json_line({"replica": msgspec.to_builtins(lag)}))
        return 0
    print(f"{'name':14} {'version':>7} {'position':>10} {'applied':>10} {'lag':>8} {'lag s':>8}  state")
    for r in rows:
        print(
            f"{r.name:14} {r.version:>7} {r.position:>10} {r.applied_events:>10} "
            f"{r.lag_events:>8} {r.lag_seconds:>8.1f}  {r.state}"
        )
        if r.error:
            print(f"{'':14} stopped at position {r.error_position} (event {r.error_event_id}): {r.error}")
    _print_chain(chain.models, chain.waiting, chain.outside)
    _print_replicas(replicas)
    return 0 if all(r.state != "failed" for r in rows) else 1


def _print_chain(models: list[str], waiting: dict[str, int], outside: dict[str, int]) -> None:
    """The embedding models, and the rows of a fallback the backfill has yet to move."""
    print(f"\nembedding models: {', '.join(models)} (the first is the tenants')")
    print(f"rows waiting for the backfill: {', '.join(f'{m} {n}' for m, n in waiting.items()) or 'none'}")
    if outside:
        found = ", ".join(f"{m} {n}" for m, n in outside.items())
        print(f"rows of a model outside the chain (rebuild embeddings): {found}")


def _print_replicas(replicas: list[replica_reads.ReplicaLag]) -> None:
    """Each read replica's replay lag (none configured: nothing)."""
    if replicas:
        print(f"\n{'replica':40} {'bytes behind':>12} {'replay age s':>12}  state")
    for lag in replicas:
        behind = "" if lag.bytes_behind is None else str(lag.bytes_behind)
        age = "" if lag.replay_age_s is None else f"{lag.replay_age_s:.1f}"
        print(f"{lag.name:40} {behind:>12} {age:>12}  {lag.state}")


def run_command(args: argparse.Namespace) -> int:
    """Catch up once, or follow the ledger until SIGINT/SIGTERM."""
    settings = Settings()
    database = bootstrap.connect(settings)
    try:
        if args.once:
            caught_up = projections.catch_up_all(database.engine, args.names, embedder=database.embedder)
            for name, applied in caught_up.items():
                print(f"{name}: applied {applied} events")
            return 0
        stopping: list[bool] = []
        signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
        projections.run_live(
            database.engine,
            args.names,
            poll_interval=settings.poll_interval_s,
            should_stop=lambda: bool(stopping),
            embedder=database.embedder,
        )
    finally:
        database.close()
    return 0


def rebuild_command(args: argparse.Namespace) -> int:
    """Rebuild each named projection with no downtime."""
    database = bootstrap.connect(Settings())
    try:
        if args.jobs > 1:
            embedder = functools.partial(bootstrap.build_embedder, database.settings)  # built again in each process
            rebuilt = projections.rebuild_side_by_side(database.engine, args.names, args.jobs, embedder)
            for name, applied, seconds in rebuilt:
                print(f"{name}: rebuilt from {applied:,} events in {seconds:.1f} s and swapped in", flush=True)
            return 0
        for projector in projections.select(args.names):
            progress = _progress(projector.name)
            applied = projections.rebuild(database.engine, projector.name, progress, embedder=database.embedder)
            print(file=sys.stderr)
            print(f"\r{projector.name}: rebuilt from {applied:,} events and swapped in", flush=True)
    finally:
        database.close()
    return 0


def verify_command(args: argparse.Namespace) -> int:
    """Verify each named projection; exit 1 if any table differs."""
    database = bootstrap.connect(Settings())
    equal = True
    try:
        for projector in projections.select(args.names):
            for diff in projections.verify(database.engine, projector.name, embedder=database.embedder):
                equal &= diff.equal
                if args.json:
                    print(json_line({**msgspec.to_builtins(diff), "equal": diff.equal}))
                else:
                    verdict = "same" if diff.equal else "DIFFERENT"
                    print(
                        f"{projector.name}.{diff.table}: {verdict} "
                        f"(live {diff.live_rows} rows {diff.live_checksum[:12]}, "
                        f"rebuilt {diff.rebuilt_rows} rows {diff.rebuilt_checksum[:12]})"
                    )
    finally:
        database.close()
    return 0 if equal else 1


def retry_command(args: argparse.Namespace) -> int:
    """Clear a projection's failure so its runner tries the event again."""
    database = bootstrap.connect(Settings())
    try:
        failed = projections.reset_failure(database.engine, args.name)
    finally:
        database.close()
    if failed:
        print(f"{args.name}: will retry from where it stopped")
    else:
        print(f"{args.name} has not failed: nothing to retry")
    return 0
