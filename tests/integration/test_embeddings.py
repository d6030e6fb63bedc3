"""The embeddings projection on a real PostgreSQL with pgvector, with the real
offline model: rows for turns, facts and entities; the cache that makes rebuilds
embed nothing; one model per tenant; tenant-filtered nearest neighbours; erasure;
and the vector channel built by bootstrap.

Each test module database is its own (``fresh_database``): a test here marks the
embeddings projection failed on purpose, and checkpoints are global.
"""

from __future__ import annotations

import math
import random
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger import bootstrap
from memledger.adapters.embedding import Embedder, offline
from memledger.config import Settings
from memledger.errors import EmbeddingMismatch, ProjectionFailed
from memledger.events.catalogue import (
    EntityObserved,
    Event,
    FactExtracted,
    MemoryPromoted,
    MemoryRetracted,
    Scopes,
    TurnRecorded,
)
from memledger.events.envelope import NewEvent
from memledger.projectors import checkpoints, rebuild, registry, runner
from memledger.projectors.embeddings.projector import EmbeddingsProjector, embeddings, text_sha256
from memledger.projectors.embeddings.queries import delete_items, nearest, text_hashes
from memledger.service import context, projections, scope_ids, search, vector_channel
from memledger.service.record import TurnInput, record_turns
from memledger.store import embedding_cache, event_reads, event_store
from tests.integration.test_erasure_races import WithoutHeadStart
from tests.integration.test_projections_support import assert_equals_rebuild, checksums, fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

T0 = datetime(2025, 7, 1, 9, 0, tzinfo=UTC)


class Counting:
    """An embedder that counts the texts it is asked to embed, around the real one."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return self.inner.embed(texts)


class Constant:
    """Another model: every text gets the same vector of ``dim`` dimensions."""

    def __init__(self, model: str, dim: int = 384) -> None:
        self.model, self.dim = model, dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0 / math.sqrt(self.dim)] * self.dim for _ in texts]


@pytest.fixture(scope="module")
def vectors_db(database: TestDatabase) -> Iterator[Engine]:
    with fresh_database(database, "embeddings") as engine:
        runner.install(engine, EmbeddingsProjector(offline()))
        yield engine


@pytest.fixture
def counting() -> Counting:
    return Counting(offline())


class Writer:
    def __init__(self, engine: Engine, tenant: str) -> None:
        self.engine, self.tenant, self.n = engine, tenant, 0

    def append(self, *items: Event) -> None:
        news = []
        for event in items:
            self.n += 1
            when = T0 + timedelta(minutes=self.n)
            news.append(NewEvent(event=event, event_id=f"{self.tenant}-{self.n}", occurred_at=when))
        with self.engine.begin() as tx:
            event_store.append(tx, self.tenant, f"s-{uuid.uuid4().hex[:8]}", news, None)


def fact(memory_id: str, key: str, statement: str, *, scope_key: str = "ada") -> FactExtracted:
    return FactExtracted(
        memory_id=memory_id,
        scope="user",
        scope_key=scope_key,
        key=key,
        statement=statement,
        category="preference",
        confidence=0.9,
    )


def turn(turn_id: str, text: str) -> TurnRecorded:
    return TurnRecorded(turn_id=turn_id, role="user", text=text, scopes=Scopes(user="ada"))


def rows(engine: Engine, tenant: str) -> dict[tuple[str, str], dict[str, object]]:
    with engine.connect() as conn:
        found = conn.execute(sa.select(embeddings).where(embeddings.c.tenant_id == tenant)).mappings().all()
    return {(r["item_kind"], r["item_id"]): dict(r) for r in found}


def new_tenant() -> str:
    return f"emb-{uuid.uuid4().hex[:10]}"


def test_the_projector_gives_turns_facts_and_entities_a_vector_with_its_model(
    vectors_db: Engine, counting: Counting
) -> None:
    tenant = new_tenant()
    Writer(vectors_db, tenant).append(
        turn("t1", "I moved the Phoenix backend to PostgreSQL last week"),
        fact("m1", "database", "Phoenix stores its data in PostgreSQL"),
        MemoryPromoted(
            memory_id="m2",
            kind="decision",
            scope="project",
            scope_key="phoenix",
            key="database",
            statement="Use PostgreSQL for Phoenix",
        ),
        EntityObserved(name="Phoenix", entity_type="project", confidence=0.9),
        EntityObserved(name="phoenix", entity_type="project", confidence=0.9, description="the billing service"),
        EntityObserved(name="Phoenix", entity_type="project", confidence=0.9),  # no description: keeps it
        turn("t1", "a second recording of turn t1 keeps the first text"),
        fact("m1", "database", "a re-extraction of m1 is a mention, not a new text"),
    )
    projector = EmbeddingsProjector(counting)
    runner.catch_up(vectors_db, projector, batch_size=3)

    found = rows(vectors_db, tenant)
    assert set(found) == {("turn", "t1"), ("fact", "m1"), ("fact", "m2"), ("entity", "project:phoenix")}
    expected_texts = {
        ("turn", "t1"): "I moved the Phoenix backend to PostgreSQL last week",
        ("fact", "m1"): "database: Phoenix stores its data in PostgreSQL",
        ("fact", "m2"): "database: Use PostgreSQL for Phoenix",
        ("entity", "project:phoenix"): "phoenix: the billing service",
    }
    for key, row in found.items():
        assert row["model"] == offline().model == "all-MiniLM-L6-v2-onnx-int8-dq"
        assert row["dim"] == 384
        assert row["text_sha256"] == text_sha256(expected_texts[key])
        vector = row["embedding"]
        assert isinstance(vector, list) and len(vector) == 384
        assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-4)
    assert "a second recording of turn t1 keeps the first text" not in counting.texts
    with vectors_db.connect() as conn:
        cached = embedding_cache.lookup(conn, offline().model, [text_sha256(t) for t in expected_texts.values()])
    assert len(cached) == 4
    # the row's vector is the cache's, bit for bit
    cached_m1 = cached[text_sha256(expected_texts[("fact", "m1")])]
    assert found[("fact", "m1")]["embedding"] == [float(v) for v in cached_m1[1:-1].split(",")]


def test_a_text_seen_before_is_never_embedded_again_in_any_tenant_or_kind(
    vectors_db: Engine, counting: Counting
) -> None:
    text = f"the staging cluster runs on spot instances ({uuid.uuid4().hex[:6]})"
    first, second = new_tenant(), new_tenant()
    Writer(vectors_db, first).append(turn("t1", text))
    Writer(vectors_db, second).append(
        turn("t9", text), EntityObserved(name=text, entity_type="concept", confidence=0.8)
    )
    projector = EmbeddingsProjector(counting)
    runner.catch_up(vectors_db, projector)
    assert counting.texts.count(text) == 1
    assert rows(vectors_db, first)[("turn", "t1")]["embedding"] == rows(vectors_db, second)[("turn", "t9")]["embedding"]


class Bystander:
    """An embedder that, while it embeds, has another writer append and a gap-safe
    reader look for what was appended (as the worker and the other projectors do)."""

    def __init__(self, engine: Engine, inner: Embedder) -> None:
        self.engine, self.inner = engine, inner
        self.seen: list[bool] = []
        self.model, self.dim = inner.model, inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.seen:  # once: the bystander's own turn is embedded in a later call
            return self.inner.embed(texts)
        tenant = new_tenant()
        Writer(self.engine, tenant).append(turn("b1", "a bystander's turn"))
        with self.engine.connect() as conn:
            self.seen.append(bool(event_reads.read_all(conn, tenant_id=tenant)))
        return self.inner.embed(texts)


def test_embedding_happens_outside_the_batch_transaction_so_it_holds_no_reader_back(vectors_db: Engine) -> None:
    tenant = new_tenant()
    Writer(vectors_db, tenant).append(turn("t1", f"a text nobody embedded yet ({uuid.uuid4().hex})"))
    bystander = Bystander(vectors_db, offline())

    runner.run_batch(vectors_db, EmbeddingsProjector(bystander), batch_size=100_000)

    # Inside a write transaction (one holding a transaction id, as a batch's
    # checkpoint lock does) a reader would not see the bystander's turn until the
    # batch committed: seconds of embedding in which the whole ledger stood still.
    assert bystander.seen == [True]
    assert ("turn", "t1") in rows(vectors_db, tenant)


def test_a_rebuild_embeds_nothing_and_gives_the_same_rows(vectors_db: Engine, counting: Counting) -> None:
    tenant = new_tenant()
    writer = Writer(vectors_db, tenant)
    for n in range(30):
        writer.append(
            turn(f"t{n}", f"turn number {n} about the quarterly report"),
            fact(f"m{n}", f"topic {n % 7}", f"statement {n} about topic {n % 7}"),
            EntityObserved(
                name=f"Tool {n % 5}",
                entity_type="tool",
                confidence=0.8,
                description=f"described at {n}" if n % 3 else None,
            ),
        )
    projector = EmbeddingsProjector(counting)
    runner.catch_up(vectors_db, projector, batch_size=2)  # live: tiny batches
    assert counting.texts, "the live run embedded the new texts"
    before = checksums(vectors_db, projector)

    counting.texts.clear()
    rebuild.rebuild(vectors_db, projector)  # blue/green, from position 0, batches of 5000

    assert counting.texts == [], "a rebuild takes every vector from the cache"
    assert checksums(vectors_db, projector) == before
    assert_equals_rebuild(vectors_db, projector)
    with vectors_db.connect() as conn:
        indexes = (
            conn.execute(
                sa.text("SELECT indexdef FROM pg_indexes WHERE schemaname = 'proj_embeddings'")  # text(): catalogue
            )
            .scalars()
            .all()
        )
    assert any("hnsw" in d and "vector_cosine_ops" in d and "m='16'" in d for d in indexes), indexes


def test_nearest_finds_the_relevant_item_and_only_the_tenants_own(vectors_db: Engine) -> None:
    mine, other = new_tenant(), new_tenant()
    Writer(vectors_db, mine).append(
        fact("db", "database", "the Phoenix project keeps its records in PostgreSQL"),
        fact("pet", "pet", "Ada owns a dog"),
        fact("city", "city", "Ada lives in Lisbon"),
        turn("t1", "Lunch was great today"),
    )
    Writer(vectors_db, other).append(
        fact("db-other", "database", "the Phoenix project keeps its records in PostgreSQL"),
        fact("x", "editor", "Bo writes code in Emacs"),
    )
    projector = EmbeddingsProjector(offline())
    runner.catch_up(vectors_db, projector)
    query = offline().embed(["which relational store holds our data?"])[0]

    with vectors_db.connect() as conn:
        facts_only = nearest(conn, mine, query, offline().model, kinds=["fact"], k=10)
        everything = nearest(conn, mine, query, offline().model, kinds=["fact", "turn", "entity"], k=10)
        theirs = nearest(conn, other, query, offline().model, kinds=["fact"], k=1)
        nobody = nearest(conn, new_tenant(), query, offline().model, kinds=["fact"], k=5)

    assert facts_only[0].item_id == "db"
    assert {n.item_id for n in facts_only} == {"db", "pet", "city"}
    assert {(n.item_kind, n.item_id) for n in everything} == {
        ("fact", "db"),
        ("fact", "pet"),
        ("fact", "city"),
        ("turn", "t1"),
    }
    assert [n.distance for n in everything] == sorted(n.distance for n in everything)
    assert [n.item_id for n in theirs] == ["db-other"]
    assert nobody == []


def test_a_query_with_another_model_or_dimension_is_an_error_not_an_empty_answer(vectors_db: Engine) -> None:
    tenant = new_tenant()
    Writer(vectors_db, tenant).append(fact("m1", "editor", "Ada writes code in Neovim"))
    runner.catch_up(vectors_db, EmbeddingsProjector(offline()))
    query = offline().embed(["text editor"])[0]

    with vectors_db.connect() as conn:
        with pytest.raises(EmbeddingMismatch, match="all-MiniLM-L6-v2-onnx-int8-dq") as other_model:
            nearest(conn, tenant, query, "openai/text-embedding-3-small", kinds=["fact"], k=5)
        with pytest.raises(EmbeddingMismatch, match="768 dimensions"):
            nearest(conn, tenant, [0.0] * 768, offline().model, kinds=["fact"], k=5)
    assert "rebuild" in str(other_model.value)


def test_erasure_deletes_the_rows_and_the_cache_entries_of_erased_text(vectors_db: Engine, counting: Counting) -> None:
    tenant = new_tenant()
    secret = f"my passport number is in the blue drawer ({uuid.uuid4().hex[:6]})"
    Writer(vectors_db, tenant).append(turn("t1", secret), turn("t2", "the weather is fine"))
    projector = EmbeddingsProjector(counting)
    runner.catch_up(vectors_db, projector)
    model = offline().model

    with vectors_db.begin() as tx:
        hashes = text_hashes(tx, tenant, [("turn", "t1")])
        assert hashes == {text_sha256(secret)}
        assert delete_items(tx, tenant, [("turn", "t1")]) == 1
        assert embedding_cache.forget(tx, hashes) == 1

    assert set(rows(vectors_db, tenant)) == {("turn", "t2")}
    with vectors_db.connect() as conn:
        assert embedding_cache.lookup(conn, model, hashes) == {}
    counting.texts.clear()
    rebuild.rebuild(vectors_db, projector)  # the ledger still holds the text here: it is embedded anew
    assert counting.texts == [secret]


def test_a_process_with_another_model_refuses_to_mix_vectors_and_says_rebuild(database: TestDatabase) -> None:
    with fresh_database(database, "embeddings_models") as engine:
        tenant = new_tenant()
        writer = Writer(engine, tenant)
        writer.append(fact("m1", "editor", "Ada writes code in Neovim"))
        runner.install(engine, EmbeddingsProjector(offline()))
        runner.catch_up(engine, EmbeddingsProjector(offline()))

        writer.append(fact("m2", "city", "Ada lives in Lisbon"))
        with pytest.raises(ProjectionFailed, match="rebuild the embeddings projection"):
            runner.catch_up(engine, EmbeddingsProjector(Constant("other-model")))
        runner.reset_failure(engine, "embeddings")
        with pytest.raises(ProjectionFailed, match="makes 12-dimensional vectors"):
            runner.catch_up(engine, EmbeddingsProjector(Constant("small", dim=12)))

        # changing the model is a rebuild: every vector is then the new model's
        rebuild.rebuild(engine, EmbeddingsProjector(Constant("other-model")))
        assert {r["model"] for r in rows(engine, tenant).values()} == {"other-model"}
        with engine.connect() as conn:
            cp = checkpoints.get(conn, "embeddings")
            assert cp is not None and cp.state == "live"
            with pytest.raises(EmbeddingMismatch):
                nearest(conn, tenant, offline().embed(["editor"])[0], offline().model, kinds=["fact"], k=3)


def test_bootstrap_vector_search_finds_a_fact_by_meaning(vectors_db: Engine) -> None:
    tenant = new_tenant()
    Writer(vectors_db, tenant).append(
        fact("pet", "pet", "Ada owns a dog"),
        fact("editor", "editor", "Ada writes code in Neovim"),
        fact("city", "city", "Ada lives in Lisbon"),
        fact("diet", "diet", "Ada is vegetarian"),
        fact("deadline", "deadline", "the Phoenix launch is due in March"),
    )
    runner.catch_up(vectors_db, registry.by_name("embeddings"))
    # app_engine unused here: the vector channel reads through the caller's connection
    database = bootstrap.assemble(Settings(embedding_model="minilm"), vectors_db, vectors_db.url, False, vectors_db)
    search = bootstrap.vector_search(database)

    with vectors_db.connect() as conn:
        found = search(conn, tenant, "Does she have a puppy?")  # no word in common with the fact
        assert found[0] == "pet"
        assert search(conn, tenant, "what does she eat")[0] == "diet"
        assert search(conn, tenant, "   ") == []
        assert search(conn, new_tenant(), "Does she have a puppy?") == []
    # The process keeps the vectors of requests, not their words (erasure cannot reach them).
    kept = [part for key in vector_channel._vectors for part in key]
    assert kept and not [part for part in kept if isinstance(part, str) and "puppy" in part]


def _search_database(engine: Engine) -> bootstrap.App:
    return bootstrap.assemble(Settings(), engine, engine.url, False, engine)


def test_search_finds_turns_and_facts_by_meaning_through_its_vector_channel(vectors_db: Engine) -> None:
    tenant = new_tenant()
    ada_key, bob_key = (scope_ids.stored_id(vectors_db, tenant, "user", user) for user in ("ada", "bob"))
    said_by_ada = Scopes(user=ada_key)  # as recording a turn stores it: the request sees it
    Writer(vectors_db, tenant).append(
        TurnRecorded(
            turn_id="t-pet",
            role="user",
            text="We adopted a little beagle from the shelter last spring",
            scopes=said_by_ada,
        ),
        TurnRecorded(
            turn_id="t-city", role="user", text="The flat in Lisbon gets a lot of afternoon sun", scopes=said_by_ada
        ),
        fact("diet", "diet", "Ada is vegetarian", scope_key=ada_key),
        fact("bob-pet", "pet", "Bob owns a cat", scope_key=bob_key),  # another user's
    )
    projections.install_all(vectors_db)
    projections.catch_up_all(vectors_db, ["turns", "facts", "embeddings"])
    vectors = bootstrap.vector_search(_search_database(vectors_db))
    ada = Scopes(user="ada")

    def ids(query: str, **options: object) -> list[str]:
        return [item.item_id for item in search.search(vectors_db, tenant, ada, query, k=5, **options)]  # type: ignore[arg-type]

    # No word in common with what answers them: only the vector channel finds these.
    assert "t-pet" not in ids("Does she have a puppy?")
    assert ids("Does she have a puppy?", vector_search=vectors)[0] == "t-pet"
    assert "diet" in ids("what does she eat", vector_search=vectors)
    # A fact of a scope the request does not have never comes back, however near.
    assert "bob-pet" not in ids("Does anyone own a cat?", vector_search=vectors)
    found = search.search(vectors_db, tenant, ada, "Does she have a puppy?", k=5, vector_search=vectors)
    assert found[0].source_turns == ("t-pet",) and "vector #1" in found[0].reasons


def test_a_blank_turn_is_never_found_by_meaning(vectors_db: Engine) -> None:
    """A blank turn gets a vector like any other, and it is near every query (the
    model's vector of nothing): search leaves it out rather than list an empty line."""
    tenant = new_tenant()
    Writer(vectors_db, tenant).append(turn("t-blank", "  "), turn("t-pet", "We adopted a beagle last spring"))
    projections.install_all(vectors_db)
    projections.catch_up_all(vectors_db, ["turns", "facts", "embeddings"])
    assert ("turn", "t-blank") in rows(vectors_db, tenant)  # it has its vector
    vectors = bootstrap.vector_search(_search_database(vectors_db))
    for query in ("zzzzqqq", "Emacs", "Does she have a puppy?"):
        found = search.search(vectors_db, tenant, Scopes(user="ada"), query, k=5, vector_search=vectors)
        assert "t-blank" not in [item.item_id for item in found], query


def test_search_refuses_to_compare_a_query_with_vectors_of_another_model(vectors_db: Engine) -> None:
    tenant = new_tenant()
    Writer(vectors_db, tenant).append(turn("t1", "We adopted a little beagle"))
    projections.install_all(vectors_db)
    projections.catch_up_all(vectors_db, ["turns", "embeddings"])
    other = bootstrap.vector_search(_search_database(vectors_db), Constant("other-model"))
    with pytest.raises(EmbeddingMismatch):
        search.search(vectors_db, tenant, Scopes(user="ada"), "a puppy", vector_search=other)


def test_a_retracted_fact_never_comes_back_through_the_vector_channel(vectors_db: Engine) -> None:
    tenant = new_tenant()
    Writer(vectors_db, tenant).append(
        fact("pet", "pet", "Ada owns a dog"),
        fact("pet-now", "pet", "Ada has no animals anymore"),
        MemoryRetracted(item_id="pet", item_kind="fact"),
    )
    projections.install_all(vectors_db)
    projections.catch_up_all(vectors_db, ["facts", "embeddings"])
    database = bootstrap.assemble(Settings(), vectors_db, vectors_db.url, False, vectors_db)
    request = context.SelectRequest(
        tenant_id=tenant, scopes=Scopes(user="ada"), request="Does she have a puppy?", deadline_ms=5000
    )

    selection = context.select(vectors_db, request, vector_search=bootstrap.vector_search(database))

    assert "pet" not in [item.item_id for item in selection.items]


def test_a_live_catch_up_and_a_rebuild_caching_the_same_texts_do_not_deadlock(database: TestDatabase) -> None:
    """Both cached their texts chunk by chunk, shortest first, in one transaction each:
    overlapping rows taken in different orders deadlocked ("deadlock detected"), and the
    catch-up died as if the database were down. Now each transaction stores once, in
    hash order."""
    words = ["alpha", "beta", "gamma", "delta", "omega", "phoenix", "deploy", "vim"]
    rng = random.Random(3)  # texts of 2 to 13 words, overlapping in length: chunks interleave
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) + f" {i}" for i in range(400)]
    with fresh_database(database, "cache_writers", pool_size=6) as engine:
        runner.install(engine, WithoutHeadStart(offline()))
        scopes = Scopes(session="s")
        for start in range(0, len(texts), 50):
            record_turns(
                engine, "t1", [TurnInput(role="user", text=t, scopes=scopes) for t in texts[start : start + 50]]
            )
        errors: list[BaseException] = []

        def run(call: Callable[[], object]) -> None:
            try:
                call()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [
            threading.Thread(
                target=run, args=(lambda: runner.catch_up(engine, WithoutHeadStart(offline()), batch_size=150),)
            ),
            threading.Thread(target=run, args=(lambda: rebuild.rebuild(engine, WithoutHeadStart(offline())),)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
        assert errors == []
        assert_equals_rebuild(engine, WithoutHeadStart(offline()))
