"""Benchmark embeddings: the offline model, the projector, and the vector channel.

    .venv/bin/python scripts/bench_embeddings.py [--texts N] [--queries N] [--threads 1 2]

1. Model: load time; throughput in texts/s in batches of 64, shortest first as the
   projector does, for each ``--threads`` value, on two corpora: short sentences
   (about 12 tokens) and ``--texts`` distinct workload texts (turns, facts, entities
   of ``tests.support.workload``: chat turns, about 60 tokens on average); single-query
   latency (one short request per call, p50/p99). The load average is printed too:
   the figures are CPU-bound and only mean something on a quiet machine.
2. Projector (on a fresh database on the embedded server, or DATABASE_URL's, dropped
   at the end): a cold catch-up (every text embedded), then a rebuild with the cache
   warm (no text embedded), in events/s.
3. Vector channel: ``bootstrap.vector_search`` (embed the request + ``nearest`` with
   the tenant filter), p50/p99 over ``--queries`` requests.

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.workload: the workload generator

from tests.support import workload  # noqa: E402

from memledger import bootstrap  # noqa: E402
from memledger.adapters.embedding import MiniLmEmbedder  # noqa: E402
from memledger.config import Settings  # noqa: E402
from memledger.events.envelope import START, Metadata, Recorded  # noqa: E402
from memledger.projectors import rebuild, runner  # noqa: E402
from memledger.projectors.embeddings.projector import EMBED_BATCH, EmbeddingsProjector, texts_of  # noqa: E402
from memledger.store import db, event_reads, migrate  # noqa: E402

QUERIES = [
    "what database do we use",
    "which editor does she like",
    "when is the launch",
    "who works on the billing service",
    "what did we decide about the frontend",
    "does the team prefer tabs or spaces",
]


def quantile_ms(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def corpus(turns: int) -> tuple[list[workload.Append], list[str]]:
    appends = workload.generate(seed=11, tenants=20, turns=turns, start=datetime(2025, 1, 6, tzinfo=UTC))
    recs = []
    for append in appends:
        for new in append.events:
            recs.append(_fake_recorded(append.tenant_id, new))
    texts = sorted({item.text for item in texts_of(recs).values()}, key=lambda t: (len(t), t))
    return appends, texts


def _fake_recorded(tenant: str, new: Any) -> Recorded:
    now = datetime.now(UTC)
    return Recorded(
        tenant_id=tenant,
        position=0,
        tx_id=0,
        stream_id="s",
        stream_version=0,
        event_id=new.event_id,
        occurred_at=now,
        recorded_at=now,
        metadata=Metadata(),
        event=new.event,
    )


def sentences(count: int) -> list[str]:
    subjects = ["Ada", "the team", "our client", "Sven", "the backend"]
    verbs = ["prefers", "moved to", "decided on", "keeps using", "asked about"]
    things = ["PostgreSQL", "Neovim", "a weekly release", "tabs over spaces", "the Lisbon office"]
    return [f"{subjects[i % 5]} {verbs[i // 5 % 5]} {things[i // 25 % 5]} ({i})" for i in range(count)]


def throughput(embedder: MiniLmEmbedder, texts: list[str]) -> float:
    texts = sorted(texts, key=len)
    started = time.perf_counter()
    for start in range(0, len(texts), EMBED_BATCH):
        embedder.embed(texts[start : start + EMBED_BATCH])
    return round(len(texts) / (time.perf_counter() - started), 1)


def bench_model(texts: list[str], threads: Sequence[int], queries: int) -> dict[str, Any]:
    out: dict[str, Any] = {"workload_texts": len(texts), "load_average_1m": os.getloadavg()[0]}
    short = sentences(640)
    for n in threads:
        embedder = MiniLmEmbedder(threads=n)
        started = time.perf_counter()
        embedder.load()
        out[f"load_s_threads{n}"] = round(time.perf_counter() - started, 2)
        embedder.embed(short[:EMBED_BATCH])  # warm
        out[f"sentences_per_s_batch64_threads{n}"] = throughput(embedder, short)
        out[f"workload_texts_per_s_batch64_threads{n}"] = throughput(embedder, texts)
        samples = []
        for i in range(queries):
            started = time.perf_counter()
            embedder.embed([f"{QUERIES[i % len(QUERIES)]} ({i})"])
            samples.append(time.perf_counter() - started)
        out[f"query_embed_p50_ms_threads{n}"] = round(quantile_ms(samples, 0.5), 1)
        out[f"query_embed_p99_ms_threads{n}"] = round(quantile_ms(samples, 0.99), 1)
    return out


def bench_database(appends: list[workload.Append], queries: int) -> dict[str, Any]:
    settings = Settings()
    server, _ = bootstrap.server_url(settings)
    name = f"memledger_bench_emb_{uuid.uuid4().hex[:8]}"
    url = db.ensure_database(server.set(database="postgres"), name)
    engine = db.create_engine(url)
    out: dict[str, Any] = {}
    try:
        migrate.upgrade(engine)
        workload.append_all(engine, appends, batch_per_tx=200)
        projector = EmbeddingsProjector(bootstrap.build_embedder(settings))
        runner.install(engine, projector)
        with engine.connect() as conn:
            handled = event_reads.count_after(conn, START, types=projector.handles)
        started = time.perf_counter()
        runner.catch_up(engine, projector)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        rebuild.rebuild(engine, projector)
        warm = time.perf_counter() - started
        with engine.connect() as conn:
            # text(): a count for the report only.
            rows = conn.execute(sa.text("SELECT count(*) FROM proj_embeddings.embeddings")).scalar_one()
            # text(): as above.
            tenants = conn.execute(sa.text("SELECT DISTINCT tenant_id FROM proj_embeddings.embeddings")).scalars().all()
        out.update(
            events=handled,
            rows=rows,
            cold_catch_up_s=round(cold, 1),
            cold_events_per_s=round(handled / cold, 1),
            warm_rebuild_s=round(warm, 1),
            warm_rebuild_events_per_s=round(handled / warm, 1),
        )
        search = bootstrap.vector_search(bootstrap.assemble(settings, engine, url, False, engine))
        samples = []
        for i in range(queries):
            with engine.connect() as conn:
                started = time.perf_counter()
                search(conn, tenants[i % len(tenants)], f"{QUERIES[i % len(QUERIES)]} #{i}")
                samples.append(time.perf_counter() - started)
        out["vector_search_p50_ms"] = round(quantile_ms(samples, 0.5), 1)
        out["vector_search_p99_ms"] = round(quantile_ms(samples, 0.99), 1)
    finally:
        engine.dispose()
        admin = sa.create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            # text(): DROP DATABASE of the bench's own database.
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=20, help="turns per tenant of the workload (20 tenants)")
    parser.add_argument("--texts", type=int, default=640, help="workload texts for the model's throughput")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-database", action="store_true")
    args = parser.parse_args()
    appends, texts = corpus(args.turns)
    step = max(1, len(texts) // args.texts)
    sample = texts[::step][: args.texts]
    result = {"cpu_count": os.cpu_count(), **bench_model(sample, args.threads, args.queries)}
    print(json.dumps(result), flush=True)
    if not args.no_database:
        result.update(bench_database(appends, args.queries))
    result["load_average_1m_end"] = os.getloadavg()[0]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
