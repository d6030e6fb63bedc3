"""The context selector's promises (issue 5, sections 3 and 5), end to end on the
session's PostgreSQL: events appended, projections caught up, then ``select``,
``build_context`` and ``replay`` called as an agent or an auditor would.

- Scope priority: a narrower scope's fact shadows a broader one on the same key;
  scopes the request does not carry, other sessions and other tenants never show.
- Confidence: the request's floor, and the higher floor of a "general" request.
- Relevance: the request's category decides which fact categories count.
- Retracted and superseded facts never appear; an ambiguous conflict appears
  flagged with both sides together, a resolved one with its winner only.
- Fail open: a deadline that cannot be met, or a failing vector channel, gives an
  empty selection and a reason, logged, never an exception.
- ``as_of`` (a ledger position or a time) answers from the ledger, so later
  retractions do not change it.
- Every block served is recorded (``ContextServed``) and replays to the same hash,
  also after a later retraction and when served from two threads at once.
- The block keeps to its character budget; a budget below the minimum is refused
  and nothing is recorded.

Each test has a tenant of its own (a fresh uuid) and builds its data itself.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Literal

import msgspec
import pytest
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import offline
from memledger.errors import InvalidCommand, NotFound
from memledger.events.catalogue import (
    ConflictResolved,
    ContextServed,
    Event,
    FactCategory,
    FactExtracted,
    MemoryRetracted,
    ScopeKind,
    Scopes,
)
from memledger.events.envelope import START, NewEvent
from memledger.events.keys import slot_id
from memledger.formatting import CONFLICT_FLAG, FORMATTER_VERSION, render
from memledger.projectors import runner
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.projectors.embeddings.projector import EmbeddingsProjector
from memledger.selection.candidates import QueryVector
from memledger.selection.rank import GENERAL_MIN_CONFIDENCE, request_category
from memledger.selection.types import Selection
from memledger.service import context, context_limits, context_recording, context_replay, memory, projections, scope_ids
from memledger.store import event_reads, event_store
from tests.integration.test_projections_support import fresh_database, wait_until_visible

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

RAW = Scopes(session="sess-1", project="phoenix", user="ada", org="acme")
T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)
CODING = "How do we deploy the service?"
FORMATTING = "Write the reply email in my usual tone"
GENERAL = "What should I know about Ada?"
LOGGER = "memledger.service.context"
READ_MODELS = ["facts", "entities", "relationships", "turns"]


class Ledger:
    """One fresh tenant: append its events, catch the read models up, ask for context."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.tenant = f"sel-{uuid.uuid4().hex[:12]}"
        self.key = scope_ids.key_for(engine, self.tenant)  # facts hold stored scope keys; requests raw ones
        self.stored = self.key.stored_scopes(RAW)

    def fact(
        self,
        memory_id: str,
        statement: str,
        *,
        scope: ScopeKind = "session",
        key: str | None = None,
        category: FactCategory = "decision",
        confidence: float = 0.9,
        raw_scope_key: str | None = None,
        valid_from: datetime | None = None,
    ) -> FactExtracted:
        scope_key = (
            self.key.stored_id(scope, raw_scope_key) if raw_scope_key is not None else getattr(self.stored, scope)
        )
        return FactExtracted(
            memory_id=memory_id,
            scope=scope,
            scope_key=scope_key,
            key=key or memory_id,
            statement=statement,
            category=category,
            confidence=confidence,
            source_turns=(f"turn-{memory_id}",),
            valid_from=valid_from,
        )

    def append(self, *events: Event) -> list[int]:
        """Append ``events`` in one transaction, catch up, return their positions."""
        news = [
            NewEvent(event=e, event_id=f"ev-{uuid.uuid4().hex}", occurred_at=T0 + timedelta(minutes=i))
            for i, e in enumerate(events)
        ]
        with self.engine.begin() as tx:
            result = event_store.append(tx, self.tenant, f"test:{uuid.uuid4().hex[:12]}", news, None)
            appended = event_reads.count_after(tx, START, tenant_id=self.tenant)
        # A write transaction open elsewhere on the server holds gap-safe readers back:
        # catching up before these events are visible would leave them out.
        wait_until_visible(self.engine, appended, tenant=self.tenant)
        projections.catch_up_all(self.engine, READ_MODELS)
        return list(result.positions)

    def retract(self, memory_id: str) -> list[int]:
        return self.append(MemoryRetracted(item_id=memory_id, item_kind="fact", reason="no longer true"))

    def request(self, text: str, **options: Any) -> context.SelectRequest:
        options.setdefault("deadline_ms", 5000)  # a loaded test machine must not fail these open
        return context.SelectRequest(tenant_id=self.tenant, scopes=options.pop("scopes", RAW), request=text, **options)

    def select(self, text: str, **options: Any) -> Selection:
        vector_search = options.pop("vector_search", None)
        return context.select(self.engine, self.request(text, **options), vector_search=vector_search)

    def served_events(self) -> list[ContextServed]:
        with self.engine.connect() as conn:
            return [r.event for r in event_reads.read_tenant(conn, self.tenant) if isinstance(r.event, ContextServed)]


def ids(selection: Selection) -> set[str]:
    return {item.item_id for item in selection.items}


@pytest.fixture
def ledger(engine: Engine) -> Ledger:
    return Ledger(engine)


# -- scope priority -----------------------------------------------------------------------


def test_a_session_fact_shadows_the_broader_scopes_facts_on_the_same_key(ledger: Ledger) -> None:
    ledger.append(
        ledger.fact("s-db", "the session deploys against the staging database", key="Database"),
        ledger.fact("p-db", "the project deploys against the shared database", scope="project", key="database"),
        ledger.fact("u-db", "ada deploys against her local database", scope="user", key=" DATABASE "),
        ledger.fact("u-ci", "ada runs the service tests in CI before a deploy", scope="user", key="ci"),
    )
    selection = ledger.select(CODING)
    assert ids(selection) == {"s-db", "u-ci"}
    assert {item.item_id: item.scope for item in selection.items} == {"s-db": "session", "u-ci": "user"}
    # Without the session, the project's fact is the narrowest answer and shadows the user's.
    assert ids(ledger.select(CODING, scopes=Scopes(project="phoenix", user="ada"))) == {"p-db", "u-ci"}


def test_facts_of_scopes_sessions_or_tenants_the_request_lacks_never_appear(ledger: Ledger, engine: Engine) -> None:
    ledger.append(
        ledger.fact("mine", "this session deploys the service with Docker"),
        ledger.fact("org", "acme deploys every service on Kubernetes", scope="org"),
        ledger.fact("other-session", "another session deploys with Nomad", raw_scope_key="sess-2"),
        ledger.fact("other-user", "bob deploys by hand", scope="user", raw_scope_key="bob"),
    )
    neighbour = Ledger(engine)  # the same raw scope keys in another tenant
    neighbour.append(neighbour.fact("theirs", "the neighbour deploys the service with Ansible"))
    assert ids(ledger.select(CODING, scopes=Scopes(session="sess-1", user="ada"))) == {"mine"}
    assert ids(ledger.select(CODING)) == {"mine", "org"}  # with the org in the request, its fact comes
    assert ids(neighbour.select(CODING)) == {"theirs"}


# -- confidence ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_confidence", "expected"),
    [
        (0.5, {"c55", "c65", "c75", "c95"}),
        (0.6, {"c65", "c75", "c95"}),
        (0.7, {"c75", "c95"}),
        (0.9, {"c95"}),
    ],
)
def test_facts_below_min_confidence_never_appear(ledger: Ledger, min_confidence: float, expected: set[str]) -> None:
    ledger.append(
        *(ledger.fact(f"c{c}", f"deploy rule number {c} for the service", confidence=c / 100) for c in (55, 65, 75, 95))
    )
    selection = ledger.select(CODING, min_confidence=min_confidence)
    assert ids(selection) == expected
    assert all(item.confidence >= min_confidence for item in selection.items)


def test_a_general_request_uses_the_higher_general_floor(ledger: Ledger) -> None:
    assert request_category(GENERAL) == "general" and request_category(CODING) == "coding"
    ledger.append(
        ledger.fact("ada-80", "Ada deploys on Fridays", confidence=0.8),
        ledger.fact("ada-floor", "Ada leads the Phoenix team", confidence=GENERAL_MIN_CONFIDENCE),
        ledger.fact("ada-95", "Ada reviews every deploy", confidence=0.95),
    )
    assert ids(ledger.select(CODING, min_confidence=0.7)) == {"ada-80", "ada-floor", "ada-95"}
    assert ids(ledger.select(GENERAL, min_confidence=0.7)) == {"ada-floor", "ada-95"}
    assert ids(ledger.select(GENERAL, min_confidence=0.9)) == {"ada-95"}  # a higher request floor still counts
    nothing = ledger.select(GENERAL, min_confidence=0.99)
    assert nothing.items == () and nothing.empty_reason == "no memory matches this request"


# -- category relevance -------------------------------------------------------------------


def _categorised(ledger: Ledger) -> None:
    ledger.append(
        ledger.fact("pref", "prefers short replies without emoji", category="preference"),
        ledger.fact("decision", "the service is deployed with Docker", category="decision"),
        ledger.fact("term", "PR means pull request", category="terminology"),
        ledger.fact("pet", "has a dog called Rex", category="personal_fact"),
    )


def test_a_coding_request_gets_no_preference_only_facts(ledger: Ledger) -> None:
    _categorised(ledger)
    assert ids(ledger.select(CODING)) == {"decision", "term"}


def test_a_request_with_coding_and_formatting_words_gets_both_kinds(ledger: Ledger) -> None:
    """Before, the kind with more words won: "fix this bug ... indent it the way I like"
    was a coding request, and the user's formatting preference was left out."""
    mixed = "Fix this bug in my Python code and indent it the way I like"
    assert request_category(mixed) == "mixed"
    _categorised(ledger)
    assert ids(ledger.select(mixed)) == {"decision", "term", "pref"}


def test_a_formatting_request_gets_preferences_and_no_decisions(ledger: Ledger) -> None:
    assert request_category(FORMATTING) == "formatting"
    _categorised(ledger)
    assert ids(ledger.select(FORMATTING)) == {"pref", "term"}


# -- retraction, supersession, conflicts ----------------------------------------------------


def test_a_retracted_fact_disappears_once_the_retraction_is_projected(ledger: Ledger) -> None:
    ledger.append(
        ledger.fact("kept", "the service deploys with Docker"),
        ledger.fact("dropped", "the service deploys with Vagrant", key="legacy"),
    )
    assert ids(ledger.select(CODING)) == {"kept", "dropped"}
    ledger.retract("dropped")
    assert ids(ledger.select(CODING)) == {"kept"}


@pytest.mark.parametrize("rule", ["higher_confidence", "newer"])
def test_a_fact_superseded_later_disappears(ledger: Ledger, rule: str) -> None:
    ledger.append(ledger.fact("old", "the service deploys to AWS", key="cloud", confidence=0.8, valid_from=T0))
    assert ids(ledger.select(CODING)) == {"old"}
    confidence, valid_from = (0.9, T0) if rule == "higher_confidence" else (0.8, T0 + timedelta(days=1))
    ledger.append(
        ledger.fact("new", "the service deploys to GCP", key="cloud", confidence=confidence, valid_from=valid_from)
    )
    selection = ledger.select(CODING)
    assert ids(selection) == {"new"}
    assert not selection.items[0].conflicted


def _ambiguous(ledger: Ledger) -> str:
    """Two claims on one slot, equal in confidence and valid time; returns the slot."""
    ledger.append(
        ledger.fact("aws", "the service deploys to AWS", key="cloud", confidence=0.8, valid_from=T0),
        ledger.fact("gcp", "the service deploys to GCP", key="cloud", confidence=0.8, valid_from=T0),
        ledger.fact("docker", "the service deploys with Docker", key="packaging", confidence=0.95),
        ledger.fact("ci", "a deploy of the service waits for CI", key="ci", confidence=0.75),
    )
    return slot_id("session", str(ledger.stored.session), "cloud")


def test_an_ambiguous_conflict_is_served_flagged_with_both_sides_together(ledger: Ledger) -> None:
    slot = _ambiguous(ledger)
    selection = ledger.select(CODING)
    assert ids(selection) == {"aws", "gcp", "docker", "ci"}
    flagged = {item.item_id: item.conflict_id for item in selection.items if item.conflicted}
    assert flagged == {"aws": slot, "gcp": slot}
    block = context.build_context(ledger.engine, ledger.request(CODING)).block
    assert set(block.item_ids) == {"aws", "gcp", "docker", "ci"}
    flagged_lines = [line for line in block.text.splitlines() if CONFLICT_FLAG in line]
    assert len(flagged_lines) == 2
    assert slot.startswith("session:")  # the conflict's slot, put in words (formatter 5)
    assert all("conflict session:this session:cloud" in line for line in flagged_lines)
    assert {"[aws]", "[gcp]"} == {next(w for w in line.split() if w.startswith("[")) for line in flagged_lines}


def test_an_ambiguous_conflict_is_never_served_with_one_side_only(ledger: Ledger) -> None:
    """The flag says "both were said": the side the request's words find
    must bring the other side, which they do not find, or neither may be shown."""
    ledger.append(
        ledger.fact(
            "aws", "deploy the service: the service deploys to AWS", key="cloud", confidence=0.8, valid_from=T0
        ),
        ledger.fact("gcp", "we run on Google Cloud", key="cloud", confidence=0.8, valid_from=T0),
    )
    ledger.append(*(ledger.fact(f"f{i:02d}", f"the service deploy check {i} passes", key=f"k{i}") for i in range(20)))
    served = context.build_context(ledger.engine, ledger.request(CODING))
    assert next(item for item in served.selection.items if item.item_id == "aws").conflicted
    shown = {"selection": ids(served.selection), "block": set(served.block.item_ids)}
    one_sided = sorted(where for where, items in shown.items() if ("aws" in items) != ("gcp" in items))
    assert one_sided == []


def test_a_conflict_resolved_by_a_person_shows_only_the_chosen_fact(ledger: Ledger) -> None:
    slot = _ambiguous(ledger)
    ledger.append(ConflictResolved(conflict_id=slot, chosen_memory_id="gcp", reason="we moved", resolved_by="ada"))
    selection = ledger.select(CODING)
    assert ids(selection) == {"gcp", "docker", "ci"}
    assert not any(item.conflicted for item in selection.items)


def test_a_conflict_on_a_long_key_can_be_resolved_by_a_person(ledger: Ledger) -> None:
    # A fact's key may be 1,000 characters, so its slot (the conflict's id) is longer
    # than a name or a stream id may be.
    key = "where the service deploys " + "and which region it runs in " * 30
    ledger.append(
        ledger.fact("aws", "the service deploys to AWS", key=key, confidence=0.8, valid_from=T0),
        ledger.fact("gcp", "the service deploys to GCP", key=key, confidence=0.8, valid_from=T0),
    )
    slot = slot_id("session", str(ledger.stored.session), key)
    assert len(slot) > 800
    assert next(item for item in ledger.select(CODING).items if item.item_id == "aws").conflicted

    memory.resolve_conflict(ledger.engine, ledger.tenant, slot, "gcp", reason="we moved", actor="ada")
    projections.catch_up_all(ledger.engine, READ_MODELS)

    selection = ledger.select(CODING)
    assert ids(selection) == {"gcp"}
    assert not any(item.conflicted for item in selection.items)


# -- deadline and fail open -----------------------------------------------------------------


@dataclass
class FakeVectors:
    """A vector channel whose vector (``query``, or none) comes after ``sleep_s``, or
    that fails where told."""

    query: QueryVector | None = None
    sleep_s: float = 0.0
    fail_in: str | None = None  # "start" or "wait"
    started: int = 0

    def start(self, text: str) -> context.VectorWait:
        self.started += 1
        if self.fail_in == "start":
            raise VectorIndexGone("the vector index went away")

        def wait(timeout_s: float | None) -> QueryVector | None:
            time.sleep(self.sleep_s)
            if self.fail_in == "wait":
                raise VectorIndexGone("the vector index went away")
            return self.query

        return wait


class VectorIndexGone(RuntimeError):
    """Anything a vector channel might raise."""


@pytest.mark.parametrize(("deadline_ms", "sleep_s"), [(1, 0.05), (400, 0.8)])
def test_a_deadline_that_cannot_be_met_fails_open_and_logs_why(
    ledger: Ledger, caplog: pytest.LogCaptureFixture, deadline_ms: int, sleep_s: float
) -> None:
    ledger.append(ledger.fact("docker", "the service deploys with Docker"))
    assert ids(ledger.select(CODING, vector_search=FakeVectors(), deadline_ms=deadline_ms + 4600)) == {"docker"}
    vectors = FakeVectors(sleep_s=sleep_s)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        started = time.monotonic()
        selection = ledger.select(CODING, vector_search=vectors, deadline_ms=deadline_ms)
        took = time.monotonic() - started
    assert selection.items == ()
    assert selection.empty_reason == "memory unavailable (deadline exceeded)"
    assert took < sleep_s + 3
    assert vectors.started == 1
    assert any(r.levelno == logging.WARNING and "deadline" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("fail_in", ["start", "wait"])
def test_a_failing_vector_search_fails_open_naming_the_error(
    ledger: Ledger, caplog: pytest.LogCaptureFixture, fail_in: str
) -> None:
    ledger.append(ledger.fact("docker", "the service deploys with Docker"))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        selection = ledger.select(CODING, vector_search=FakeVectors(fail_in=fail_in))
    assert selection.items == ()
    assert selection.empty_reason is not None
    assert selection.empty_reason.startswith("memory unavailable (VectorIndexGone: the vector index went away")
    logged = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(ledger.tenant in m and "VectorIndexGone" in m for m in logged)


@pytest.fixture(scope="module")
def vectors_engine(database: TestDatabase) -> Iterator[Engine]:
    """A database of its own with the embeddings projection (the offline model)."""
    with fresh_database(database, "selector_vectors") as engine:
        runner.install(engine, EmbeddingsProjector(offline()))
        yield engine


def test_a_vector_hit_never_brings_back_a_fact_the_filters_hide(vectors_engine: Engine) -> None:
    ledger = Ledger(vectors_engine)
    asked = "the service deploys with Docker"
    ledger.append(
        ledger.fact("visible", "our deployment pipeline uses containers"),
        ledger.fact("weak", asked, key="weak", confidence=0.55),  # the nearest ones are all hidden
        ledger.fact("elsewhere", asked, key="elsewhere", raw_scope_key="sess-2"),
        ledger.fact("pref", asked, key="pref", category="preference"),
        ledger.fact("gone", asked, key="legacy"),
    )
    ledger.retract("gone")
    runner.catch_up(vectors_engine, EmbeddingsProjector(offline()))
    vector = offline().embed([asked])[0]
    query = QueryVector(offline().model, len(vector), embedding_queries.to_literal(vector))
    with vectors_engine.connect() as conn:  # the channel's own order: every fact of the tenant
        order = [n.item_id for n in embedding_queries.nearest(conn, ledger.tenant, vector, query.model, ["fact"], 40)]
    assert order[-1] == "visible" and set(order[:-1]) == {"weak", "elsewhere", "pref", "gone"}

    selection = ledger.select(CODING, vector_search=FakeVectors(query=query))
    assert ids(selection) == {"visible"}
    assert f"vector #{len(order)}" in selection.items[0].reasons  # its place among all the nearest


def test_vectors_of_another_model_fail_open_naming_the_mismatch(vectors_engine: Engine) -> None:
    ledger = Ledger(vectors_engine)
    ledger.append(ledger.fact("visible", "our deployment pipeline uses containers"))
    runner.catch_up(vectors_engine, EmbeddingsProjector(offline()))
    other = QueryVector("openai/text-embedding-3-small", 384, embedding_queries.to_literal([0.05] * 384))
    selection = ledger.select(CODING, vector_search=FakeVectors(query=other))
    assert selection.items == ()
    assert selection.empty_reason is not None and "EmbeddingMismatch" in selection.empty_reason
    shorter = QueryVector(offline().model, 12, embedding_queries.to_literal([0.3] * 12))
    selection = ledger.select(CODING, vector_search=FakeVectors(query=shorter))
    assert selection.empty_reason is not None and "12 dimensions" in selection.empty_reason


# -- as of ----------------------------------------------------------------------------------


def test_as_of_a_position_before_a_retraction_still_shows_the_fact(ledger: Ledger) -> None:
    [kept, dropped] = ledger.append(
        ledger.fact("kept", "the service deploys with Docker"),
        ledger.fact("dropped", "the service deploys with Vagrant", key="legacy"),
    )
    [retraction] = ledger.retract("dropped")
    assert ids(ledger.select(CODING)) == {"kept"}
    before = ledger.select(CODING, as_of=dropped)
    assert ids(before) == {"kept", "dropped"}
    assert before.as_of is not None and before.as_of.endswith(f":{dropped}")
    assert ids(ledger.select(CODING, as_of=kept)) == {"kept"}  # the later fact was not there yet
    assert ids(ledger.select(CODING, as_of=retraction)) == {"kept"}


def test_as_of_a_time_shows_what_the_ledger_held_then(ledger: Ledger) -> None:
    [position] = ledger.append(ledger.fact("dropped", "the service deploys with Vagrant"))
    with ledger.engine.connect() as conn:
        recorded_at = next(
            r.recorded_at for r in event_reads.read_tenant(conn, ledger.tenant) if r.position == position
        )
    ledger.retract("dropped")
    assert ids(ledger.select(CODING)) == set()
    assert ids(ledger.select(CODING, as_of=recorded_at)) == {"dropped"}
    assert ids(ledger.select(CODING, as_of=recorded_at.astimezone(timezone(timedelta(hours=2))))) == {"dropped"}
    earlier = ledger.select(CODING, as_of=recorded_at - timedelta(microseconds=1))
    assert earlier.items == () and earlier.empty_reason == "no memory had been made for this tenant by then"
    now = ledger.select(CODING, as_of=datetime.now(UTC))
    assert now.items == () and now.empty_reason == "no memory matches this request"  # retracted: memory, none shown


def test_as_of_a_naive_time_is_refused_naming_as_of(ledger: Ledger) -> None:
    """The caller's mistake, raised as a wrong budget or style is (before, it failed open:
    an empty block that read as a memory outage)."""
    ledger.append(ledger.fact("docker", "the service deploys with Docker"))
    with pytest.raises(InvalidCommand, match="as_of must be a timezone-aware time, not a naive one"):
        ledger.select(CODING, as_of=datetime(2030, 1, 1, 12, 0))  # naive: no tzinfo, on purpose


# -- recorded context -----------------------------------------------------------------------


def test_build_context_records_the_items_and_hash_it_served(ledger: Ledger) -> None:
    ledger.append(
        ledger.fact("docker", "the service deploys with Docker"),
        ledger.fact("ci", "a deploy of the service waits for CI", key="ci"),
    )
    served = context.build_context(ledger.engine, ledger.request(CODING), style="xml", actor="agent-7")
    assert {item.item_id for item in served.selection.items} == {"docker", "ci"}
    with ledger.engine.connect() as conn:
        event = context_replay.find_served(conn, ledger.tenant, served.event_id)
    assert event.item_ids == tuple(item.item_id for item in served.selection.items)
    assert event.block_hash == served.block.sha256 == hashlib.sha256(served.block.text.encode()).hexdigest()
    assert (event.request, event.style, event.max_chars) == (CODING, "xml", 5000)
    assert event.scopes == ledger.stored  # recorded by the stored scope ids, never the raw ones
    assert ledger.served_events() == [event]
    replayed = context_replay.replay(ledger.engine, ledger.tenant, served.event_id)
    assert replayed.matches and replayed.block.text == served.block.text


def test_replay_matches_after_a_later_retraction(ledger: Ledger) -> None:
    ledger.append(
        ledger.fact("docker", "the service deploys with Docker"),
        ledger.fact("vagrant", "the service deploys with Vagrant", key="legacy"),
    )
    served = context.build_context(ledger.engine, ledger.request(CODING))
    assert "the service deploys with Vagrant" in served.block.text
    ledger.retract("vagrant")
    assert ids(ledger.select(CODING)) == {"docker"}
    replayed = context_replay.replay(ledger.engine, ledger.tenant, served.event_id)
    assert replayed.matches
    assert replayed.block.text == served.block.text


def test_a_block_names_the_requests_own_stored_ids_in_words_and_replays(ledger: Ledger) -> None:
    user = ledger.stored.user
    assert user is not None and user.startswith("hid.user.")
    other = ledger.key.stored_id("user", "bob")
    ledger.append(
        ledger.fact("docker", f"{user} deploys the service with Docker"),
        ledger.fact("review", f"a deploy of the service waits for a review by {other}", key="review"),
    )
    served = context.build_context(ledger.engine, ledger.request(CODING))
    text = served.block.text
    # Stored ids someone wrote into a statement are put in words by their kind alone
    # (formatter 6): a statement naming the reader's id cannot make it say "the user".
    assert f"\u201ca user ({user[9:17]}) deploys the service with Docker\u201d" in text
    assert f"a deploy of the service waits for a review by a user ({other[9:17]})" in text
    as_version_5 = render(served.selection, version="5").text
    assert "\u201cthe user deploys the service with Docker\u201d" in as_version_5
    assert "hid." not in text.replace(f"[{served.selection.items[0].item_id}]", "")  # ids are plain here
    assert "## Session memory\n" in text  # no stored key in the heading
    replayed = context_replay.replay(ledger.engine, ledger.tenant, served.event_id)
    assert replayed.matches and replayed.block.text == text


def _served_again(ledger: Ledger, served: ContextServed) -> str:
    """Append a copy of ``served`` as another ContextServed event; its id."""
    event_id = f"context:{uuid.uuid4()}"
    news = [NewEvent(event=served, event_id=event_id, occurred_at=datetime.now(UTC))]
    with ledger.engine.begin() as tx:
        stream = context_recording.CONTEXT_STREAM_PREFIX + event_id.removeprefix("context:")
        event_store.append(tx, ledger.tenant, stream, news, 0)
    return event_id


def test_replay_renders_a_block_as_the_formatter_version_it_records(ledger: Ledger) -> None:
    """A block served before an upgrade of the formatter replays as it was served."""
    ledger.append(ledger.fact("docker", f"{ledger.stored.user} deploys the service with Docker"))
    served = context.build_context(ledger.engine, ledger.request(CODING))
    with ledger.engine.connect() as conn:
        event = context_replay.find_served(conn, ledger.tenant, served.event_id)
    assert event.formatter_version == FORMATTER_VERSION == "8"
    as_version_2 = render(served.selection, version="2")  # what the formatter of version 2 served
    assert f"{ledger.stored.user} deploys" in as_version_2.text and as_version_2.text != served.block.text
    for version in ("2", "3", "4", "5"):
        as_served = render(served.selection, version=version)  # what that version's formatter served
        older = msgspec.structs.replace(event, formatter_version=version, block_hash=as_served.sha256)
        replayed = context_replay.replay(ledger.engine, ledger.tenant, _served_again(ledger, older))
        assert replayed.matches and replayed.block.text == as_served.text
    unknown = _served_again(ledger, msgspec.structs.replace(event, formatter_version="1"))
    with pytest.raises(InvalidCommand, match="formatter version '1' cannot be rendered by this memledger"):
        context_replay.replay(ledger.engine, ledger.tenant, unknown)


def test_a_sentence_drawn_into_two_facts_is_quoted_once(ledger: Ledger) -> None:
    """An extractor may draw two facts (keys) from one sentence; the block quotes it
    once, and the key of the one left out still shadows the broader scopes' facts."""
    said = "the service deploys with Docker and keeps its database on PostgreSQL"
    ledger.append(
        ledger.fact("s-deploy", said, key="deploy tool"),
        ledger.fact("s-db", said, key="database"),
        ledger.fact("u-db", "ada deploys the service against SQLite", scope="user", key="database"),
        ledger.fact("u-ci", "ada runs the service tests in CI before a deploy", scope="user", key="ci"),
    )
    selection = ledger.select(CODING)
    shown = ids(selection)
    assert len(shown & {"s-deploy", "s-db"}) == 1
    assert "u-db" not in shown  # shadowed by the session's "database", said by the quotation shown
    assert "u-ci" in shown
    served = context.build_context(ledger.engine, ledger.request(CODING))
    assert served.block.text.count(said) == 1


def test_a_failed_open_context_is_recorded_and_replays(ledger: Ledger) -> None:
    ledger.append(ledger.fact("docker", "the service deploys with Docker"))
    request = ledger.request(CODING)
    served = context.build_context(ledger.engine, request, vector_search=FakeVectors(fail_in="wait"))
    assert served.selection.items == ()
    [event] = ledger.served_events()
    assert event.item_ids == () and event.empty_reason == served.selection.empty_reason
    assert context_replay.replay(ledger.engine, ledger.tenant, served.event_id).matches


def test_find_served_of_an_unknown_id_raises_not_found(ledger: Ledger) -> None:
    ledger.append(ledger.fact("docker", "the service deploys with Docker"))
    served = context.build_context(ledger.engine, ledger.request(CODING))
    with ledger.engine.connect() as conn:
        with pytest.raises(NotFound, match="no ContextServed event"):
            context_replay.find_served(conn, ledger.tenant, f"context:{uuid.uuid4()}")
        with pytest.raises(NotFound):  # a served id of this tenant is not another tenant's
            context_replay.find_served(conn, f"other-{uuid.uuid4().hex[:8]}", served.event_id)
    with pytest.raises(NotFound):
        context_replay.replay(ledger.engine, ledger.tenant, "context:nothing-here")


def test_two_contexts_built_at_once_are_both_recorded(ledger: Ledger) -> None:
    ledger.append(
        ledger.fact("docker", "the service deploys with Docker"),
        ledger.fact("pref", "prefers short replies", category="preference"),
    )
    barrier = threading.Barrier(2)

    def build(text: str) -> context.ServedContext:
        barrier.wait()
        return context.build_context(ledger.engine, ledger.request(text))

    with ThreadPoolExecutor(max_workers=2) as pool:
        coding, formatting = pool.map(build, [CODING, FORMATTING])
    assert ids(coding.selection) == {"docker"} and ids(formatting.selection) == {"pref"}
    assert coding.event_id != formatting.event_id
    recorded = {(e.request, e.item_ids) for e in ledger.served_events()}
    assert recorded == {(CODING, ("docker",)), (FORMATTING, ("pref",))}
    for served in (coding, formatting):
        replayed = context_replay.replay(ledger.engine, ledger.tenant, served.event_id)
        assert replayed.matches and replayed.block.sha256 == served.block.sha256


# -- budget ---------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["text", "xml"])
def test_the_block_never_exceeds_budget_chars(ledger: Ledger, style: Literal["text", "xml"]) -> None:
    ledger.append(
        *(
            ledger.fact(f"f{i:02d}", f"deploy step {i}: the service is deployed after check {i} " + "x" * 60)
            for i in range(30)
        )
    )
    shown = []
    for budget in (context_limits.MIN_BUDGET_CHARS, 900, 2500, 20_000):
        served = context.build_context(ledger.engine, ledger.request(CODING, budget_chars=budget), style=style)
        assert served.block.chars == len(served.block.text) <= budget
        assert set(served.block.item_ids) <= ids(served.selection)
        shown.append(len(served.block.item_ids))
    assert shown == sorted(shown) and shown[0] < 30 and shown[-1] == 30  # the budget, not the data, limits


def test_a_budget_below_the_minimum_is_refused_and_nothing_is_recorded(ledger: Ledger) -> None:
    ledger.append(ledger.fact("docker", "the service deploys with Docker"))
    context.build_context(ledger.engine, ledger.request(CODING))
    assert len(ledger.served_events()) == 1
    too_small = context_limits.MIN_BUDGET_CHARS - 1
    with pytest.raises(InvalidCommand, match=f"budget_chars must be at least {context_limits.MIN_BUDGET_CHARS}, not"):
        context.build_context(ledger.engine, ledger.request(CODING, budget_chars=too_small))
    assert len(ledger.served_events()) == 1
