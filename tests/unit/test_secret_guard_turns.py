"""The secret guard on whole turns. Pure; no database.

Before, a turn "We decided the root password is Tr0ub4dor&3x." lost its fact to the
guard but kept the entity "Tr0ub4dor&3x" and the edge "user DECIDED Tr0ub4dor&3x":
the guard read each candidate alone, and the value, apart from "password is", looks
like any name. (The phrasings the guard finds: test_secret_guard.py.) The
credentials below are made up.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memledger.events import codec
from memledger.events.catalogue import Scopes
from memledger.extraction.heuristic import extract_text
from memledger.extraction.policy import Counts, Policy, to_events
from memledger.extraction.protocol import (
    DirectiveCandidate,
    EntityCandidate,
    FactCandidate,
    RelationshipCandidate,
    RetractionCandidate,
    TurnExtraction,
    TurnText,
)

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def turn(text: str) -> TurnText:
    return TurnText(
        tenant_id="tenant-a",
        turn_id="t1",
        event_id="turn:t1",
        role="user",
        text=text,
        scopes=Scopes(session="s1", project="vault", user="sam"),
        occurred_at=NOW,
    )


def run(text: str, found: TurnExtraction) -> tuple[list[str], Counts]:
    """The encoded events the policy makes of ``found`` for a turn saying ``text``."""
    counts = Counts()
    pairs = to_events(turn(text), found, counts, Policy(auto_promote=True), extractor="toy", version="1")
    return [codec.encode(new.event).decode() for _, new in pairs], counts


# -- a turn that holds a secret gives nothing ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("We decided the root password is Tr0ub4dor&3x.", "Tr0ub4dor&3x"),
        ("Project Vault uses PostgreSQL with user admin and password Hunter#2024.", "Hunter#2024"),
        ("We decided the database password rotates monthly, currently Hunter#2024.", "Hunter#2024"),
    ],
)
def test_nothing_the_heuristic_extracts_from_a_turn_holding_a_password_is_stored(text: str, value: str) -> None:
    found = extract_text(text)
    assert any(value in e.name for e in found.entities)  # the extractor does take the value for a name
    events, counts = run(text, found)
    assert events == []
    candidates = len(found.entities) + len(found.relationships) + len(found.facts)
    assert counts.refused_secrets == candidates == len(counts.refused_kinds)
    assert set(counts.refused_kinds) == {"password"}


def test_every_kind_of_candidate_of_a_turn_holding_a_secret_is_refused_and_counted() -> None:
    """What a model may answer: the value alone, a piece of it, or none of it at all."""
    found = TurnExtraction(
        entities=(EntityCandidate(name="Tr0ub4dor&3x", entity_type="tool", confidence=0.9),),
        relationships=(
            RelationshipCandidate(
                source_name="sam",
                source_type="user",
                relation="DECIDED",
                target_name="Tr0ub4dor",
                target_type="concept",
                confidence=0.9,
            ),
        ),
        retractions=(
            RetractionCandidate(
                source_name="sam", source_type="user", relation="USES", target_name="&3x", target_type="tool"
            ),
        ),
        facts=(
            FactCandidate(
                key="root password", statement="The root password was decided.", category="decision", confidence=0.9
            ),
        ),
        directives=(DirectiveCandidate(kind="decision", statement="Use the agreed root password.", key="root pw"),),
    )
    events, counts = run("We decided the root password is Tr0ub4dor&3x.", found)
    assert events == []
    assert counts.refused_secrets == 5
    assert counts.refused_kinds == ["password"] * 5
    assert (counts.entities, counts.relationships, counts.facts) == (0, 0, 0)


def test_a_clean_turn_keeps_its_candidates() -> None:
    text = "We decided to go with PostgreSQL."
    found = extract_text(text)
    events, counts = run(text, found)
    assert counts.refused_secrets == 0
    assert any("PostgreSQL" in event for event in events)
