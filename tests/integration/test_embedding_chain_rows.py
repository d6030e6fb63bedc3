"""The embeddings projection with a chain of models, on a real PostgreSQL, with an
in-process chain whose first model can be switched off (the fault tests drive a
provider over HTTP; here the question is the rows): fallback rows under the
fallback's model, a mixed tenant, the backfill and erasure, a rebuild, and a live v2
copy made v3 in place.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.adapters.embedding import offline
from memledger.errors import EmbeddingFailed
from memledger.events.catalogue import Scopes, TurnRecorded
from memledger.projectors import checkpoints, live_version, rebuild, runner
from memledger.projectors.embeddings import backfill as embedding_backfill
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.projectors.embeddings.projector import (
    VERSION,
    EmbeddingsProjector,
    embeddings,
    text_sha256,
    upgrade_in_place,
)
from memledger.service import erasure
from memledger.store import embedding_cache
from tests.faults.fake_embedding_provider import vector
from tests.integration.test_embeddings import Writer, rows
from tests.integration.test_erasure import _say
from tests.integration.test_projections_support import fresh_database

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

FIRST = "fake/first"
FALLBACK = offline().model


class Switchable:
    """A chain of ``FIRST`` (fake vectors; down while ``down``) and the offline model."""

    dim = 384

    def __init__(self) -> None:
        self.down = False
        self.asked_first: list[str] = []

    @property
    def model(self) -> str:
        return FIRST

    @property
    def models(self) -> tuple[str, ...]:
        return (FIRST, FALLBACK)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.asked_first.extend(texts)
        if self.down:
            raise EmbeddingFailed(f"{FIRST} is down")
        return [vector(FIRST, text) for text in texts]

    def embed_any(self, texts: Sequence[str]) -> tuple[str, list[list[float]]]:
        try:
            return FIRST, self.embed(texts)
        except EmbeddingFailed:
            return FALLBACK, offline().embed(texts)


@pytest.fixture(scope="module")
def engine(database: TestDatabase) -> Iterator[Engine]:
    with fresh_database(database, "embchain") as engine:
        yield engine


def tenant() -> str:
    return f"chain-{uuid.uuid4().hex[:10]}"


def turn(turn_id: str, text: str) -> TurnRecorded:
    return TurnRecorded(turn_id=turn_id, role="user", text=text, scopes=Scopes(user="ada"))


def models_of(engine: Engine, tenant_id: str) -> dict[str, str]:
    return {item_id: str(row["model"]) for (_, item_id), row in rows(engine, tenant_id).items()}


def equal_to_a_rebuild(engine: Engine, projector: EmbeddingsProjector) -> bool:
    diffs = rebuild.verify(engine, projector)
    return bool(diffs) and all(d.equal for d in diffs)


def test_a_tenant_holds_rows_of_two_models_each_item_one_and_a_query_reads_one_model(engine: Engine) -> None:
    chain = Switchable()
    projector = EmbeddingsProjector(chain)
    runner.install(engine, projector)
    who = tenant()
    writer = Writer(engine, who)
    writer.append(turn("up-1", f"the billing service moved to Rust ({who})"))
    runner.catch_up(engine, projector)
    chain.down = True
    writer.append(turn("down-1", f"the nightly backup runs at two ({who})"))
    runner.catch_up(engine, projector)

    assert models_of(engine, who) == {"up-1": FIRST, "down-1": FALLBACK}
    assert equal_to_a_rebuild(engine, projector), "rows are the cache's first model of the chain, as live"
    query = vector(FIRST, f"the nightly backup runs at two ({who})")
    with engine.begin() as conn:
        found = embedding_queries.nearest(conn, who, query, FIRST, ["turn"], 5)
        counts = embedding_queries.rows_by_model(conn, who)
    assert [n.item_id for n in found] == ["up-1"], "the first model's rows only: never the fallback's"
    assert counts == {FIRST: 1, FALLBACK: 1}

    chain.down = False
    done = embedding_backfill.backfill(engine, chain)
    assert (done.moved, done.failed) == (1, False)
    assert models_of(engine, who) == {"up-1": FIRST, "down-1": FIRST}
    with engine.begin() as conn:
        found = embedding_queries.nearest(conn, who, query, FIRST, ["turn"], 5)
    assert [n.item_id for n in found][:1] == ["down-1"]
    assert equal_to_a_rebuild(engine, projector)


def test_the_backfill_never_brings_back_an_erased_text(engine: Engine) -> None:
    chain = Switchable()
    chain.down = True
    projector = EmbeddingsProjector(chain)
    runner.install(engine, projector)
    who = tenant()
    secret = f"my Zorblaxify token rotation happens on Mondays ({who})"
    _say(engine, who, "ada", [secret])
    _say(engine, who, "grace", [f"I prefer Vim over Emacs ({who})"])
    runner.catch_up(engine, projector)
    assert set(models_of(engine, who).values()) == {FALLBACK}

    erasure.erase(engine, who, "ada", reason="test", refresh=False, vacuum_after=False)
    chain.down, chain.asked_first = False, []
    done = embedding_backfill.backfill(engine, chain)
    assert secret not in chain.asked_first, "an erased text is never sent to the model again"
    with engine.connect() as conn:
        assert embedding_cache.lookup(conn, FIRST, [text_sha256(secret)]) == {}
    assert done.moved == 1, "the other speaker's row moves"
    runner.catch_up(engine, projector)  # the refold at the erasure's record
    assert sorted(models_of(engine, who).values()) == [FIRST]


def test_a_live_v2_copy_is_made_v3_in_place_and_equals_a_rebuild(database: TestDatabase) -> None:
    class V2(EmbeddingsProjector):
        version = 2

    with fresh_database(database, "embv2") as engine:
        chain = Switchable()
        runner.install(engine, V2(chain))
        who = tenant()
        Writer(engine, who).append(turn("t1", f"a v2 row ({who})"), turn("t2", f"another v2 row ({who})"))
        runner.catch_up(engine, V2(chain))
        assert upgrade_in_place(engine)
        assert not upgrade_in_place(engine), "once"
        with engine.connect() as conn:
            cp = checkpoints.get(conn, "embeddings")
            indexes = conn.execute(
                sa.select(sa.column("indexname"))
                .select_from(sa.table("pg_indexes", sa.column("indexname"), sa.column("schemaname")))
                .where(sa.column("schemaname") == embeddings.schema)
            ).scalars()
            assert "embeddings_model" in set(indexes)
        assert cp is not None and cp.version == VERSION == 3
        live_version.forget()
        assert equal_to_a_rebuild(engine, EmbeddingsProjector(chain))
