"""``memledger demo``: a tour on the embedded database.

Records a realistic conversation of two sessions, and a colleague's session in the
same project, extracts knowledge from them (offline
heuristic extractor), brings the read models up to date, then prints what each of
memledger's users sees: the context block an agent gets for a request, the graph
answer to a relationship question, and an auditor's provenance of one fact.
"""

from __future__ import annotations

import argparse
from typing import Any

from memledger import bootstrap
from memledger.config import Settings
from memledger.service import context, projections, provenance, search
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes

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
        print(f"database: {database.describe()}\n")
        results = record_turns(engine, DEMO_TENANT, _turns())
        replayed = sum(len(r.positions) for r in results if r.replayed)
        written = sum(len(r.positions) for r in results) - replayed
        print(f"1. recorded {written} new turns in {len(SESSIONS)} sessions ({replayed} were already in the ledger)")
        report = bootstrap.build_worker(database).drain()
        print(f"2. extracted {report.turns} turns into {report.events} events (heuristic extractor)")
        applied = projections.catch_up_all(database.engine)
        print(f"3. projected: {', '.join(f'{n} +{a}' for n, a in applied.items())}\n")

        scopes = Scopes(session="demo-thursday", project=USER.project, user=USER.user, org=USER.org)
        request = context.SelectRequest(
            tenant_id=DEMO_TENANT, scopes=scopes, request=REQUEST, deadline_ms=database.settings.context_deadline_ms
        )
        served = context.build_context(engine, request, vector_search=bootstrap.vector_search(database))
        print(f"4. an agent asks: {REQUEST!r}\n")
        print(served.block.text)
        print(f"\n   (recorded as {served.event_id}; `memledger context replay {served.event_id} --tenant demo`)\n")

        answer = search.query_graph(engine, DEMO_TENANT, QUESTION, depth=1)
        print("5. the graph, asked what project Phoenix uses and depends on:")
        for edge in answer.edges:
            print(f"   {edge.source_name} {edge.relation} {edge.target_name}  (turns: {', '.join(edge.source_turns)})")

        fact = next((item for item in served.selection.items if item.kind == "fact"), None)
        if fact is not None:
            trail = provenance.provenance(engine, DEMO_TENANT, fact.item_id)
            print(f"\n6. an auditor traces fact {fact.item_id} ({fact.text!r}):")
            for step in trail.steps:
                by = f" by {step.extractor}@{step.extractor_version}" if step.extractor else ""
                print(f"   event #{step.position} {step.type}{by}")
            for turn in trail.turns:
                print(f"   <- turn {turn.turn_id} (#{turn.position}, {turn.role}): {turn.text}")
    finally:
        database.close()
    return 0
