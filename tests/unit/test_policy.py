"""The extraction policy: from candidates to events. Pure; no database.

Every event the policy returns must also be storable: ``codec.encode`` is the
check the event store runs before an append, so a value it refuses would stop
the worker on that batch for good.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from memledger.events import codec
from memledger.events.catalogue import (
    EntityObserved,
    FactExtracted,
    MemoryPromoted,
    RelationshipObserved,
    Scopes,
)
from memledger.events.envelope import NewEvent
from memledger.extraction.policy import (
    MAX_FACTS_PER_TURN,
    MAX_NAME_LENGTH,
    Counts,
    Policy,
    clean_name,
    directive_scope,
    to_events,
)
from memledger.extraction.protocol import (
    DirectiveCandidate,
    EntityCandidate,
    FactCandidate,
    RelationshipCandidate,
    RetractionCandidate,
    TurnExtraction,
    TurnText,
)
from memledger.store.identifiers import check_identifier

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SCOPES = Scopes(session="s1", project="p1", user="u1", org="o1")
SECRET = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv"


def turn(turn_id: str = "t1", *, scopes: Scopes = SCOPES, text: str = "") -> TurnText:
    return TurnText(
        tenant_id="tenant-a",
        turn_id=turn_id,
        event_id=f"turn:{turn_id}",
        role="user",
        text=text,
        scopes=scopes,
        occurred_at=NOW,
    )


def fact(statement: str = "The user deploys on Fridays", confidence: float = 0.9, **kw: object) -> FactCandidate:
    fields: dict[str, object] = {"key": "deploy day", "category": "decision", "scope": "project"}
    fields.update(kw)
    return FactCandidate(statement=statement, confidence=confidence, **fields)  # type: ignore[arg-type]


def entity(name: str, confidence: float = 0.9, context: str | None = None) -> EntityCandidate:
    return EntityCandidate(name=name, entity_type="tool", confidence=confidence, context=context)


def edge(target: str, confidence: float = 0.9, context: str | None = None) -> RelationshipCandidate:
    return RelationshipCandidate(
        source_name="u1",
        source_type="user",
        relation="USES",
        target_name=target,
        target_type="tool",
        confidence=confidence,
        context=context,
    )


def run(
    found: TurnExtraction,
    *,
    t: TurnText | None = None,
    counts: Counts | None = None,
    policy: Policy | None = None,
) -> tuple[list[NewEvent], Counts]:
    counts = counts if counts is not None else Counts()
    pairs = to_events(t or turn(), found, counts, policy or Policy(), extractor="toy", version="1")
    for stream, new in pairs:  # every event must pass the store's own checks
        check_identifier("stream_id", stream)
        check_identifier("event_id", new.event_id)
        codec.encode(new.event)
    return [new for _, new in pairs], counts


def facts_of(events: list[NewEvent]) -> list[FactExtracted]:
    return [e.event for e in events if isinstance(e.event, FactExtracted)]


# --- confidence -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("confidence", "stored"),
    [(1.0, True), (0.9, True), (0.7, True), (0.69, True), (0.5, True), (0.4999, False), (0.2, False), (0.0, False)],
)
def test_confidence_threshold_for_facts(confidence: float, stored: bool) -> None:
    events, counts = run(TurnExtraction(facts=(fact(confidence=confidence),)))
    assert len(facts_of(events)) == int(stored)
    assert counts.dropped_low_confidence == int(not stored)
    if stored:
        assert facts_of(events)[0].confidence == confidence  # low ones keep their confidence


def test_low_confidence_entities_and_relationships_are_dropped_and_counted() -> None:
    found = TurnExtraction(
        entities=(entity("Docker", 0.9), entity("Podman", 0.3), entity("Nix", 0.6)),
        relationships=(edge("Docker", 0.8), edge("Podman", 0.1)),
    )
    events, counts = run(found)
    assert sorted(e.event.name for e in events if isinstance(e.event, EntityObserved)) == ["Docker", "Nix"]
    assert [e.event.target_name for e in events if isinstance(e.event, RelationshipObserved)] == ["Docker"]
    assert counts.dropped_low_confidence == 2
    assert (counts.entities, counts.relationships) == (2, 1)  # dropped ones do not use up the limit


# --- limits ---------------------------------------------------------------------


def test_at_most_20_entities_and_50_relationships_per_conversation_by_default() -> None:
    found = TurnExtraction(
        entities=tuple(entity(f"Tool {i}") for i in range(25)),
        relationships=tuple(edge(f"Tool {i}") for i in range(60)),
    )
    events, counts = run(found)
    assert sum(isinstance(e.event, EntityObserved) for e in events) == 20
    assert sum(isinstance(e.event, RelationshipObserved) for e in events) == 50
    assert (counts.skipped_entities, counts.skipped_relationships) == (5, 10)


def test_limits_count_across_the_turns_of_one_conversation_and_are_configurable() -> None:
    policy = Policy(max_entities=3, max_relationships=2)
    counts = Counts()
    found = TurnExtraction(entities=(entity("A"), entity("B")), relationships=(edge("A"), edge("B")))
    first, _ = run(found, t=turn("t1"), counts=counts, policy=policy)
    second, _ = run(found, t=turn("t2"), counts=counts, policy=policy)
    assert sum(isinstance(e.event, EntityObserved) for e in first + second) == 3
    assert sum(isinstance(e.event, RelationshipObserved) for e in first + second) == 2
    assert (counts.skipped_entities, counts.skipped_relationships) == (1, 2)
    # facts have limits of their own (20 a turn, 1,000 a conversation by default)
    many = TurnExtraction(facts=tuple(fact(f"Statement {i}", key=f"k{i}") for i in range(20)))
    events, _ = run(many, counts=counts, policy=policy)
    assert len(facts_of(events)) == 20


def test_a_limit_of_zero_stores_none() -> None:
    events, counts = run(
        TurnExtraction(entities=(entity("A"),), relationships=(edge("A"),)),
        policy=Policy(max_entities=0, max_relationships=0),
    )
    assert events == []
    assert (counts.skipped_entities, counts.skipped_relationships) == (1, 1)


# --- names ----------------------------------------------------------------------


def test_clean_name_strips_control_characters_and_cuts_to_200() -> None:
    assert clean_name("Sa\x00rah\x07\x1b[31m  Connor\n") == "Sa rah [31m Connor"
    assert clean_name("x\u0085y\u009fz\x7f") == "x y z"
    assert len(clean_name("n" * 5000)) == MAX_NAME_LENGTH == 200
    assert clean_name("\x00\x01\t\n") == ""


def test_names_in_events_are_clean_and_empty_names_are_skipped() -> None:
    found = TurnExtraction(
        entities=(
            EntityCandidate(
                name="Kube\x00rnetes\r\n" + "s" * 400,
                entity_type="tool",
                confidence=0.9,
                aliases=("k8s\x1b", "\x00", "Kube rnetes " + "s" * 400),
            ),
            entity("\x00\x01\x02"),
            entity("   "),
        ),
        relationships=(edge("Redis\x0b\x0c"), edge("\x00")),
    )
    events, _ = run(found)
    observed = [e.event for e in events if isinstance(e.event, EntityObserved)]
    assert len(observed) == 1
    name = observed[0].name
    # 200 less "organization:", so that every entity's id is a name of 200 at most
    assert len(name) == 187 and name.startswith("Kube rnetes")
    assert observed[0].aliases == ("k8s",)  # empty and same-as-name aliases are dropped
    edges = [e.event for e in events if isinstance(e.event, RelationshipObserved)]
    assert [r.target_name for r in edges] == ["Redis"]
    for event in [*observed, *edges]:
        for text in (getattr(event, "name", ""), getattr(event, "target_name", "")):
            assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text)


def test_fact_keys_are_cleaned_and_statements_single_spaced() -> None:
    events, _ = run(TurnExtraction(facts=(fact("  We   ship\non Fridays ", key="deploy\x00 day"),)))
    (f,) = facts_of(events)
    assert (f.key, f.statement) == ("deploy day", "We ship on Fridays")


def test_control_characters_in_a_statement_never_make_an_unstorable_event() -> None:
    events, _ = run(TurnExtraction(facts=(fact("We ship\x00 on Fridays"),)))
    assert [f.statement for f in facts_of(events)] == ["We ship on Fridays"]


def test_long_names_in_a_relationship_still_make_a_storable_event() -> None:
    long_name = "Very long tool name " * 10  # 200 characters, allowed by every check
    events, _ = run(TurnExtraction(relationships=(edge(long_name),)))
    assert sum(isinstance(e.event, RelationshipObserved) for e in events) == 1


# --- the secret guard in the policy ---------------------------------------------


def test_secrets_are_refused_in_every_kind_of_candidate_and_counted() -> None:
    found = TurnExtraction(
        entities=(
            entity(SECRET),
            entity("Vault", context=f"holds {SECRET}"),
            entity("Postgres", context="the main database"),
        ),
        relationships=(
            edge("Stripe", context="password=hunter2hunter2"),
            edge("GitHub", context="uses ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
            edge("Linear", context="for issues"),
        ),
        facts=(
            fact(f"The OpenAI key is {SECRET}", key="openai key"),
            fact("The prod DB is postgresql://app:s3cr3t@db:5432/app", key="prod db"),
            fact("Deploys go through CI", key="deploys", value="AKIAIOSFODNN7EXAMPLE"),
            fact("We ship on Fridays", key="deploy day"),
        ),
        directives=(
            DirectiveCandidate(kind="procedure", statement=f"export OPENAI_KEY={SECRET}", key="procedure: key"),
            DirectiveCandidate(kind="preference", statement="tabs over spaces", key="preference: tabs"),
        ),
    )
    events, counts = run(found, policy=Policy(auto_promote=True))
    assert counts.refused_secrets == 8
    assert len(counts.refused_kinds) == 8
    assert {"openai-style key", "password", "github token", "connection string with password"} <= set(
        counts.refused_kinds
    )
    stored = [e.event for e in events]
    assert [e.name for e in stored if isinstance(e, EntityObserved)] == ["Postgres"]
    assert [r.target_name for r in stored if isinstance(r, RelationshipObserved)] == ["Linear"]
    assert [f.statement for f in facts_of(events)] == ["We ship on Fridays"]
    assert [p.statement for p in stored if isinstance(p, MemoryPromoted)] == ["tabs over spaces"]
    assert all("sk-proj" not in codec.encode(e).decode() for e in stored)


def test_clean_candidates_are_not_refused() -> None:
    found = TurnExtraction(
        entities=(entity("Postgres", context="docs at https://www.postgresql.org/docs/"),),
        relationships=(edge("Redis", context="cache at redis://cache.internal:6379/0"),),
        facts=(fact("Connect with psql -h db.internal -U app (password from PGPASSWORD)", key="db access"),),
    )
    events, counts = run(found)
    assert counts.refused_secrets == 0
    assert len(events) == 3


# --- ids and metadata -------------------------------------------------------------


def test_the_same_fact_gets_the_same_memory_id_from_any_turn() -> None:
    first, _ = run(TurnExtraction(facts=(fact("We ship on Fridays"),)), t=turn("t1"))
    again, _ = run(TurnExtraction(facts=(fact("we  ship on fridays."),)), t=turn("t2"))
    other, _ = run(TurnExtraction(facts=(fact("We ship on Mondays"),)), t=turn("t3"))
    elsewhere, _ = run(
        TurnExtraction(facts=(fact("We ship on Fridays"),)), t=turn("t4", scopes=Scopes(session="s1", project="p2"))
    )
    ids = [facts_of(e)[0].memory_id for e in (first, again, other, elsewhere)]
    assert ids[0] == ids[1]
    assert len({ids[0], ids[2], ids[3]}) == 3


def test_event_ids_are_derived_from_the_turn_event_id_and_stable() -> None:
    found = TurnExtraction(entities=(entity("Docker"),), relationships=(edge("Docker"),), facts=(fact(),))
    first, _ = run(found, t=turn("t1"))
    again, _ = run(found, t=turn("t1"))
    other, _ = run(found, t=turn("t2"))
    assert [e.event_id for e in first] == [e.event_id for e in again]
    assert len({e.event_id for e in first}) == 3
    assert all("turn:t1" in e.event_id for e in first)
    assert not {e.event_id for e in first} & {e.event_id for e in other}


def test_metadata_names_the_turn_and_the_extractor() -> None:
    found = TurnExtraction(entities=(entity("Docker"),), relationships=(edge("Docker"),), facts=(fact(),))
    events, _ = run(found, t=turn("t9"))
    for new in events:
        assert new.metadata.causation_id == "turn:t9"
        assert new.metadata.correlation_id == "t9"
        assert (new.metadata.extractor, new.metadata.extractor_version) == ("toy", "1")
        assert new.occurred_at == NOW
        assert new.event.source_turns == ("t9",)  # type: ignore[attr-defined]


# --- scopes of facts ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "broad", "scopes", "expected"),
    [
        ("user", False, SCOPES, ("project", "p1")),  # only promotion writes user and org by default
        ("org", False, SCOPES, ("project", "p1")),
        ("user", True, SCOPES, ("user", "u1")),
        ("org", True, SCOPES, ("org", "o1")),
        ("org", True, Scopes(session="s1", user="u1"), ("user", "u1")),
        ("project", False, Scopes(session="s1"), ("session", "s1")),
        ("session", True, Scopes(project="p1"), ("session", "default")),
    ],
)
def test_facts_go_to_the_wanted_scope_or_the_next_narrower(
    wanted: str, broad: bool, scopes: Scopes, expected: tuple[str, str]
) -> None:
    events, _ = run(
        TurnExtraction(facts=(fact(scope=wanted),)), t=turn(scopes=scopes), policy=Policy(broad_scope_writes=broad)
    )
    (f,) = facts_of(events)
    assert (f.scope, f.scope_key) == expected


# --- directives -------------------------------------------------------------------


def directive(kind: str, statement: str, scope: str | None = None) -> DirectiveCandidate:
    return DirectiveCandidate(kind=kind, statement=statement, key=f"{kind}: {statement}", scope=scope)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "named", "scopes", "expected"),
    [
        ("preference", None, SCOPES, ("project", "p1")),
        ("decision", None, Scopes(session="s1", user="u1", org="o1"), ("session", "s1")),  # never user/org
        ("task_update", None, SCOPES, ("session", "s1")),
        ("decision", "project", SCOPES, ("project", "p1")),
        ("terminology", "user", SCOPES, ("user", "u1")),
        ("lesson_learned", "org", SCOPES, ("org", "o1")),
        ("terminology", "user", Scopes(session="s1", project="p1"), ("project", "p1")),  # no user key: narrower
        ("terminology", "user", Scopes(session="s1"), ("session", "s1")),
    ],
)
def test_auto_promoted_directives_go_to_the_named_or_least_lasting_scope(
    kind: str, named: str | None, scopes: Scopes, expected: tuple[str, str]
) -> None:
    events, _ = run(
        TurnExtraction(directives=(directive(kind, "we ship on Fridays", named),)),
        t=turn(scopes=scopes),
        policy=Policy(auto_promote=True),
    )
    (promoted,) = [e.event for e in events]
    assert isinstance(promoted, MemoryPromoted)
    assert (promoted.scope, promoted.scope_key) == expected
    assert (promoted.kind, promoted.statement, promoted.confidence) == (kind, "we ship on Fridays", 1.0)
    assert promoted.source_turns == ("t1",)


def test_directive_scope_default_is_never_user_or_org() -> None:
    for kind in ("decision", "lesson_learned", "preference", "procedure", "task_update", "terminology"):
        assert directive_scope(directive(kind, "x")) in ("session", "project")


def test_directives_without_auto_promote_are_ordinary_facts() -> None:
    events, _ = run(
        TurnExtraction(directives=(directive("decision", "we ship on Fridays", "project"),)),
        policy=Policy(auto_promote=False),
    )
    (f,) = [e.event for e in events]
    assert isinstance(f, FactExtracted)
    assert (f.category, f.scope, f.scope_key, f.statement) == ("decision", "project", "p1", "we ship on Fridays")


@pytest.mark.parametrize(
    ("named", "broad", "expected"),
    [
        ("org", False, ("project", "p1")),
        ("user", False, ("project", "p1")),
        ("org", True, ("org", "o1")),
        ("user", True, ("user", "u1")),
    ],
)
def test_a_directive_naming_a_broad_scope_without_auto_promote_keeps_to_the_scope_guard(
    named: str, broad: bool, expected: tuple[str, str]
) -> None:
    """Without auto-promotion a directive is an ordinary fact, so it obeys the scope guard:
    "decision (org): ..." from any member once reached the whole organisation's prompts."""
    events, _ = run(
        TurnExtraction(directives=(directive("decision", "all deploys go through Vega", named),)),
        t=turn(scopes=SCOPES),
        policy=Policy(auto_promote=False, broad_scope_writes=broad),
    )
    (f,) = [e.event for e in events]
    assert isinstance(f, FactExtracted)
    assert (f.scope, f.scope_key) == expected


def test_the_same_directive_promoted_twice_gets_one_id() -> None:
    found = TurnExtraction(directives=(directive("preference", "tabs over spaces"),))
    first, _ = run(found, t=turn("t1"), policy=Policy(auto_promote=True))
    again, _ = run(found, t=turn("t2"), policy=Policy(auto_promote=True))
    assert first[0].event.memory_id == again[0].event.memory_id  # type: ignore[attr-defined]


def test_a_huge_directive_key_still_makes_a_storable_promotion() -> None:
    term = "box " * 400
    events, _ = run(
        TurnExtraction(
            directives=(
                DirectiveCandidate(kind="terminology", statement=f"{term} means x", key=f"terminology: {term}"),
            )
        ),
        policy=Policy(auto_promote=True),
    )
    assert len(events) == 1


def test_an_empty_directive_statement_is_skipped() -> None:
    events, _ = run(
        TurnExtraction(directives=(DirectiveCandidate(kind="decision", statement="", key="decision: "),)),
        policy=Policy(auto_promote=True),
    )
    assert events == []


# --- what a model's answer cannot get past the policy ------------------------------------


@pytest.mark.parametrize("hidden", ["\u200b", "\u00ad", "\u2060", "\ufeff", "\u202e"])
def test_a_secret_split_by_an_invisible_character_is_still_refused(hidden: str) -> None:
    broken = SECRET[:6] + hidden + SECRET[6:]
    events, counts = run(TurnExtraction(facts=(fact(f"the key is {broken}"),), entities=(entity(f"key {broken}"),)))
    assert events == [] and counts.refused_secrets == 2


def test_names_that_differ_by_invisible_characters_are_one_entity() -> None:
    events, _ = run(TurnExtraction(entities=(entity("Docker"), entity("Doc\u200bker"), entity("\u202eDocker"))))
    assert {e.event.name for e in events} == {"Docker"}  # type: ignore[attr-defined]


def test_a_name_or_key_of_punctuation_alone_makes_nothing() -> None:
    found = TurnExtraction(relationships=(edge("!!!"),), facts=(fact(key="?"), fact("Other", key="!!")))
    events, _ = run(found)
    assert events == []


def test_retractions_are_guarded_and_share_the_relationship_limit() -> None:
    retractions = tuple(
        RetractionCandidate(source_name="u1", source_type="user", relation="USES", target_name=name, target_type="tool")
        for name in [SECRET, *(f"tool {i}" for i in range(60))]
    )
    events, counts = run(TurnExtraction(retractions=retractions))
    assert len(events) == 50 and counts.skipped_relationships == 10
    assert counts.refused_secrets == 1
    assert not [e for e in events if SECRET.lower() in str(e.event).lower()]


def test_a_turn_gives_at_most_20_facts_and_a_conversation_its_limit() -> None:
    flood = TurnExtraction(facts=tuple(fact(f"fact number {i}", key=f"k{i}") for i in range(5000)))
    events, counts = run(flood)
    assert len(facts_of(events)) == MAX_FACTS_PER_TURN and counts.skipped_facts == 5000 - MAX_FACTS_PER_TURN
    counts = Counts()
    policy = Policy(max_facts=30)
    stored = [len(facts_of(run(flood, t=turn(f"t{i}"), counts=counts, policy=policy)[0])) for i in range(3)]
    assert stored == [20, 10, 0] and counts.facts == 30


def test_an_assistant_turn_becomes_no_memory() -> None:
    assistant = msgspec.structs.replace(turn(), role="assistant")
    found = TurnExtraction(entities=(entity("Docker"),), relationships=(edge("Docker"),), facts=(fact(),))
    events, counts = run(found, t=assistant)
    assert events == [] and counts.entities == 0
