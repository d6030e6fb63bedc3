"""``memledger demo``: start the embedded database, record a conversation, read it back."""

from __future__ import annotations

import argparse
from typing import Any

from memledger import bootstrap
from memledger.config import Settings
from memledger.events.catalogue import Scopes, TurnRecorded
from memledger.service.record import TurnInput, record_turns
from memledger.store import event_store

DEMO_TENANT = "demo"
SCOPES = Scopes(session="demo-session-1", project="phoenix", user="alice", org="acme")
CONVERSATION = (
    ("user", "I'm using FastAPI for project Phoenix with my colleague Sarah."),
    ("assistant", "Noted. Which database does Phoenix use?"),
    ("user", "Project Phoenix uses PostgreSQL. My manager Dave approved the budget."),
    ("assistant", "Got it: PostgreSQL for Phoenix, and Dave approved the budget."),
    ("user", "preference: tabs over spaces"),
    ("user", "I switched from React to Vue last week."),
)


def register(commands: Any) -> None:
    """Add ``demo`` to the parser."""
    demo = commands.add_parser("demo", help="record a sample conversation and read it back")
    demo.set_defaults(handler=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    """Record the sample conversation (idempotently) and print it as an auditor reads it."""
    database = bootstrap.connect(Settings())
    try:
        print(f"database: {database.describe()}")
        turns = [
            TurnInput(role=role, text=text, scopes=SCOPES, turn_id=f"demo-turn-{n}")
            for n, (role, text) in enumerate(CONVERSATION, start=1)
        ]
        results = record_turns(database.engine, DEMO_TENANT, turns)
        replayed = sum(len(r.positions) for r in results if r.replayed)
        written = sum(len(r.positions) for r in results) - replayed
        print(f"recorded {written} new turns; {replayed} were already in the ledger (idempotent)\n")
        with database.engine.connect() as conn:
            history = event_store.read_stream(conn, DEMO_TENANT, "conversation:demo-session-1")
        print("the ledger, as an auditor reads it:")
        for rec in history:
            event = rec.event
            assert isinstance(event, TurnRecorded)
            print(
                f"  #{rec.position:<6} {rec.recorded_at:%Y-%m-%d %H:%M:%S} "
                f"{rec.stream_id} v{rec.stream_version} {event.turn_id} "
                f"[{event.role}] {event.text}"
            )
        print(f"\n{len(history)} events in stream conversation:demo-session-1 of tenant demo")
    finally:
        database.close()
    return 0
