"""What an operator sees of the embedding chain in ``GET /health?detail=1`` (``health.check``,
the report the route returns): the chain's models, its counters (switches, answers by model,
calls every provider failed) and the rows a fallback wrote that wait for the backfill, with
the first provider failing over real HTTP and then recovering.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

from memledger import bootstrap
from memledger.adapters.embedding import MINILM_MODEL
from memledger.projectors.embeddings import backfill as embedding_backfill
from memledger.projectors.embeddings import queries as embedding_queries
from memledger.service import health
from tests.faults.fake_embedding_provider import OK, FakeEmbeddings
from tests.faults.fake_provider import status
from tests.faults.test_embedding_fallback import COOL_S, PRIMARY, TEXTS, chain_of, project, record
from tests.faults.test_embedding_fallback import database as database  # noqa: PLC0414 - the fixture (re-exported): a database of this module's own
from tests.faults.test_embedding_fallback import provider as provider  # noqa: PLC0414 - the fixture (re-exported)


def detail(database: bootstrap.App) -> dict[str, object]:
    return health.check(database.engine, bootstrap.build_worker(database), datetime.now(UTC), database.embedder)


def not_first(database: bootstrap.App) -> dict[str, int]:
    """Rows under a model other than the first, counted by the read model's own query."""
    with database.engine.connect() as conn:
        return {m: n for m, n in embedding_queries.rows_by_model(conn).items() if m != PRIMARY}


def test_health_details_show_the_chains_switches_and_the_rows_waiting_until_the_backfill_moves_them(
    database: bootstrap.App, provider: FakeEmbeddings
) -> None:
    database, chain = chain_of(database, provider, status(500))
    before = detail(database)["embeddings"]
    assert before == {
        "models": [PRIMARY, MINILM_MODEL],
        "waiting": not_first(database),
        "outside": {},
        "switches": 0,
        "answered": {},
        "provider_failures": 0,
    }

    record(database, f"health-{uuid.uuid4().hex[:8]}")
    project(database)
    report = detail(database)
    shown = report["embeddings"]
    assert isinstance(shown, dict)
    assert chain.switches > 0, "the primary failed: the offline model answered"
    assert shown["switches"] == chain.switches == chain.provider_failures == shown["provider_failures"]
    assert shown["answered"] == {MINILM_MODEL: chain.switches}
    assert shown["waiting"] == not_first(database) and shown["waiting"][MINILM_MODEL] >= len(TEXTS)
    assert report["ok"] is True, "rows waiting for the backfill are no outage"

    provider.script("fake-primary", OK)
    time.sleep(COOL_S + 0.2)  # the breaker's window passes
    while embedding_backfill.backfill(database.engine, chain).moved:
        pass
    after = detail(database)["embeddings"]
    assert isinstance(after, dict)
    assert after["waiting"] == {} == not_first(database), "the backfill moved every row"
    assert after["switches"] == chain.switches == shown["switches"], "the backfill asks the first model alone"
