"""Evaluate retrieval: memledger's hybrid search against plain BM25 over the turns.

    .venv/bin/python scripts/eval_retrieval.py [--quick] [--data FILE] [--show N]

1. Load. A fresh database on an embedded PostgreSQL of this process alone (or on
   ``DATABASE_URL``'s server; dropped at the end). The conversation set
   (``tests/data/retrieval_set.jsonl``, made by ``scripts/retrieval_set.py``) goes in
   through the library: ``MemoryLedger.record_turns`` session by session, with the
   set's own turn ids and times, then ``MemoryLedger.process()`` (the heuristic
   extractor and every projection, as configured by default).
2. Hybrid. For each question, ``service.search.search`` with kinds fact, entity,
   relationship and turn, the question's scopes, k = 25 and the vector channel of
   the configured embedder (the offline model by default; ``--no-vectors`` leaves it
   out, ``--max-distance`` moves its cutoff). An item counts for every
   turn id it cites (``source_turns``; a turn cites itself). recall@k: the share of
   the question's answer turns cited by the first k items; MRR: 1 / the rank of the
   first item citing an answer turn (0 if none in 25). Also printed, stricter:
   ``turn_recall_at_10``, the recall of the first 10 distinct turn ids when the
   ranked items are expanded into the turns they cite (so an entity citing thirty
   turns spends thirty of the ten).
3. BM25. Okapi BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)))
   in Python over the tenant's turns, every turn a document, no scope filter (as the
   turn channel of search). Tokens are PostgreSQL's: ``to_tsvector('english', ...)``
   of each turn and of the question (the same parser, stop words and Snowball stems
   the turn and fact indexes use), term frequency = the lexeme's positions.

``--data tests/data/retrieval_holdout.jsonl`` measures the held-out set instead: 195
questions on natural conversations, written apart from the tuning of search
(docs/benchmarks-context.md, "A held-out set"); ``tests/data/retrieval_fresh.jsonl``,
166 questions written after a change to search, which later informed one rule ("A fresh
set"); ``tests/data/retrieval_unseen.jsonl``, 166 questions on three new domains, written
blind to the code and the other sets and measured once, after the last change ("An unseen set").

``--quick`` keeps one user of each tenant (their turns, and the questions they ask
whose answers they said): under a minute. The last line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection

from memledger import MemoryLedger, bootstrap
from memledger.config import Settings
from memledger.service import search
from memledger.service.context import VectorSearch
from memledger.service.record import TurnInput
from memledger.service.types import Scopes
from memledger.store import db, embedded_server

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "retrieval_set.jsonl"
KINDS = ("fact", "entity", "relationship", "turn")
DEPTH = 25
QUICK_USERS = {"northwind": {"maya"}, "bluebird": {"dana"}}
K1, B = 1.2, 0.75


@dataclass(frozen=True)
class Question:
    qid: str
    tenant: str
    text: str
    scopes: dict[str, str]
    answers: frozenset[str]
    kind: str


def load(path: Path, quick: bool) -> tuple[list[dict[str, Any]], list[Question]]:
    turns, questions = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["type"] == "turn":
            turns.append(row)
        else:
            questions.append(
                Question(
                    row["id"],
                    row["tenant"],
                    row["question"],
                    row["scopes"],
                    frozenset(row["answer_turns"]),
                    row["kind"],
                )
            )
    if quick:
        turns = [t for t in turns if t["scopes"]["user"] in QUICK_USERS.get(t["tenant"], {t["scopes"]["user"]})]
        kept = {t["turn_id"] for t in turns}
        questions = [
            q
            for q in questions
            if q.scopes["user"] in QUICK_USERS.get(q.tenant, {q.scopes["user"]}) and q.answers <= kept
        ]
    return turns, questions


# -- metrics ------------------------------------------------------------------------------


def recall_at(ranked: Sequence[Sequence[str]], answers: frozenset[str], k: int) -> float:
    """Share of ``answers`` cited by the first ``k`` items (each item: the turns it cites)."""
    cited = {turn for item in ranked[:k] for turn in item}
    return len(answers & cited) / len(answers)


def reciprocal_rank(ranked: Sequence[Sequence[str]], answers: frozenset[str]) -> float:
    for rank, item in enumerate(ranked[:DEPTH], start=1):
        if answers.intersection(item):
            return 1.0 / rank
    return 0.0


def turn_recall_at(ranked: Sequence[Sequence[str]], answers: frozenset[str], k: int) -> float:
    """Recall of the first ``k`` distinct turns when the items are expanded in rank order."""
    seen: dict[str, None] = {}
    for item in ranked:
        for turn in item:
            seen.setdefault(turn, None)
    return len(answers & set(list(seen)[:k])) / len(answers)


def scores(ranked: Sequence[Sequence[str]], answers: frozenset[str]) -> dict[str, float]:
    return {
        "recall_at_5": recall_at(ranked, answers, 5),
        "recall_at_10": recall_at(ranked, answers, 10),
        "recall_at_25": recall_at(ranked, answers, 25),
        "mrr": reciprocal_rank(ranked, answers),
        "turn_recall_at_10": turn_recall_at(ranked, answers, 10),
    }


# -- BM25 ---------------------------------------------------------------------------------


class Bm25:
    """Okapi BM25 over one tenant's turns, on PostgreSQL's english lexemes."""

    def __init__(self, docs: dict[str, Counter[str]]) -> None:
        self.docs = docs
        self.lengths = {d: sum(tf.values()) for d, tf in docs.items()}
        self.avg = sum(self.lengths.values()) / max(1, len(docs))
        df: Counter[str] = Counter()
        for tf in docs.values():
            df.update(tf.keys())
        n = len(docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def rank(self, query: Counter[str], k: int) -> list[str]:
        scored = []
        for doc, tf in self.docs.items():
            score = 0.0
            norm = K1 * (1 - B + B * self.lengths[doc] / self.avg)
            for term in query:
                f = tf.get(term)
                if f:
                    score += self.idf[term] * f * (K1 + 1) / (f + norm)
            if score > 0:
                scored.append((-score, doc))
        return [doc for _, doc in sorted(scored)[:k]]


def lexemes(conn: Connection, texts: Sequence[str]) -> list[Counter[str]]:
    """PostgreSQL's english lexemes of each text, with their frequencies."""
    # text(): a parser call for the baseline only; unnest keeps it one round trip.
    rows = conn.execute(
        sa.text(
            "SELECT ord, (unnest(to_tsvector('english', t))).* FROM unnest(CAST(:texts AS text[]))"
            " WITH ORDINALITY AS x(t, ord)"
        ),
        {"texts": list(texts)},
    ).all()
    out: list[Counter[str]] = [Counter() for _ in texts]
    for ordinal, lexeme, positions, _weights in rows:
        out[ordinal - 1][lexeme] = len(positions or ())
    return out


# -- the run ------------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"  ({message})", file=sys.stderr, flush=True)


@contextmanager
def eval_database() -> Iterator[URL]:
    """A fresh database on a server of this process alone (or DATABASE_URL's); dropped after."""
    if os.environ.get("DATABASE_URL"):
        server, _ = bootstrap.server_url(Settings())
        stop: Callable[[], None] = lambda: None  # noqa: E731
    else:
        server, stop = embedded_server.start_temporary(Path(tempfile.mkdtemp(prefix="memledger-eval-")) / "pgdata")
    name = f"memledger_eval_{uuid.uuid4().hex[:10]}"
    url = db.ensure_database(server.set(database="postgres"), name)
    try:
        yield url
    finally:
        admin = sa.create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            quoted = admin.dialect.identifier_preparer.quote(name)
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))  # text(): DDL, quoted
        admin.dispose()
        stop()


def record(memory: MemoryLedger, turns: Sequence[dict[str, Any]]) -> None:
    """Record the turns session by session, in the order they were said."""
    batch: list[dict[str, Any]] = []
    for turn in [*turns, None]:
        if batch and (turn is None or turn["scopes"]["session"] != batch[0]["scopes"]["session"]):
            memory.record_turns(
                batch[0]["tenant"],
                [
                    TurnInput(
                        role=t["role"],
                        text=t["text"],
                        scopes=Scopes(**t["scopes"]),
                        turn_id=t["turn_id"],
                        occurred_at=datetime.fromisoformat(t["occurred_at"]),
                    )
                    for t in batch
                ],
            )
            batch = []
        if turn is not None:
            batch.append(turn)


def evaluate(
    memory: MemoryLedger,
    turns: list[dict[str, Any]],
    questions: list[Question],
    show: int,
    kinds: Sequence[str] = KINDS,
    vector_search: VectorSearch | None = None,
) -> dict[str, Any]:
    by_tenant: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for turn in turns:
        by_tenant[turn["tenant"]].append(turn)
    with memory.engine.connect() as conn:
        index = {
            tenant: Bm25(dict(zip([t["turn_id"] for t in rows], lexemes(conn, [t["text"] for t in rows]), strict=True)))
            for tenant, rows in by_tenant.items()
        }
        queries = lexemes(conn, [q.text for q in questions])
    hybrid: list[dict[str, float]] = []
    bm25: list[dict[str, float]] = []
    per_kind: dict[str, list[tuple[float, float]]] = defaultdict(list)
    started = time.perf_counter()
    for question, query in zip(questions, queries, strict=True):
        items = search.search(
            memory.engine,
            question.tenant,
            Scopes(**question.scopes),
            question.text,
            k=DEPTH,
            kinds=kinds,
            vector_search=vector_search,
        )
        ranked = [list(item.source_turns) for item in items]
        hybrid.append(scores(ranked, question.answers))
        baseline = [[doc] for doc in index[question.tenant].rank(query, DEPTH)]
        bm25.append(scores(baseline, question.answers))
        per_kind[question.kind].append((hybrid[-1]["recall_at_10"], bm25[-1]["recall_at_10"]))
        if show and hybrid[-1]["recall_at_10"] < bm25[-1]["recall_at_10"] and show > 0:
            show -= 1
            print(f"\n{question.qid} [{question.kind}] {question.text} -> {sorted(question.answers)}")
            for rank, item in enumerate(items[:10], start=1):
                print(f"  {rank:2d}. {item.kind:12s} {item.score:.3f} {item.text[:90]!r} {list(item.source_turns)[:3]}")
            print(f"  bm25: {[doc for [doc] in baseline[:5]]}")
    elapsed = time.perf_counter() - started

    def mean(rows: list[dict[str, float]], key: str) -> float:
        return round(sum(r[key] for r in rows) / len(rows), 4)

    out: dict[str, Any] = {key: mean(hybrid, key) for key in hybrid[0]}
    out.update({f"bm25_{key}": mean(bm25, key) for key in bm25[0]})
    out["by_kind"] = {
        kind: {
            "questions": len(rows),
            "recall_at_10": round(sum(h for h, _ in rows) / len(rows), 3),
            "bm25_recall_at_10": round(sum(b for _, b in rows) / len(rows), 3),
        }
        for kind, rows in sorted(per_kind.items())
    }
    out["search_ms_mean"] = round(1000 * elapsed / len(questions), 1)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one user of each tenant")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--show", type=int, default=0, help="print N questions where BM25 beat the hybrid")
    parser.add_argument("--kinds", default=",".join(KINDS), help="the item kinds searched (default: all four)")
    parser.add_argument("--no-vectors", action="store_true", help="search without its vector channel")
    parser.add_argument("--max-distance", type=float, default=search.MAX_VECTOR_DISTANCE, help="vector channel cutoff")
    args = parser.parse_args(argv)
    search.MAX_VECTOR_DISTANCE = args.max_distance
    turns, questions = load(args.data, args.quick)
    with eval_database() as url:
        memory = MemoryLedger.open(Settings(DATABASE_URL=url.render_as_string(hide_password=False)))
        try:
            started = time.perf_counter()
            for tenant in dict.fromkeys(t["tenant"] for t in turns):
                record(memory, [t for t in turns if t["tenant"] == tenant])
            extracted = memory.process()
            log(f"recorded {len(turns)} turns, extracted {extracted}, projected: {time.perf_counter() - started:.1f} s")
            vectors = None if args.no_vectors else bootstrap.vector_search(memory.database)
            out = evaluate(memory, turns, questions, args.show, args.kinds.split(","), vectors)
        finally:
            memory.close()
    out = {
        "questions": len(questions),
        "turns": len(turns),
        "quick": args.quick,
        "kinds": args.kinds,
        "vectors": not args.no_vectors,
        "max_distance": args.max_distance,
        **out,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    print(
        f"\nhybrid search: recall@5 {out['recall_at_5']:.3f}  recall@10 {out['recall_at_10']:.3f}  "
        f"recall@25 {out['recall_at_25']:.3f}  MRR {out['mrr']:.3f}  turn-recall@10 {out['turn_recall_at_10']:.3f}"
    )
    print(
        f"BM25 on turns: recall@5 {out['bm25_recall_at_5']:.3f}  recall@10 {out['bm25_recall_at_10']:.3f}  "
        f"recall@25 {out['bm25_recall_at_25']:.3f}  MRR {out['bm25_mrr']:.3f}"
    )
    for kind, row in out["by_kind"].items():
        print(f"  {kind:>10}: {row}")
    verdict = "better" if out["recall_at_10"] > out["bm25_recall_at_10"] else "NOT better"
    print(f"target: hybrid recall@10 better than BM25's: {verdict}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
