"""``memledger demo``: a tour on the embedded database.

Records a realistic conversation of two sessions, and a colleague's session in the
same project, extracts knowledge from them (offline
heuristic extractor), brings the read models up to date, then prints what each of
memledger's users sees: the context block an agent gets for a request, the graph
answer to a relationship question, and an auditor's provenance of one fact.
"""

from __future__ import annotations

import argparse
import shlex
from collections import Counter
from typing import Any

from sqlalchemy.engine import Engine

from memledger import bootstrap
from memledger.cli.output import edge_text, names_of
from memledger.config import Settings
from memledger.service import context, projections, provenance, search
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes, SelectedItem

DEMO_TENANT = "demo"
USER = Scopes(project="phoenix", user="alice", org="acme")
# (session, user, turns): Alice's two sessions, then her colleague Bob's in the same
# project (his words are project memory too, and Alice's block says they are his).
SESSIONS = (
    (
        "demo-monday",
        USER.user,
        (
            ("user", "I'm using FastAPI for project Phoenix with my colleague Sarah."),
            ("assistant", "Noted. Which database does Phoenix use?"),
            ("user", "Project Phoenix uses PostgreSQL. My manager Dave approved the budget."),
            ("user", "I prefer dark mode over light mode in every editor."),
            ("user", "decision (project): we ship Phoenix on Fridays"),
        ),
    ),
    (
        "demo-thursday",
        USER.user,
        (
            ("user", "I switched from React to Vue for the Phoenix frontend."),
            ("user", "Phoenix depends on Redis for caching."),
            ("user", "terminology (project): 'the box' means the build server"),
            ("assistant", "Understood, Vue it is."),
        ),
    ),
    (
        "demo-bob-wednesday",
        "bob",
        (("user", "I always run the Phoenix API tests against a fresh PostgreSQL database before merging."),),
    ),
)
ASKED = Scopes(session="demo-thursday", project=USER.project, user=USER.user, org=USER.org)
PLURALS = {"fact": "facts", "entity": "entities", "relationship": "relationships", "turn": "turns"}
REQUEST = "Which framework and database should I use to add an API endpoint to Phoenix?"
QUESTION = "Phoenix"


def register(commands: Any) -> None:
    """Add ``demo`` to the parser."""
    demo = commands.add_parser("demo", help="a tour: record, extract, then context, graph and provenance")
    demo.set_defaults(handler=demo_command)


def _turns() -> list[TurnInput]:
    return [
        TurnInput(
            role=role,  # type: ignore[arg-type]
            text=text,
            scopes=Scopes(session=session, project=USER.project, user=user, org=USER.org),
            turn_id=f"{session}-{n}",
        )
        for session, user, turns in SESSIONS
        for n, (role, text) in enumerate(turns, start=1)
    ]


def demo_command(args: argparse.Namespace) -> int:
    """Run the tour (idempotent: a second run records nothing twice)."""
    database = bootstrap.connect(Settings())
    try:
        engine = database.for_tenant(DEMO_TENANT)  # what an agent does runs fenced to its tenant
        print(f"database: {database.describe()}")
        print(f"tenant: {DEMO_TENANT}; Alice's scopes: {_options(USER)}; her colleague Bob: --user bob\n")
        _record_and_project(database, engine)
        served = _serve(database, engine)
        _graph(engine, database)
        fact = next((item for item in served.selection.items if item.kind == "fact"), None)
        if fact is not None:
            _trace(engine, fact)
        _ask_yourself(served.event_id, fact)
    finally:
        database.close()
    return 0


def _options(scopes: Scopes) -> str:
    """``scopes`` as the command line's options."""
    given = (("session", scopes.session), ("project", scopes.project), ("user", scopes.user), ("org", scopes.org))
    return " ".join(f"--{kind} {shlex.quote(key)}" for kind, key in given if key)


def _record_and_project(database: bootstrap.App, engine: Engine) -> None:
    """Steps 1 to 3: record the turns, extract them, bring the read models up to date."""
    results = record_turns(engine, DEMO_TENANT, _turns())
    replayed = sum(len(r.positions) for r in results if r.replayed)
    written = sum(len(r.positions) for r in results) - replayed
    print(f"1. recorded {written} new turns in {len(SESSIONS)} sessions ({replayed} were already in the ledger)")
    report = bootstrap.build_worker(database).drain()
    print(f"2. extracted {report.turns} turns into {report.events} events (heuristic extractor)")
    # Events each read model applied, not its rows: an entity named in three turns is
    # three events and one row; a fact stated twice is reinforced, not added.
    caught_up = projections.catch_up_all(database.engine, embedder=database.embedder)
    applied = {name: count for name, count in caught_up.items() if count}
    events = ", ".join(f"{name} {count}" for name, count in applied.items()) or "none new"
    print(f"3. brought the read models up to date (events applied: {events})\n")


def _serve(database: bootstrap.App, engine: Engine) -> context.ServedContext:
    """Step 4: the block an agent gets for ``REQUEST`` in Alice's Thursday session."""
    request = context.SelectRequest(
        tenant_id=DEMO_TENANT, scopes=ASKED, request=REQUEST, deadline_ms=database.settings.context_deadline_ms
    )
    served = context.build_context(
        engine,
        request,
        vector_search=bootstrap.vector_search(database),
        aging=database.aging,
        limit=database.selections,
    )
    print(f"4. an agent asks, in Alice's session ({_options(ASKED)}): {REQUEST!r}\n")
    print(served.block.text)
    print(f"\n   the block holds {_kinds(served)}: the most relevant of what these scopes may see")
    print(f"   (recorded as {served.event_id})\n")
    return served


def _kinds(served: context.ServedContext) -> str:
    """How many items of each kind the block shows, e.g. "7 facts, 1 entity"."""
    shown = set(served.block.item_ids)
    counts = Counter(item.kind for item in served.selection.items if item.item_id in shown)
    parts = [f"{n} {PLURALS[kind] if n != 1 else kind}" for kind, n in counts.items()]
    return ", ".join(parts) or "no items"


def _graph(engine: Engine, database: bootstrap.App) -> None:
    """Step 5: what the graph says project Phoenix uses and depends on."""
    answer = search.query_graph(engine, DEMO_TENANT, QUESTION, depth=1, aging=database.aging)
    ends = [name for edge in answer.edges for name in (edge.source_name, edge.target_name)]
    names = names_of(engine, DEMO_TENANT, ASKED, ends)
    print(f"5. the graph around {QUESTION} ({len(answer.edges)} relationships):")
    for edge in answer.edges:
        line = edge_text(names, edge.source_name, edge.relation, edge.target_name)
        print(f"   {line}  (turns: {', '.join(edge.source_turns)})")


def _trace(engine: Engine, fact: SelectedItem) -> None:
    """Step 6: the events and turns behind one fact of the block."""
    trail = provenance.provenance(engine, DEMO_TENANT, fact.item_id)
    print(f"\n6. an auditor traces fact {fact.item_id} ({fact.text!r}):")
    for step in trail.steps:
        by = f" by {step.extractor}@{step.extractor_version}" if step.extractor else ""
        print(f"   event #{step.position} {step.type}{by}")
    for turn in trail.turns:
        print(f"   <- turn {turn.turn_id} (#{turn.position}, {turn.role}): {turn.text}")


def _ask_yourself(event_id: str, fact: SelectedItem | None) -> None:
    """The commands that ask the same questions of the same memory."""
    tenant = f"--tenant {DEMO_TENANT}"
    print("\nask it yourself (facts are found only under the scopes they were said in):")
    print(f"   memledger context {shlex.quote(REQUEST)} {tenant} {_options(ASKED)}")
    print(f"   memledger search {QUESTION} {tenant} {_options(USER)}")
    print(f"   memledger graph {QUESTION} {tenant}")
    print(f"   memledger graph me {tenant} --user {USER.user}")
    if fact is not None:
        print(f"   memledger provenance {fact.item_id} {tenant}")
    print(f"   memledger context replay {event_id} {tenant}")
