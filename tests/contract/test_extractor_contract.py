"""One contract for every extractor: heuristic, llm (recorded answers through litellm's
``mock_response``) and hybrid. Same turns in, same invariants out, after the policy:
allowed types, the confidence policy, the secret guard, limits, provenance."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import ClassVar, get_args

from memledger.events import codec
from memledger.events.catalogue import (
    EntityObserved,
    EntityType,
    Event,
    FactCategory,
    FactExtracted,
    MemoryPromoted,
    MemoryRetracted,
    RelationshipObserved,
    Scopes,
)
from memledger.events.envelope import NewEvent
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.hybrid import HybridExtractor
from memledger.extraction.policy import MAX_ENTITY_NAME_LENGTH, STORE_THRESHOLD, Counts, Policy, to_events
from memledger.extraction.protocol import Extractor, TurnExtraction, TurnText
from tests.contract.recorded import RecordedLlm, load

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SECRET = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv"
SECRET_TEXTS = (
    f"I use Terraform with Sarah; my OpenAI key is {SECRET} for project Phoenix.",
    "The prod database password is Tr0ub4dor&3x, Kenji set it up on PostgreSQL.",
)
RELATION = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")


def turn(turn_id: str, text: str, *, role: str = "user", session: str | None = None) -> TurnText:
    return TurnText(
        tenant_id="tenant-a",
        turn_id=turn_id,
        event_id=f"turn:{turn_id}",
        role=role,  # type: ignore[arg-type]
        text=text,
        scopes=Scopes(session=session or f"s-{turn_id}", project="p1", user="ann"),
        occurred_at=NOW,
    )


def recorded_turns() -> list[TurnText]:
    """Every turn with a recorded answer, each its own conversation."""
    return [turn(a["id"], a["text"]) for a in load()["answers"].values()]


def stored(
    extractor: Extractor, turns: list[TurnText], policy: Policy | None = None
) -> tuple[list[tuple[TurnText, NewEvent]], Counts]:
    """What the policy makes of ``extractor``'s answers, turn by turn (counts per run)."""
    found: Mapping[str, TurnExtraction] = extractor.extract(turns)
    counts = Counts()
    out = []
    for t in turns:
        pairs = to_events(
            t,
            found.get(t.turn_id, TurnExtraction()),
            counts,
            policy or Policy(),
            extractor=extractor.name,
            version=extractor.version,
        )
        out += [(t, new) for _, new in pairs]
    return out, counts


def text_of(event: Event) -> str:
    return codec.encode(event).decode()


class ExtractorContract:
    """The invariants; a subclass says which extractor (``make``)."""

    expects_model: ClassVar[bool] = False

    def make(self) -> Extractor:
        raise NotImplementedError

    def test_types_come_from_the_allowed_sets(self) -> None:
        events, _ = stored(self.make(), recorded_turns())
        assert events, "the recorded turns yield memories"
        for _, new in events:
            event = new.event
            if isinstance(event, EntityObserved):
                assert event.entity_type in get_args(EntityType)
            elif isinstance(event, RelationshipObserved):
                assert event.target_type in get_args(EntityType)
                assert event.source_type in (*get_args(EntityType), "user")
                assert RELATION.match(event.relation), event.relation
            elif isinstance(event, FactExtracted):
                assert event.category in get_args(FactCategory)
            else:
                assert isinstance(event, MemoryRetracted | MemoryPromoted), type(event)

    def test_nothing_below_the_store_threshold_is_stored(self) -> None:
        events, counts = stored(self.make(), recorded_turns())
        confidences = [getattr(new.event, "confidence", 1.0) for _, new in events]
        assert all(STORE_THRESHOLD <= c <= 1.0 for c in confidences)
        assert counts.dropped_low_confidence >= 0

    def test_a_credential_in_a_turn_never_becomes_memory(self) -> None:
        extractor = self.make()
        turns = [turn(f"secret-{i}", text) for i, text in enumerate(SECRET_TEXTS)]
        events, _ = stored(extractor, turns)
        assert events == []
        model = getattr(extractor, "llm", extractor)
        sent = [text for call in getattr(model, "sent", []) for text in call]
        assert not any(SECRET in text or "Tr0ub4dor" in text for text in sent), "a credential was sent to the model"

    def test_only_a_users_turn_becomes_memory(self) -> None:
        turns = [turn(a["id"], a["text"], role="assistant") for a in list(load()["answers"].values())[:5]]
        events, _ = stored(self.make(), turns)
        assert events == []

    def test_names_are_cut_and_items_capped_per_conversation(self) -> None:
        answers = {a["id"]: a["text"] for a in load()["answers"].values()}
        flood, long = turn("c-flood", answers["c-flood"], session="one"), turn("c-long", answers["c-long"])
        events, counts = stored(self.make(), [flood, long], Policy(max_entities=20, max_relationships=10))
        in_flood = [new.event for t, new in events if t is flood]
        assert sum(isinstance(e, EntityObserved) for e in in_flood) <= 20
        assert sum(isinstance(e, RelationshipObserved | MemoryRetracted) for e in in_flood) <= 10
        for _, new in events:
            event = new.event
            names = [getattr(event, n, None) for n in ("name", "source_name", "target_name")]
            assert all(len(n) <= MAX_ENTITY_NAME_LENGTH for n in names if n is not None)
            if isinstance(event, FactExtracted):
                assert len(event.statement) <= 2000 and len(event.key) <= 200
        if self.expects_model:
            assert counts.skipped_entities + counts.skipped_relationships > 0

    def test_every_item_cites_the_turn_it_came_from(self) -> None:
        extractor = self.make()
        events, _ = stored(extractor, recorded_turns())
        for t, new in events:
            assert getattr(new.event, "source_turns", None) == (t.turn_id,)
            assert new.metadata.causation_id == t.event_id
            assert new.metadata.correlation_id == t.turn_id
            assert new.metadata.extractor and new.metadata.extractor_version
            assert new.event_id.startswith(f"x:{extractor.name}@{extractor.version}:{t.event_id}:")
            codec.encode(new.event)  # storable

    def test_the_same_turns_give_the_same_events(self) -> None:
        first, _ = stored(self.make(), recorded_turns())
        again, _ = stored(self.make(), recorded_turns())
        assert [(n.event_id, text_of(n.event)) for _, n in first] == [(n.event_id, text_of(n.event)) for _, n in again]


class TestHeuristicContract(ExtractorContract):
    def make(self) -> Extractor:
        return HeuristicExtractor()


class TestLlmContract(ExtractorContract):
    expects_model = True

    def make(self) -> Extractor:
        return RecordedLlm(HeuristicExtractor())

    def test_every_recorded_answer_is_read_without_a_fallback(self) -> None:
        llm = RecordedLlm(HeuristicExtractor())
        found = llm.extract(recorded_turns())
        assert (llm.fallbacks, llm.refused_answers, llm.refused_items) == (0, 0, 0)
        assert all(f.answered_by is None for f in found.values())
        assert llm.calls == len(recorded_turns())  # one conversation each


class TestHybridContract(ExtractorContract):
    expects_model = True

    def make(self) -> Extractor:
        return HybridExtractor(HeuristicExtractor(), RecordedLlm(HeuristicExtractor()))

    def test_the_model_sees_only_unsettled_turns(self) -> None:
        hybrid = HybridExtractor(HeuristicExtractor(), RecordedLlm(HeuristicExtractor()))
        found = hybrid.extract(recorded_turns())
        llm = hybrid.llm
        assert isinstance(llm, RecordedLlm)
        assert 0 < llm.calls < len(recorded_turns())
        assert hybrid.turns_sent == llm.turns_sent
        assert hybrid.turns_settled == len(recorded_turns()) - hybrid.turns_sent
        settled = [f for f in found.values() if f.answered_by == ("heuristic", HeuristicExtractor.version)]
        assert len(settled) == hybrid.turns_settled
