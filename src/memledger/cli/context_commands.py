"""Commands for agents and auditors: context, replay, search, graph, provenance, history.

Each names its tenant and runs as the application role, fenced to that tenant by
row-level security (``bootstrap.App.for_tenant``)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import msgspec

from memledger import bootstrap
from memledger.cli.arguments import add_json, add_scopes, add_tenant, nonblank
from memledger.cli.output import edge_text, json_line, names_of
from memledger.config import Settings
from memledger.errors import InvalidCommand, NotFound
from memledger.service import context, context_replay, ledger_pages, provenance, search
from memledger.service.ledger_pages import MAX_POSITION, position_of
from memledger.service.types import ITEM_KINDS, Scopes, SelectedItem, TurnRef


def _scoped(parser: argparse.ArgumentParser) -> None:
    add_tenant(parser)
    add_scopes(parser)
    add_json(parser)


REPLAY_USAGE = "memledger context replay EVENT_ID --tenant TENANT [--json]"
REPLAY_HELP = f"""usage: {REPLAY_USAGE}

Render a served context block again from the ledger and say whether it matches
what was served (exit 1 when it does not).

positional arguments:
  EVENT_ID         the ContextServed event id that `memledger context` printed
                   ("served as context:...")

options:
  --tenant TENANT  the tenant that was served the block (required)
  --json           print one JSON object for scripts (default: text for people)
"""


def asks_replay_help(argv: Sequence[str]) -> bool:
    """Whether ``argv`` is ``context ... replay ... --help``: argparse would print the
    general context help, which offers options replay does not take."""
    if not argv or argv[0] != "context" or not {"-h", "--help"} & set(argv):
        return False
    return any(word == "replay" and argv[at - 1] != "--request" for at, word in enumerate(argv) if at > 0)


def register(commands: Any) -> None:
    """Add the agent and auditor commands to the parser."""
    _register_context(commands)
    _register_search(commands)
    _register_graph(commands)
    prov = commands.add_parser("provenance", help="the events and turns behind an item")
    prov.add_argument("item_id", help="a fact, entity or relationship id, as a block or search cites it")
    add_tenant(prov)
    add_json(prov)
    prov.set_defaults(handler=provenance_command)
    hist = commands.add_parser("history", help="every fact ever stated on a key")
    hist.add_argument("--key", required=True, type=nonblank, help="the fact's key, e.g. 'phoenix: database' (required)")
    add_tenant(hist)
    add_json(hist, "JSON lines")
    hist.set_defaults(handler=history_command)


def _register_context(commands: Any) -> None:
    ctx = commands.add_parser(
        "context",
        help="the memory block for a request (or: context replay EVENT_ID)",
        description="Print the read-only memory block an agent gets for a request, recorded in the ledger"
        f" as a ContextServed event. To check a served block later: {REPLAY_USAGE}"
        " (see `memledger context replay --help`).",
    )
    ctx.add_argument("request", nargs="?", help="what the agent is asked, quoted; or 'replay' (see above)")
    ctx.add_argument("event_id", nargs="?", metavar="EVENT_ID", help="with replay: the ContextServed event id")
    ctx.add_argument(
        "--request",
        dest="request_text",
        metavar="TEXT",
        help="the request, whatever it says, even 'replay' (default: the positional request)",
    )
    _scoped(ctx)
    ctx.add_argument(
        "--as-of",
        dest="as_of",
        help="memory as the ledger held it then: a ledger position, or a recorded time (ISO 8601 with a"
        " timezone), meaning the events recorded by then, whatever time their turns say they happened"
        " (default: now)",
    )
    ctx.add_argument(
        "--style",
        choices=["text", "xml"],
        default="text",
        help="the block's markup: plain text with headings, or XML tags (default: text)",
    )
    ctx.add_argument("--budget", type=int, default=5000, help="the block's size in characters (default: 5000)")
    ctx.add_argument(
        "--max-tokens",
        dest="max_tokens",
        type=int,
        help="also keep the block within this many tokens (default: no token limit)",
    )
    ctx.add_argument("--model", help="count --max-tokens with this model's tokenizer (default: the built-in estimate)")
    ctx.set_defaults(handler=context_command)


def _register_search(commands: Any) -> None:
    find = commands.add_parser("search", help="search a tenant's memory")
    find.add_argument("query", help="what to look for, in words")
    _scoped(find)
    find.add_argument("-k", type=int, default=10, help=f"how many items (1 to {search.MAX_K}; default: 10)")
    find.add_argument(
        "--kind",
        dest="kinds",
        action="append",
        choices=list(ITEM_KINDS),
        help="only items of this kind (repeatable; default: all kinds)",
    )
    find.set_defaults(handler=search_command)


def _register_graph(commands: Any) -> None:
    graph = commands.add_parser("graph", help="relationships around an entity (the whole tenant's)")
    graph.add_argument("entity", help="an entity name or id, or 'me' (with --user)")
    _scoped(graph)
    graph.add_argument("--depth", type=int, default=1, help=f"hops (1 to {search.MAX_DEPTH}; default: 1)")
    graph.add_argument(
        "--relation",
        action="append",
        dest="relations",
        help="only this relation, e.g. USES, any case (repeatable; default: all)",
    )
    types = ", ".join(search.ENTITY_TYPES)
    graph.add_argument(
        "--type",
        action="append",
        dest="entity_types",
        help=f"only edges to this type: {types} (repeatable; default: all)",
    )
    graph.set_defaults(handler=graph_command)


def scopes_of(args: argparse.Namespace) -> Scopes:
    """The scopes given on the command line."""
    return Scopes(session=args.session, project=args.project, user=args.user, org=args.org)


def parse_as_of(text: str | None) -> datetime | int | None:
    """A time (timezone-aware ISO 8601) or a ledger position (ASCII digits: "²" and
    other digits ``int`` cannot read are not one)."""
    if text is None:
        return None
    if text.isascii() and text.isdecimal():
        position = position_of(text)
        if position is None:
            raise InvalidCommand(f"--as-of {text[:40]} is beyond the last ledger position, {MAX_POSITION - 1}")
        return position
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidCommand(f"--as-of must be a position or an ISO 8601 time, not {text!r}") from None
    if moment.tzinfo is None:
        raise InvalidCommand("--as-of needs a timezone (e.g. 2026-11-21T10:42:00+00:00)")
    return moment


def _erasures_note(replayed: context_replay.Replay) -> str:
    """Why a replay after an erasure may not match: the erasure took words out of the past."""
    erasures = f"{replayed.erasures_since} erasure{'s' if replayed.erasures_since > 1 else ''}"
    if replayed.record_erased:
        return f"{erasures} since took this record's request and items: what it served is gone from the ledger"
    if replayed.erased_items:
        return f"{erasures} since took {len(replayed.erased_items)} of its items out of the ledger"
    return f"{erasures} since; none took an item of this block out of the ledger"


def _replay_or_request(args: argparse.Namespace) -> tuple[str | None, str]:
    """(the event id to replay, or None; the request): ``context replay ID``,
    ``context REQUEST`` or ``context --request REQUEST`` (which may say "replay").
    A blank request is refused, as over HTTP: a person at a prompt meant something."""
    replay_id, text = _parsed_request(args)
    if replay_id is None and not text.strip():
        raise InvalidCommand("the request is blank: say what the agent is asked")
    return replay_id, text


def _parsed_request(args: argparse.Namespace) -> tuple[str | None, str]:
    if args.request_text is not None:
        if args.request is not None:
            raise InvalidCommand("give the request once: as an argument or with --request, not both")
        return None, args.request_text
    if args.request is None:
        raise InvalidCommand("context needs a request (or: context replay EVENT_ID)")
    if args.request == "replay":
        if not args.event_id:
            hint = "a request saying just 'replay' is asked with --request"
            raise InvalidCommand(f"context replay needs the ContextServed event id ({hint})")
        return args.event_id, ""
    if args.event_id is not None:
        extra = f"{args.event_id!r} is one argument too many (quote the request)"
        raise InvalidCommand(f"context takes one request; {extra}")
    return None, args.request


def context_command(args: argparse.Namespace) -> int:
    """Print the block for a request, or replay a served one."""
    replay_id, text = _replay_or_request(args)
    database = bootstrap.connect(Settings())
    try:
        if replay_id is not None:
            replayed = context_replay.replay(
                database.for_tenant(args.tenant), args.tenant, replay_id, database.tokenizers
            )
            return _print_replay(replay_id, replayed, as_json=args.json)
        ledger_pages.require_tenant(database.for_tenant(args.tenant), args.tenant)
        request = context.SelectRequest(
            tenant_id=args.tenant,
            scopes=scopes_of(args),
            request=text,
            budget_chars=args.budget,
            as_of=parse_as_of(args.as_of),
            deadline_ms=database.settings.context_deadline_ms,
        )
        if args.model:
            bootstrap.load_tokenizers(database)
        served = context.build_context(
            database.for_tenant(args.tenant),
            request,
            style=args.style,
            max_tokens=args.max_tokens,
            token_model=args.model,
            vector_search=bootstrap.vector_search(database),
            aging=database.aging,
            limit=database.selections,
            tokenizers=database.tokenizers,
        )
    finally:
        database.close()
    if args.json:
        print(
            json_line(
                {
                    "block": served.block.text,
                    "event_id": served.event_id,
                    "tokens_estimated": served.tokens_estimated,
                    "selection": msgspec.to_builtins(served.selection),
                }
            )
        )
    else:
        print(served.block.text)
        print(f"\n(served as {served.event_id})")
    return 0


def _print_replay(event_id: str, replayed: context_replay.Replay, *, as_json: bool) -> int:
    """Print a replayed block and whether it matches (one JSON object with ``--json``);
    exit 1 when it does not."""
    if as_json:
        print(json_line(_replay_record(event_id, replayed)))
        return 0 if replayed.matches else 1
    print(replayed.block.text)
    verdict = "matches" if replayed.matches else "DOES NOT MATCH"
    print(f"\nreplayed {event_id}: hash {replayed.block.sha256[:16]} {verdict} the served block")
    if replayed.erasures_since:
        print(_erasures_note(replayed))
    return 0 if replayed.matches else 1


def _replay_record(event_id: str, replayed: context_replay.Replay) -> dict[str, Any]:
    """A replay for scripts: the verdict, both hashes, the block rendered again, and
    what erasures since took out of it (``served`` is the ContextServed record)."""
    return {
        "event_id": event_id,
        "matches": replayed.matches,
        "sha256": replayed.block.sha256,
        "served_sha256": replayed.served.block_hash,
        "block": replayed.block.text,
        "item_ids": list(replayed.block.item_ids),
        "erasures_since": replayed.erasures_since,
        "record_erased": replayed.record_erased,
        "erased_items": list(replayed.erased_items),
        "served": msgspec.to_builtins(replayed.served),
    }


def search_command(args: argparse.Namespace) -> int:
    """Print the best items for a query."""
    database = bootstrap.connect(Settings())
    try:
        engine, vectors = database.for_tenant(args.tenant), bootstrap.vector_search(database)
        ledger_pages.require_tenant(engine, args.tenant)
        items = search.search(
            engine,
            args.tenant,
            scopes_of(args),
            args.query,
            k=args.k,
            kinds=args.kinds,
            vector_search=vectors,
            aging=database.aging,
        )
        names = names_of(engine, args.tenant, scopes_of(args), (item.text for item in items))
    finally:
        database.close()
    for item in items:
        if args.json:
            print(json_line(msgspec.to_builtins(item)))
        else:
            text = names.endpoints(item.kind, item.text)
            print(f"{item.score:6.3f} {item.kind:12} {item.item_id}: {text} (turns: {_cited(item)})")
    return 0


def _cited(item: SelectedItem) -> str:
    """An item's cited turns, each with its speaker and day when known."""
    shown = []
    for ref in item.cited or tuple(TurnRef(turn_id=t) for t in item.source_turns):
        about = [x for x in (ref.speaker, ref.said_at.date().isoformat() if ref.said_at else None) if x]
        shown.append(ref.turn_id + (f" ({', '.join(about)})" if about else ""))
    return ", ".join(shown)


def graph_command(args: argparse.Namespace) -> int:
    """Print the relationships around an entity."""
    database = bootstrap.connect(Settings())
    try:
        engine = database.for_tenant(args.tenant)
        answer = search.query_graph(
            engine,
            args.tenant,
            args.entity,
            depth=args.depth,
            relations=args.relations,
            entity_types=args.entity_types,
            user=args.user,
            every_user=True,  # an operator's inspection, which reads every scope anyway
            aging=database.aging,
        )
        ends = [name for edge in answer.edges for name in (edge.source_name, edge.target_name)]
        names = names_of(engine, args.tenant, scopes_of(args), ends)
    finally:
        database.close()
    if answer.entity is None and not _names_the_user(args):
        hint = "; for the speaker, give --user" if search.names_the_speaker(args.entity) else ""
        raise NotFound(f"tenant {args.tenant!r} has no entity {args.entity!r} (by name or id){hint}")
    if args.json:
        print(json_line(msgspec.to_builtins(answer)))
        return 0
    for edge in answer.edges:
        context_text = f" ({edge.context})" if edge.context else ""
        print(
            f"hop {edge.hop}: {edge_text(names, edge.source_name, edge.relation, edge.target_name)}{context_text}"
            f"  [confidence {edge.confidence:.2f}; turns {', '.join(edge.source_turns)}]"
        )
    if not answer.edges:  # the entity is there, with no relationship (of those asked for)
        print("no relationships found")
    return 0


def _names_the_user(args: argparse.Namespace) -> bool:
    """Whether ``graph`` was asked about the speaker ("me" with ``--user``), who is no
    entity of the graph: none found is then an empty answer, not an unknown entity."""
    return bool(args.user) and search.names_the_speaker(args.entity)


def provenance_command(args: argparse.Namespace) -> int:
    """Print the chain of events behind an item, back to its turns."""
    database = bootstrap.connect(Settings())
    try:
        found = provenance.provenance(database.for_tenant(args.tenant), args.tenant, args.item_id)
    finally:
        database.close()
    if args.json:
        print(json_line(msgspec.to_builtins(found)))
        return 0
    print(f"provenance of {found.item_id}:")
    for step in found.steps:
        by = f" by {step.extractor}@{step.extractor_version}" if step.extractor else ""
        print(f"  #{step.position} {step.recorded_at:%Y-%m-%d %H:%M:%S} {step.type}{by} (event {step.event_id})")
    for turn in found.turns:
        print(f"  from turn {turn.turn_id} (#{turn.position}, {turn.role}): {turn.text}")
    return 0


def history_command(args: argparse.Namespace) -> int:
    """Print every fact ever stated on a key, and what happened to each."""
    database = bootstrap.connect(Settings())
    try:
        steps = provenance.key_history(database.for_tenant(args.tenant), args.tenant, args.key)
    finally:
        database.close()
    if not steps:  # no fact was ever stated on it (or all were erased): no such key
        raise NotFound(f"no facts on key {args.key!r} in tenant {args.tenant!r}")
    for step in steps:
        if args.json:
            print(json_line(msgspec.to_builtins(step)))
        else:
            what = step.payload.get("statement") or step.payload.get("item_id") or ""
            key = step.payload.get("key")
            on = f" [{key}]" if isinstance(key, str) and key.casefold() != args.key.casefold().strip() else ""
            print(f"#{step.position} {step.recorded_at:%Y-%m-%d %H:%M:%S} {step.type}{on}: {what}")
    return 0
