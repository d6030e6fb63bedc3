"""Re-extraction into shadow read models, and the diff, change nothing live.

The tests run on a database of this module's own: a re-extraction replays every
turn of its database, and the session's holds every other module's turns too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.extraction.protocol import EntityCandidate, FactCandidate, TurnExtraction, TurnText
from memledger.service import projections, reextraction
from memledger.service.extraction import ExtractionWorker
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    """A migrated database of this module's own, with every projection installed."""
    with fresh_database(database, "reextraction") as engine:
        projections.install_all(engine)
        yield engine


class Saying:
    """A toy extractor: one fact per turn, its statement the turn's text (or a twist of it)."""

    def __init__(self, name: str, version: str, twist: str = "") -> None:
        self.name, self.version, self.twist = name, version, twist

    def extract(self, turns: Sequence[TurnText]) -> Mapping[str, TurnExtraction]:
        return {
            t.turn_id: TurnExtraction(
                facts=(
                    FactCandidate(
                        key=f"k {t.text}",
                        statement=t.text + self.twist,
                        category="technical_fact",
                        confidence=0.9,
                        scope="project",
                    ),
                ),
                # The worker reads every tenant's turns, the other test's too.
                entities=(EntityCandidate(name=f"Tool{t.text[-1:] or '0'}", entity_type="tool", confidence=0.9),),
            )
            for t in turns
        }


def _events(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one())  # text(): a plain count


def test_a_shadow_shows_what_another_extractor_would_change_and_touches_nothing_live(
    engine: Engine, tenant: str
) -> None:
    scopes = Scopes(session="s", project="p", user="u")
    record_turns(engine, tenant, [TurnInput(role="user", text=f"uses thing {i}", scopes=scopes) for i in range(3)])
    live_name = f"live-{tenant}"
    while ExtractionWorker(engine, Saying(live_name, "1")).drain().turns:
        pass
    projections.catch_up_all(engine, ["facts", "entities", "relationships"])
    before = _events(engine)

    label = "t" + tenant.replace("-", "_")[-10:]
    turns = reextraction.rebuild_into(engine, Saying(f"try-{tenant}", "2", twist=" (v2)"), label)
    changes = [c for c in reextraction.diff(engine, label) if c.tenant_id == tenant]
    reextraction.drop(engine, label)

    assert turns >= 3
    assert _events(engine) == before, "a shadow appends nothing"
    facts = {
        (c.change, c.shadow.split(" | ")[0] if c.shadow else c.live.split(" | ")[0])
        for c in changes
        if (c.kind == "fact" and c.live is not None) or c.kind == "fact"
    }
    assert ("added", "uses thing 0 (v2)") in facts
    assert ("lost", "uses thing 0") in facts
    assert not [c for c in changes if c.kind == "entity"], "the same entities either way"


def test_a_shadow_keeps_each_tenants_words_when_two_tenants_share_a_turn_id(engine: Engine, tenant: str) -> None:
    """Turn ids are unique per tenant only: keyed by the id alone, one tenant's words
    became the other's facts in the shadow (and ``extract diff`` reported them lost)."""
    other = f"{tenant}-b"
    scopes = Scopes(session="s", project="p", user="u")
    for who, text in ((tenant, "Orion uses Kafka"), (other, "Lyra uses Redis")):
        record_turns(engine, who, [TurnInput(role="user", text=text, scopes=scopes, turn_id="msg-1")])
    while ExtractionWorker(engine, Saying(f"live-{tenant}", "1")).drain().turns:
        pass
    projections.catch_up_all(engine, ["facts", "entities", "relationships"])

    label = "d" + tenant.replace("-", "_")[-10:]
    reextraction.rebuild_into(engine, Saying(f"try-{tenant}", "2", twist=" (v2)"), label)
    changes = [c for c in reextraction.diff(engine, label) if c.tenant_id in (tenant, other) and c.kind == "fact"]
    reextraction.drop(engine, label)

    def said(who: str, change: str) -> set[str]:
        return {
            str(c.shadow if change == "added" else c.live).split(" | ")[0]
            for c in changes
            if c.tenant_id == who and c.change == change
        }

    assert said(tenant, "added") == {"Orion uses Kafka (v2)"}
    assert said(tenant, "lost") == {"Orion uses Kafka"}
    assert said(other, "added") == {"Lyra uses Redis (v2)"}
    assert said(other, "lost") == {"Lyra uses Redis"}
