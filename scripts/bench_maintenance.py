"""Benchmark graph maintenance on a large tenant, and check a rebuild after it.

    .venv/bin/python scripts/bench_maintenance.py [--entities N] [--edges M] [--seed S]

1. Data: a fresh database on an embedded server of this process alone (or on
   DATABASE_URL's server), one tenant of ``--entities`` entities (100,000) and
   ``--edges`` relationships (500,000), appended as events (``EntityObserved``,
   ``RelationshipObserved``) in streams of 5,000 events, 10 streams per transaction,
   then projected by a rebuild of the entities and relationships read models (the
   set-wise path). The embeddings read model is left empty (embedding 100,000 names
   offline would take longer than the run), so the embedding rule reports it skipped.
   About 4% of the entities are near-duplicates of others (case, diacritics,
   punctuation, legal forms, an initial), and many people share a first name only:
   those must stay apart.
2. Maintenance (the target: under 60 s): ``maintenance.run`` over the tenant (read
   every entity, apply the rules, append one ``EntitiesMerged`` per group in one
   transaction), then the entities read model caught up with the merges; timed in
   parts and in all. ``maintenance.status`` (which also counts hidden entities) is
   timed too, and a 2-hop walk from a merged entity.
3. Check: ``rebuild.verify`` for both read models (a fresh copy built from the
   ledger, compared table by table with the live one); every table must be equal.
   Also checked: no merge joins two people who share only a first name.

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine

from memledger import bootstrap
from memledger.config import Settings
from memledger.events.catalogue import EntityObserved, Event, RelationshipObserved
from memledger.events.envelope import NewEvent
from memledger.events.keys import entity_id
from memledger.projectors import rebuild, registry, runner
from memledger.projectors.relationships import graph_queries
from memledger.service import maintenance, projections
from memledger.service.maintenance_rules import name_key
from memledger.store import db, embedded_server, event_store, migrate

TARGET_S = 60.0
STREAM_EVENTS = 5000
STREAMS_PER_TX = 10
TENANT = "bench-maintenance"
START_AT = datetime(2026, 1, 1, tzinfo=UTC)
RELATIONS = ("USES", "WORKS_ON", "DEPENDS_ON", "PART_OF", "KNOWS", "WORKS_WITH")
TYPES = ("person", "project", "tool", "concept", "organization")
SYLLABLES = ("ka", "lo", "mi", "ra", "te", "su", "vo", "ne", "da", "ri", "po", "ze", "ta", "ni", "go", "lu")
SYLLABLES += ("be", "si", "fa", "mo", "ke", "ru", "ha", "ji")
FIRST = ("Ada", "Grace", "Alan", "Linus", "Ken", "Barbara", "Edsger", "John", "Jane", "Maria", "Omar", "Priya")
FIRST += ("Wei", "Yuki", "Olga", "Tariq")


def log(message: str) -> None:
    print(f"  ({message})", file=sys.stderr, flush=True)


def _word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


def _variant(rng: random.Random, kind: str, name: str) -> tuple[str, tuple[str, ...]]:
    """A near-duplicate spelling of ``name`` (the rules must find it), and its aliases."""
    choice = rng.randrange(4)
    if kind == "organization" and choice == 0:
        return f"{name} {rng.choice(['Inc.', 'GmbH', 'Ltd'])}", ()
    if kind == "person" and choice == 1:
        first, _, rest = name.partition(" ")
        return f"{first[0]}. {rest}", ()
    if choice == 2:
        return name.replace("a", "á", 1) if "a" in name else f"{name}!", ()
    return f"{name.upper()}.", ()


def entity_names(rng: random.Random, count: int) -> list[tuple[str, str, tuple[str, ...]]]:
    """(type, name, aliases): unique names, then near-duplicates of some of them."""
    out: list[tuple[str, str, tuple[str, ...]]] = []
    keys: set[tuple[str, str]] = set()
    base = int(count * 0.96)
    while len(out) < base:
        kind = rng.choice(TYPES)
        name = f"{rng.choice(FIRST)} {_word(rng, 3)}" if kind == "person" else f"{_word(rng, 2)} {_word(rng, 2)}"
        if (kind, name_key(name, kind)) in keys:
            continue
        keys.add((kind, name_key(name, kind)))
        out.append((kind, name, ()))
    seen_ids = {entity_id(k, n) for k, n, _ in out}
    while len(out) < count:
        kind, name, _ = out[rng.randrange(base)]
        variant, aliases = _variant(rng, kind, name)
        if entity_id(kind, variant) not in seen_ids:
            seen_ids.add(entity_id(kind, variant))
            out.append((kind, variant, aliases))
    return out


def events(rng: random.Random, entities: int, edges: int) -> Iterator[Event]:
    names = entity_names(rng, entities)
    for kind, name, aliases in names:
        yield EntityObserved(name=name, entity_type=kind, confidence=0.8, aliases=aliases)  # type: ignore[arg-type]
    said: set[tuple[int, str, int]] = set()
    while len(said) < edges:
        a, b, relation = rng.randrange(entities), rng.randrange(entities), rng.choice(RELATIONS)
        if a == b or (a, relation, b) in said:
            continue
        said.add((a, relation, b))
        (sk, sn, _), (tk, tn, _) = names[a], names[b]
        yield RelationshipObserved(
            relationship_id=f"r{len(said)}",
            source_name=sn,
            source_type=sk,  # type: ignore[arg-type]
            relation=relation,
            target_name=tn,
            target_type=tk,  # type: ignore[arg-type]
            confidence=round(rng.uniform(0.5, 0.95), 2),
        )


def load(engine: Engine, entities: int, edges: int, seed: int) -> int:
    """Append the tenant's events; their number."""
    rng = random.Random(seed)
    streams: list[list[NewEvent]] = [[]]
    for i, event in enumerate(events(rng, entities, edges)):
        if len(streams[-1]) == STREAM_EVENTS:
            streams.append([])
        at = START_AT + timedelta(seconds=30 * i)
        streams[-1].append(NewEvent(event=event, event_id=f"bench-{i}", occurred_at=at))
    for start in range(0, len(streams), STREAMS_PER_TX):
        with engine.begin() as tx:
            for offset, news in enumerate(streams[start : start + STREAMS_PER_TX]):
                event_store.append(tx, TENANT, f"extraction:bench-{start + offset}", news, None)
    return sum(len(s) for s in streams)


@contextmanager
def bench_database() -> Iterator[URL]:
    """A fresh database on a server of this process alone (or DATABASE_URL's), dropped after."""
    stop: Callable[[], None] = lambda: None  # noqa: E731
    if os.environ.get("DATABASE_URL"):
        server, _ = bootstrap.server_url(Settings())
    else:
        server, stop = embedded_server.start_temporary(
            Path(tempfile.mkdtemp(prefix="memledger-bench-maint-")) / "pgdata"
        )
    name = f"memledger_bench_maint_{uuid.uuid4().hex[:10]}"
    url = db.ensure_database(server.set(database="postgres"), name)
    try:
        yield url
    finally:
        db.drop_database(server.set(database="postgres"), name)
        stop()


def _timed(out: dict[str, Any], name: str, call: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = call()
    out[name] = round(time.perf_counter() - started, 2)
    log(f"{name}: {out[name]} s")
    return result


def measure(engine: Engine, out: dict[str, Any]) -> None:
    entities_projector, edges_projector = registry.by_name("entities"), registry.by_name("relationships")
    report = _timed(out, "run_s", lambda: maintenance.run(engine, TENANT, owner=engine))
    _timed(out, "catch_up_s", lambda: runner.catch_up(engine, entities_projector))
    out["maintenance_s"] = round(out["run_s"] + out["catch_up_s"], 2)
    out["entities_read"] = report.entities
    out["merge_groups"] = len(report.merges)
    out["entities_merged"] = report.entities_merged
    out["cosine_rule"] = report.cosine_rule
    out["rules"] = {rule: sum(1 for m in report.merges if m.rule == rule) for rule in {m.rule for m in report.merges}}
    people = [m for m in report.merges if m.entity_type == "person"]
    out["person_merges_on_a_first_name_only"] = sum(
        1 for m in people for merged in m.merged_entity_ids if not _same_person(m.kept_entity_id, merged)
    )
    status = _timed(out, "status_s", lambda: maintenance.status(engine, TENANT))
    out["pending_after"], out["hidden_entities"] = status.pending_merges, status.hidden_entities
    if report.merges:
        merged = report.merges[0].merged_entity_ids[0]
        with engine.connect() as conn:
            walked = _timed(out, "walk_from_merged_s", lambda: graph_queries.walk(conn, TENANT, [merged], depth=2))
        out["walk_edges"] = len(walked)
    diffs = _timed(
        out,
        "verify_s",
        lambda: [d for p in (entities_projector, edges_projector) for d in rebuild.verify(engine, p)],
    )
    out["rebuild_equals_live"] = all(d.equal for d in diffs)
    out["tables_compared"] = {d.table: [d.live_rows, d.rebuilt_rows] for d in diffs}
    out["target_met"] = out["maintenance_s"] < TARGET_S and out["rebuild_equals_live"]


def _same_person(kept: str, merged: str) -> bool:
    """Whether the two ids share more than a first name: the same last words."""

    def last(person_id: str) -> list[str]:
        return name_key(person_id.partition(":")[2], "person").split()[1:]

    return last(kept) == last(merged)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=20261128)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"entities": args.entities, "edges": args.edges, "target_s": TARGET_S}
    with bench_database() as url:
        engine = db.create_engine(url, pool_size=3)
        migrate.upgrade(engine)
        projections.install_all(engine)  # every read model, empty; only two are filled
        out["events"] = _timed(out, "append_s", lambda: load(engine, args.entities, args.edges, args.seed))
        for name in ("entities", "relationships"):
            projector = registry.by_name(name)
            runner.install(engine, projector)
            _timed(out, f"project_{name}_s", lambda p=projector: rebuild.rebuild(engine, p))  # type: ignore[misc]
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("ANALYZE"))  # text(): maintenance, what autovacuum would do after a load
        measure(engine, out)
        engine.dispose()
    print(json.dumps(out, sort_keys=True))
    return 0 if out["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
