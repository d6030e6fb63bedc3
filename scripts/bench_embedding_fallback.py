"""The embedding chain with its first provider failing: projection delays, nothing lost, recovery.

    .venv/bin/python scripts/bench_embedding_fallback.py [--turns N] [--batch B] [--timeout S] [--cooldown S]

A fresh database on an embedded server of this process alone (or DATABASE_URL's server),
the chain "openai/fake-primary,minilm" built by ``bootstrap`` from settings, its provider a
fake OpenAI-compatible endpoint on loopback over real HTTP (tests/faults/fake_embedding_provider.py).
``--turns`` turns (400) are recorded ``--batch`` (10) at a time, each group then projected
(one embeddings batch), and the batch's time taken, in four phases of equal size:

1. healthy: the provider answers;
2. failing: every request is an HTTP 500;
3. hanging: no request is answered (each costs ``--timeout``);
4. recovered: the provider answers again.

Phases 3 and 4 begin once the breaker's window (``--cooldown``) has passed.

Per phase: p50, p99 and the largest batch time, requests the provider got (the breaker
skips it within its window), rows under each model and rows missing (items with no row:
nothing may be lost). Then one backfill round (rows moved, seconds), and ``rebuild.verify``
(a rebuild equals the live rows). The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.faults.fake_embedding_provider: the fake provider

from tests.faults.fake_embedding_provider import OK, FakeEmbeddings, fake_embeddings  # noqa: E402
from tests.faults.fake_provider import HANG, Reply, status  # noqa: E402

from memledger import bootstrap  # noqa: E402
from memledger.adapters.embedding import MiniLmEmbedder  # noqa: E402
from memledger.adapters.embedding_chain import EmbeddingChain  # noqa: E402
from memledger.config import Settings  # noqa: E402
from memledger.projectors import rebuild, registry, runner  # noqa: E402
from memledger.projectors.embeddings import backfill as embedding_backfill  # noqa: E402
from memledger.projectors.embeddings import queries as embedding_queries  # noqa: E402
from memledger.service import projections  # noqa: E402
from memledger.service.record import TurnInput, record_turns  # noqa: E402
from memledger.service.types import Scopes  # noqa: E402
from memledger.store import db, embedded_server  # noqa: E402

PRIMARY = "openai/fake-primary"
TENANT = "bench-embedding-fallback"
WORDS = ("alpha", "billing", "cluster", "deploy", "eval", "failover", "gateway", "harbor", "index", "journal")


@contextmanager
def database_url() -> Iterator[str]:
    """A fresh database: on DATABASE_URL's server, else on an embedded server of its own."""
    stop = None
    if os.environ.get("DATABASE_URL"):
        server = db.to_psycopg_url(os.environ["DATABASE_URL"])
    else:
        server, stop = embedded_server.start_temporary(
            Path(tempfile.mkdtemp(prefix="memledger-bench-embfb-")) / "pgdata"
        )
    url = db.ensure_database(server.set(database="postgres"), f"memledger_bench_embfb_{uuid.uuid4().hex[:10]}")
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        if stop is not None:
            stop()


def text_of(i: int) -> str:
    return f"turn {i}: the {WORDS[i % len(WORDS)]} service and the {WORDS[(i * 7) % len(WORDS)]} team ({i})"


def phase(
    database: bootstrap.App, provider: FakeEmbeddings, reply: Reply, first: int, turns: int, batch: int
) -> dict[str, Any]:
    provider.script("fake-primary", reply)
    asked_before = provider.asked_of("fake-primary")
    projector = registry.by_name("embeddings")
    took = []
    for start in range(first, first + turns, batch):
        said = [
            TurnInput(role="user", text=text_of(i), turn_id=f"t{i}", scopes=Scopes(session="s", user="ann"))
            for i in range(start, min(start + batch, first + turns))
        ]
        record_turns(database.for_tenant(TENANT), TENANT, said)
        began = time.monotonic()
        runner.catch_up(database.engine, projector, batch_size=batch)
        took.append(time.monotonic() - began)
    ordered = sorted(took)
    return {
        "batches": len(took),
        "p50_s": round(statistics.median(ordered), 3),
        "p99_s": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3),
        "max_s": round(ordered[-1], 3),
        "provider_requests": provider.asked_of("fake-primary") - asked_before,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--cooldown", type=float, default=5.0)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    per_phase = args.turns // 4
    figures: dict[str, Any] = {"turns": args.turns, "batch": args.batch, "timeout_s": args.timeout}
    figures["cooldown_s"], figures["load"] = args.cooldown, os.getloadavg()
    with database_url() as url, fake_embeddings() as provider:
        settings = Settings(
            DATABASE_URL=url,
            embedding_models=f"{PRIMARY},minilm",
            embedding_options=provider.options(),
            embedding_timeout_s=args.timeout,
            embedding_retries=1,
            embedding_cooldown_s=args.cooldown,
        )
        database = bootstrap.connect(settings)
        chain = bootstrap.build_embedder(settings)
        assert isinstance(chain, EmbeddingChain) and isinstance(chain.offline, MiniLmEmbedder)
        chain.embed(["warm up"])  # litellm's import and the offline model's load are not the outage's
        chain.offline.load()
        projections.catch_up_all(database.engine)
        scripts = {"healthy": OK, "failing": status(500), "hanging": HANG, "recovered": OK}
        for i, (name, reply) in enumerate(scripts.items()):
            if name in ("hanging", "recovered"):
                time.sleep(args.cooldown)  # the breaker's window ends: the provider is asked again
            figures[name] = phase(database, provider, reply, i * per_phase, per_phase, args.batch)
            print(name, figures[name], flush=True)
        with database.engine.connect() as conn:
            figures["rows_by_model"] = embedding_queries.rows_by_model(conn, TENANT)
        figures["missing_rows"] = 4 * per_phase - sum(figures["rows_by_model"].values())
        figures["switches"] = getattr(chain, "switches", None)
        began = time.monotonic()
        done = embedding_backfill.backfill(database.engine, chain, limit=args.turns)
        figures["backfill"] = {"moved": done.moved, "failed": done.failed, "s": round(time.monotonic() - began, 2)}
        with database.engine.connect() as conn:
            figures["rows_after_backfill"] = embedding_queries.rows_by_model(conn, TENANT)
        diffs = rebuild.verify(database.engine, registry.by_name("embeddings"))
        figures["rebuild_equals_live"] = bool(diffs) and all(d.equal for d in diffs)
        database.close()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
