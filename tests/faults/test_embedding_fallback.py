"""The embedding chain with its first provider failing, over real HTTP, on a real PostgreSQL.

The chain is built by ``bootstrap`` from settings (``MEMLEDGER_EMBEDDING_MODELS``): a
provider reached through litellm's Router, over HTTP, at a fake endpoint on loopback
that fails as each test scripts it, then the offline model. The questions: nothing is
lost (every item gets a row), a fallback's vectors are kept under its own model and
never searched as the first model's, the breaker skips the failing provider within
its window and tries it again after, the backfill moves the fallback rows to the
first model once it answers, and the rows always equal a rebuild's.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from memledger import bootstrap
from memledger.adapters.embedding import MINILM_MODEL
from memledger.adapters.embedding_chain import EmbeddingChain, as_chain
from memledger.errors import EmbeddingMismatch, ProjectionFailed
from memledger.projectors import checkpoints, rebuild, registry, runner
from memledger.projectors.embeddings import backfill as embedding_backfill
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.projectors.embeddings.projector import EmbeddingsProjector, embeddings
from memledger.service import projections, search
from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes
from tests.faults.fake_embedding_provider import OK, FakeEmbeddings, fake_embeddings, vector
from tests.faults.fake_provider import HANG, Reply, status
from tests.faults.own_server import OwnServer

PRIMARY, SECOND = "openai/fake-primary", "openai/fake-second"
TIMEOUT_S = 0.5
COOL_S = 2.0
BATCH = 2
TEXTS = (
    "I moved the Phoenix backend to PostgreSQL last week",
    "Sarah reviews every Terraform change on Atlas",
    "We deploy Phoenix on Fridays after the standup",
    "The kestrel dashboard shows the nightly import times",
    "My laptop runs Fedora with the Sway window manager",
    "The Atlas billing service retries failed invoices twice",
    "Our Kubernetes cluster lives in the Frankfurt region",
    "The quarterly review is booked for the second Tuesday",
    "Marta owns the onboarding checklist for new engineers",
    "The search index is rebuilt every Sunday night",
)


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeEmbeddings]:
    """The fake provider, and litellm imported and called once (its import takes seconds,
    which must not count against the delays measured here)."""
    with fake_embeddings() as running:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        EmbeddingChain((PRIMARY,), options=running.options(), retries=1).embed_any(["warm up"])
        yield running


@pytest.fixture(scope="module")
def database(own_server: OwnServer, provider: FakeEmbeddings) -> Iterator[bootstrap.App]:
    database = own_server.database(
        "embchain",
        embedding_models=f"{PRIMARY},minilm",
        embedding_options=provider.options(),
        embedding_timeout_s=TIMEOUT_S,
        embedding_retries=1,
        embedding_cooldown_s=COOL_S,
        embedding_backfill_interval_s=0,
    )
    yield database


def chain_of(database: bootstrap.App, provider: FakeEmbeddings, *script: Reply) -> tuple[bootstrap.App, EmbeddingChain]:
    """``database``'s application with a new chain (no cool-down yet) as the settings
    build it, and the chain, the first provider following ``script`` from now."""
    bootstrap._embedding_chain.cache_clear()  # a chain with a fresh Router per test
    chain = bootstrap.build_embedder(database.settings)
    assert isinstance(chain, EmbeddingChain), chain
    app = dataclasses.replace(database, embedder=chain)
    bootstrap.preload_embedder(app)  # the offline model's loading is no outage's cost
    provider.script("fake-primary", *script)
    provider.asked.clear()
    return app, chain


def record(database: bootstrap.App, tenant: str, texts: tuple[str, ...] = TEXTS) -> list[str]:
    turns = [
        TurnInput(
            role="user", text=said(tenant, text), turn_id=f"{tenant}-{i}", scopes=Scopes(session=tenant, user="ann")
        )
        for i, text in enumerate(texts)
    ]
    record_turns(database.for_tenant(tenant), tenant, turns)
    return [str(t.turn_id) for t in turns]


def said(tenant: str, text: str) -> str:
    """``text`` as ``tenant`` says it: the cache is shared, and each test's texts must be new to it."""
    return f"{text} ({tenant})"


def project(database: bootstrap.App) -> list[float]:
    """Catch the other projections up, then the embeddings projection batch by batch;
    each batch's time."""
    projections.catch_up_all(database.engine, ["turns", "facts", "entities", "relationships"])
    projector = registry.by_name("embeddings", database.embedder)
    took = []
    while True:
        start = time.monotonic()
        applied = runner.run_batch(database.engine, projector, batch_size=BATCH)
        if not applied:
            return took
        took.append(time.monotonic() - start)


def models_of(database: bootstrap.App, tenant: str) -> dict[str, str]:
    """Each turn's row model."""
    e = embeddings.c
    stmt = sa.select(e.item_id, e.model).where(e.tenant_id == tenant, e.item_kind == "turn")
    with database.engine.connect() as conn:
        return {str(r[0]): str(r[1]) for r in conn.execute(stmt).all()}


def nearest_turns(database: bootstrap.App, tenant: str, model: str, text: str) -> list[str]:
    query = vector("fake-primary", said(tenant, text))
    with database.engine.begin() as conn:
        found = embedding_queries.nearest(conn, tenant, query, model, kinds=["turn"], k=3, chain=chain_models(database))
    return [n.item_id for n in found]


def chain_models(database: bootstrap.App) -> tuple[str, ...]:
    """The models of the application's embedder, first choice first."""
    return as_chain(database.embedder).models


def equal_to_a_rebuild(database: bootstrap.App) -> bool:
    diffs = rebuild.verify(database.engine, registry.by_name("embeddings", database.embedder))
    return bool(diffs) and all(d.equal for d in diffs)


def test_a_failing_primary_falls_back_to_the_offline_model_under_its_name_and_nothing_is_lost(
    database: bootstrap.App, provider: FakeEmbeddings, caplog: pytest.LogCaptureFixture
) -> None:
    database, chain = chain_of(database, provider, status(500))
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    turn_ids = record(database, tenant)
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="memledger.adapters.embedding_chain"):
        took = project(database)
    windows = 1 + int((time.monotonic() - began) / COOL_S)

    assert models_of(database, tenant) == dict.fromkeys(turn_ids, MINILM_MODEL), "every turn, under the fallback"
    assert chain.switches == len(took) and chain.answered == {MINILM_MODEL: len(took)}
    assert f"embedding model {MINILM_MODEL} answered instead of {PRIMARY}" in caplog.text
    assert 1 <= provider.asked_of("fake-primary") <= windows < len(took), "asked once per breaker window"
    assert max(took) < 2.0, f"batch delays {took}"
    assert equal_to_a_rebuild(database), "a rebuild during the outage gives the live rows"


def test_search_uses_the_tenants_model_and_finds_fallback_items_by_their_words(
    database: bootstrap.App, provider: FakeEmbeddings
) -> None:
    database, chain = chain_of(database, provider, status(500))
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    record(database, tenant)
    project(database)
    channel = bootstrap.vector_search(database)
    assert channel.embedder is chain and channel.embedder.model == PRIMARY

    found = search.search(database.engine, tenant, Scopes(user="ann"), "Frankfurt Kubernetes", vector_search=channel)
    assert [item.item_id for item in found][:1] == [f"{tenant}-6"], "found by its words; the vector channel is out"
    assert channel.skipped >= 1
    # the first model's query never meets the fallback's vectors: no answer, no mismatch
    assert nearest_turns(database, tenant, PRIMARY, TEXTS[6]) == []
    with database.engine.begin() as conn:
        query = vector("fake-primary", TEXTS[6])
        mixed = embedding_queries.nearest(conn, tenant, query, MINILM_MODEL, ["turn"], 3, chain.models)
    assert mixed and all(n.distance > 0.3 for n in mixed), "another model's query vector is only another direction"


def test_the_backfill_moves_fallback_rows_to_the_first_model_once_it_answers(
    database: bootstrap.App, provider: FakeEmbeddings
) -> None:
    database, chain = chain_of(database, provider, status(500))
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    turn_ids = record(database, tenant)
    project(database)
    assert set(models_of(database, tenant).values()) == {MINILM_MODEL}

    still_down = embedding_backfill.backfill(database.engine, chain)
    assert still_down.failed and still_down.moved == 0, "the breaker is open: nothing moves"
    provider.script("fake-primary", OK)
    time.sleep(COOL_S + 0.2)  # the breaker's window passes
    done = embedding_backfill.backfill(database.engine, chain)

    assert not done.failed and done.moved >= len(turn_ids)
    assert models_of(database, tenant) == dict.fromkeys(turn_ids, PRIMARY)
    assert nearest_turns(database, tenant, PRIMARY, TEXTS[6])[:1] == [turn_ids[6]]
    with database.engine.connect() as conn:
        assert embedding_queries.rows_by_model(conn, tenant) == {PRIMARY: len(turn_ids)}
    assert embedding_backfill.backfill(database.engine, chain).moved == 0, "nothing left"
    assert equal_to_a_rebuild(database), "backfilled rows are what a rebuild writes"


def test_a_hanging_primary_costs_its_timeout_once_per_window_then_recovers(
    database: bootstrap.App, provider: FakeEmbeddings
) -> None:
    database, chain = chain_of(database, provider, HANG)
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    turn_ids = record(database, tenant)
    began = time.monotonic()
    took = project(database)
    windows = 1 + int((time.monotonic() - began) / COOL_S)
    assert set(models_of(database, tenant).values()) == {MINILM_MODEL}
    assert 1 <= provider.asked_of("fake-primary") <= windows < len(took), "asked once per breaker window"
    assert sorted(took)[-1] < 2.0, f"batch delays {took}"

    provider.script("fake-primary", OK)
    time.sleep(COOL_S + 0.2)
    later = f"t-{uuid.uuid4().hex[:8]}"
    record(database, later, TEXTS[:3])
    project(database)
    assert set(models_of(database, later).values()) == {PRIMARY}, "the recovered provider is picked up"
    assert chain.switches >= 1 and len(turn_ids) == len(TEXTS)


def test_a_second_provider_writes_under_its_own_name(
    own_server: OwnServer, provider: FakeEmbeddings, database: bootstrap.App
) -> None:
    two = own_server.database(
        "embtwo",
        embedding_models=f"{PRIMARY},{SECOND}",
        embedding_options=provider.options(),
        embedding_timeout_s=TIMEOUT_S,
        embedding_retries=1,
        embedding_cooldown_s=COOL_S,
    )
    two, chain = chain_of(two, provider, status(503))
    provider.script("fake-second", OK)
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    turn_ids = record(two, tenant, TEXTS[:3])
    project(two)
    assert models_of(two, tenant) == dict.fromkeys(turn_ids, SECOND)
    e = embeddings.c
    with two.engine.connect() as conn:
        stored = conn.execute(sa.select(e.embedding).where(e.tenant_id == tenant, e.item_id == turn_ids[0])).scalar()
    expected = vector("fake-second", said(tenant, TEXTS[0]))
    assert stored is not None and max(abs(a - b) for a, b in zip(stored, expected, strict=True)) < 1e-6

    provider.script("fake-second", status(500))  # every provider down, no offline model: nothing is written
    later = f"t-{uuid.uuid4().hex[:8]}"
    record(two, later, TEXTS[3:5])
    time.sleep(COOL_S + 0.2)
    with pytest.raises(ProjectionFailed):
        project(two)
    assert models_of(two, later) == {}
    with two.engine.connect() as conn:
        cp = checkpoints.get(conn, "embeddings")
    assert cp is not None and cp.state == "failed" and "fake-second" in (cp.error or "")
    assert chain.provider_failures >= 1


def test_a_fallback_model_is_no_mismatch_but_a_model_outside_the_chain_is(
    database: bootstrap.App, provider: FakeEmbeddings
) -> None:
    database, chain = chain_of(database, provider, status(500))
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    record(database, tenant, TEXTS[:2])
    project(database)
    with database.engine.begin() as conn:
        embedding_queries.check_model(conn, tenant, PRIMARY, 384, chain.models)  # a fallback's rows: no error
        with pytest.raises(EmbeddingMismatch, match="rebuild"):
            embedding_queries.check_model(conn, tenant, "openai/another", 384, chain.models)
    assert isinstance(registry.by_name("embeddings"), EmbeddingsProjector)


def test_serve_backfills_by_itself_once_the_primary_recovers(
    own_server: OwnServer, provider: FakeEmbeddings, database: bootstrap.App
) -> None:
    served = own_server.database(
        "embserve",
        embedding_models=f"{PRIMARY},minilm",
        embedding_options=provider.options(),
        embedding_timeout_s=TIMEOUT_S,
        embedding_retries=1,
        embedding_cooldown_s=1.0,
        embedding_backfill_interval_s=0.3,
    )
    served, chain = chain_of(served, provider, status(500))
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    turn_ids = record(served, tenant, TEXTS[:4])
    background = bootstrap.start_background(served)
    try:
        assert "memledger-embedding-backfill" in {t.name for t in background.threads}
        deadline = time.monotonic() + 20
        while len(models_of(served, tenant)) < len(turn_ids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert models_of(served, tenant) == dict.fromkeys(turn_ids, MINILM_MODEL), "nothing lost meanwhile"
        provider.script("fake-primary", OK)
        recovered = time.monotonic()
        while set(models_of(served, tenant).values()) != {PRIMARY} and time.monotonic() < recovered + 20:
            time.sleep(0.1)
        took = time.monotonic() - recovered
    finally:
        background.stop()
    assert models_of(served, tenant) == dict.fromkeys(turn_ids, PRIMARY)
    assert took < 1.0 + 0.3 + 5.0, f"moved {took:.1f} s after the recovery (window 1 s, interval 0.3 s)"
    assert chain.switches >= 1
