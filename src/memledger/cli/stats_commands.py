"""``memledger stats``: a tenant's graph in numbers (``graph`` takes an entity's name,
so its statistics are a command of their own)."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_tenant, positive_int
from memledger.cli.output import json_line
from memledger.config import Settings
from memledger.service import graph_stats
from memledger.service.graph_stats import GraphStats, TopEntity


def register(commands: Any) -> None:
    """Add ``stats`` to the parser."""
    stats = commands.add_parser(
        "stats",
        help="a tenant's graph in numbers: entities, relationships, the top entities",
        description="Count a tenant's entities by type and relationships by relation and status, list the"
        " entities with the most active relationships and the most mentions, and say how many entities"
        " were mentioned only once. Counts hold every user's entities; the top lists hold no other"
        " user's (only that of --user, if given).",
    )
    add_tenant(stats)
    stats.add_argument(
        "--top",
        type=positive_int,
        default=10,
        help=f"how many entities each top list names (1 to {graph_stats.MAX_TOP}; default: 10)",
    )
    stats.add_argument(
        "--user",
        metavar="KEY",
        help="the person's key, e.g. an account id: their own entity may be listed (default: none)",
    )
    add_json(stats)
    stats.set_defaults(handler=stats_command)


def stats_command(args: argparse.Namespace) -> int:
    """Print the statistics of a tenant's graph."""
    database = bootstrap.connect(Settings())
    try:
        engine = database.for_tenant(args.tenant)
        found = graph_stats.graph_stats(engine, args.tenant, top=args.top, user=args.user, aging=database.aging)
    finally:
        database.close()
    if args.json:
        print(json_line(msgspec.to_builtins(found)))
        return 0
    for line in _text(found):
        print(line)
    return 0


def _text(found: GraphStats) -> list[str]:
    return [
        f"entities: {found.entities} active; relationships: {found.relationships} active",
        f"mentioned once: {found.mentioned_once} entities ({found.mentioned_once_share:.0%} of the active)",
        "entities by type:",
        *(f"  {kind}: {_statuses(counts)}" for kind, counts in found.entities_by_type.items()),
        "relationships by relation:",
        *(f"  {relation}: {_statuses(counts)}" for relation, counts in found.relationships_by_relation.items()),
        "most connected:",
        *map(_top, found.top_by_degree),
        "most mentioned:",
        *map(_top, found.top_by_mentions),
    ]


def _statuses(counts: dict[str, int]) -> str:
    return ", ".join(f"{count} {status}" for status, count in counts.items())


def _top(entity: TopEntity) -> str:
    return (
        f"  {entity.name} ({entity.entity_type}, {entity.entity_id}): "
        f"{entity.degree} relationships, {entity.mention_count} mentions"
    )
