"""``memledger maintenance``: merge the entities the rules find to be one (run), see
where a tenant's graph stands (status), and merge or split entities by hand."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_tenant, nonblank
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import maintenance
from memledger.service.maintenance import MaintenanceReport, MaintenanceStatus, MergeDone

ACTOR = "cli"


def register(commands: Any) -> None:
    """Add ``maintenance`` and its subcommands to the parser."""
    parser = commands.add_parser(
        "maintenance",
        help="graph upkeep: merge entities that are one, see merges, hidden entities and decay",
        description="Entities whose names are near-equal (case, diacritics, punctuation, legal forms),"
        " one named by another's alias, or a person's initial that fits one name only are merged, each"
        " merge an event with its evidence; a split undoes one. Two people who share only a first name"
        " are never merged. Edge decay and the hiding of rarely mentioned entities happen when memory is"
        " read; status shows their settings.",
    )
    sub = parser.add_subparsers(dest="maintenance_command", required=True, metavar="SUBCOMMAND")
    run = sub.add_parser("run", help="merge the entities the rules find to be one")
    add_tenant(run)
    run.add_argument("--dry-run", action="store_true", help="only list the merges (default: off, merge them)")
    add_json(run)
    run.set_defaults(handler=run_command)
    status = sub.add_parser("status", help="merges made and pending, hidden entities, decay settings")
    add_tenant(status)
    add_json(status)
    status.set_defaults(handler=status_command)
    merge = sub.add_parser("merge", help="merge entities into one by hand")
    merge.add_argument("kept", type=nonblank, help="the id of the entity kept, e.g. 'organization:acme'")
    merge.add_argument("merged", nargs="+", type=nonblank, help="the ids of the entities merged into it")
    add_tenant(merge)
    add_json(merge)
    merge.set_defaults(handler=merge_command)
    split = sub.add_parser("split", help="undo a merge: the entities are their own again")
    split.add_argument("kept", type=nonblank, help="the id of the entity they were merged into")
    split.add_argument("merged", nargs="*", type=nonblank, help="which to split off (default: all)")
    split.add_argument("--reason", default="", help="why, kept in the ledger (default: none)")
    add_tenant(split)
    add_json(split)
    split.set_defaults(handler=split_command)


def run_command(args: argparse.Namespace) -> int:
    """Run the merge rules over one tenant and print what they merged."""
    database = bootstrap.connect(Settings())
    try:
        engine = database.for_tenant(args.tenant)
        report = maintenance.run(
            engine,
            args.tenant,
            owner=database.engine,
            dry_run=args.dry_run,
            actor=ACTOR,
            embedding_model=database.embedder.model,
        )
    finally:
        database.close()
    print(json_line(msgspec.to_builtins(report)) if args.json else "\n".join(_report_text(report)))
    return 0


def status_command(args: argparse.Namespace) -> int:
    """Print where a tenant's graph stands."""
    database = bootstrap.connect(Settings())
    try:
        engine, model = database.for_tenant(args.tenant), database.embedder.model
        found = maintenance.status(engine, args.tenant, aging=database.aging, embedding_model=model)
    finally:
        database.close()
    print(json_line(msgspec.to_builtins(found)) if args.json else "\n".join(_status_text(found)))
    return 0


def merge_command(args: argparse.Namespace) -> int:
    """Merge entities by hand."""
    database = bootstrap.connect(Settings())
    try:
        engine = database.for_tenant(args.tenant)
        done = maintenance.merge(engine, args.tenant, args.kept, args.merged, owner=database.engine, actor=ACTOR)
    finally:
        database.close()
    print(json_line(msgspec.to_builtins(done)) if args.json else _done_text("merged", "into", done))
    return 0


def split_command(args: argparse.Namespace) -> int:
    """Undo a merge."""
    database = bootstrap.connect(Settings())
    try:
        engine = database.for_tenant(args.tenant)
        done = maintenance.split(
            engine, args.tenant, args.kept, args.merged or None, owner=database.engine, actor=ACTOR, reason=args.reason
        )
    finally:
        database.close()
    print(json_line(msgspec.to_builtins(done)) if args.json else _done_text("split", "from", done))
    return 0


def _report_text(report: MaintenanceReport) -> list[str]:
    verb = "would merge" if report.dry_run else "merged"
    lines = [
        f"{verb} {report.entities_merged} of {report.entities} entities in {len(report.merges)} groups"
        f" ({report.seconds:.1f} s)"
    ]
    lines += [
        f"  {', '.join(m.merged_entity_ids)} -> {m.kept_entity_id} ({m.rule}, score {m.score}: {m.evidence})"
        for m in report.merges
    ]
    lines.append(f"cosine rule: {report.cosine_rule}")
    return lines


def _status_text(found: MaintenanceStatus) -> list[str]:
    last = f", the last at {found.last_merged_at:%Y-%m-%d %H:%M}" if found.last_merged_at else ""
    return [
        f"entities: {found.entities}; merged into others: {found.merged_entities}{last}",
        f"merges the rules would make now: {found.pending_merges}",
        f"hidden from context and search: {found.hidden_entities} (fewer than {found.min_mentions} mentions,"
        f" nothing within {found.recent_days:g} days of the latest sighting)",
        f"edge weight half-life: {found.half_life_days:g} days",
        f"cosine rule: {found.cosine_rule}",
    ]


def _done_text(verb: str, word: str, done: MergeDone) -> str:
    shown = "" if done.shown else " (recorded; the read model shows it shortly)"
    return f"{verb} {', '.join(done.merged_entity_ids)} {word} {done.kept_entity_id}{shown}"
