"""``memledger worker`` and ``memledger extract --once``."""

from __future__ import annotations

import argparse
import signal
import sys
from collections import Counter
from typing import Any

from memledger import bootstrap
from memledger.cli.arguments import positive_int
from memledger.cli.extractor_start import FROM_NOW_HELP, announce_start
from memledger.config import Settings
from memledger.errors import InvalidCommand, NotFound
from memledger.service import memory, reextraction
from memledger.service.extraction_loop import WorkerLoop


def register(commands: Any) -> None:
    """Add the extraction commands to the parser."""
    worker = commands.add_parser("worker", help="run the extraction worker until interrupted")
    worker.add_argument("--from-now", action="store_true", help=FROM_NOW_HELP)
    worker.set_defaults(handler=worker_command)
    extract = commands.add_parser(
        "extract",
        help="extract pending turns (--once), try another extractor in shadow read models "
        "(--extractor E --rebuild-into LABEL), or compare a shadow with the live models (diff LABEL)",
    )
    extract.add_argument("action", nargs="?", choices=["diff", "drop"], help="diff or drop a shadow (default: neither)")
    extract.add_argument("label", nargs="?", help="the shadow's label, a-z, 0-9 and _ (required with diff and drop)")
    extract.add_argument(
        "--once", action="store_true", help="process what is pending, then exit (default: off, keep running)"
    )
    extract.add_argument("--from-now", action="store_true", help=FROM_NOW_HELP)
    extract.add_argument(
        "--extractor",
        choices=["heuristic", "llm"],
        help="the extractor to run (default: MEMLEDGER_EXTRACTOR, heuristic)",
    )
    extract.add_argument(
        "--rebuild-into",
        dest="rebuild_into",
        metavar="LABEL",
        help="build shadow read models under this label instead of the live ones (default: live)",
    )
    extract.add_argument(
        "--limit", type=positive_int, default=20, help="with diff: changes to print per kind (default: 20)"
    )
    extract.set_defaults(handler=extract_command)


def extract_command(args: argparse.Namespace) -> int:
    """Dispatch ``extract``'s modes."""
    if args.action is not None:
        if not args.label:
            raise InvalidCommand(f"extract {args.action} needs a shadow label")
        return diff_command(args) if args.action == "diff" else drop_command(args)
    if args.rebuild_into:
        return shadow_command(args)
    if not args.once:
        raise InvalidCommand("say --once, --extractor E --rebuild-into LABEL, or diff LABEL")
    return once_command(args)


def once_command(args: argparse.Namespace) -> int:
    """Extract every pending turn, then exit."""
    database = bootstrap.connect(Settings())
    try:
        worker = bootstrap.build_worker(database)
        announce_start(worker, args.from_now)
        report = worker.drain()
        print(
            f"{worker.name}: extracted {report.turns} turns into {report.events} events "
            f"(refused {report.refused_secrets} secrets, skipped {report.skipped} over limits, "
            f"dropped {report.dropped_low_confidence} below confidence 0.5)"
        )
        if report.erased:
            print(f"passed over {report.erased} turns erased before their extraction")
        if report.refused_answers or report.refused_items or report.fallbacks:
            print(
                f"the model: {report.refused_answers} answers refused, "
                f"{report.refused_items} items of kept answers dropped (not the schema's), "
                f"{report.fallbacks} conversations extracted by the fallback instead"
            )
        if report.model_switches:
            print(f"{report.model_switches} conversations answered by a later model of the chain (the first failed)")
        if report.busy_elsewhere:
            print("another worker of this extractor is running; it will extract the rest")
    finally:
        database.close()
    return 0


def worker_command(args: argparse.Namespace) -> int:
    """Run the worker on its schedule, woken early by new turns, until SIGINT/SIGTERM."""
    settings = Settings()
    database = bootstrap.connect(settings)
    try:
        worker = bootstrap.build_worker(database)
        announce_start(worker, args.from_now)
        loop = WorkerLoop(
            worker,
            interval_s=settings.worker_interval_s,
            poll_interval_s=settings.poll_interval_s * 2,
        )
        signal.signal(signal.SIGTERM, lambda *_: loop.stop())
        bootstrap.freeze_startup_heap()
        print(f"worker {loop.worker.name} running; Ctrl-C to stop", flush=True)
        try:
            loop.run()
        except KeyboardInterrupt:
            loop.stop()
    finally:
        database.close()
    return 0


def shadow_command(args: argparse.Namespace) -> int:
    """Replay every turn through an extractor into shadow read models."""
    settings = Settings()
    if args.extractor:
        settings = settings.model_copy(update={"extractor": args.extractor})
    database = bootstrap.connect(settings)
    try:
        extractor = bootstrap.build_extractor(settings)
        turns = reextraction.rebuild_into(
            database.engine,
            extractor,
            args.rebuild_into,
            max_entities=settings.max_entities_per_conversation,
            max_relationships=settings.max_relationships_per_conversation,
            max_facts=settings.max_facts_per_conversation,
            progress=lambda n: print(f"\r{n:,} turns", end="", file=sys.stderr, flush=True),
        )
        print(file=sys.stderr)
        print(f"shadow {args.rebuild_into!r}: {turns} turns extracted by {extractor.name}@{extractor.version}")
        print(f"compare with: memledger extract diff {args.rebuild_into}")
    finally:
        database.close()
    return 0


def diff_command(args: argparse.Namespace) -> int:
    """Print what the shadow would add, lose or change."""
    database = bootstrap.connect(Settings())
    try:
        changes = reextraction.diff(database.engine, args.label)
    finally:
        database.close()
    tally = Counter((c.kind, c.change) for c in changes)
    for kind, name in memory.READ_MODEL.items():  # each kind and the read model it lives in ("entities")
        counts = ", ".join(f"{tally[(kind, ch)]} {ch}" for ch in ("added", "lost", "changed"))
        print(f"{name}: {counts}")
        shown = [c for c in changes if c.kind == kind][: args.limit]
        for c in shown:
            print(f"  {c.change:7} {c.tenant_id} {c.item_id}: {c.live or '-'} -> {c.shadow or '-'}")
    return 0


def drop_command(args: argparse.Namespace) -> int:
    """Remove a shadow's copies; ``NotFound`` if there are none."""
    database = bootstrap.connect(Settings())
    try:
        dropped = reextraction.drop(database.engine, args.label)
    finally:
        database.close()
    if not dropped:
        raise NotFound(f"no shadow {args.label!r} to drop (an erasure drops every shadow)")
    print(f"dropped shadow {args.label!r}")
    return 0
