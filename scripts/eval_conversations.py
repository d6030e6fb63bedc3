"""Evaluate memledger on long everyday conversations (made by ``scripts/conversation_set.py``).

    python scripts/eval_conversations.py [--set tests/data/conversations_test.jsonl]
                                         [--limit-conversations N] [--json-only]

It uses the library as a new user would: ``MemoryLedger.open()`` (an embedded PostgreSQL
unless ``DATABASE_URL`` is set), one fresh tenant per conversation and run
(``eval-<conversation id>-<random hex>``), every turn recorded with ``record_turns`` (role
"user"; scopes session = the session id, project = the conversation id, user = the
speaker; the set's turn ids; the session's date, a few seconds apart per turn), then
``process()``.

For each question:

- search: ``search(tenant, question, scopes=Scopes(project=...), k=25)``; the ranked items
  are expanded into the turns they cite (``source_turns``, in rank order; a turn item cites
  itself), distinct, in order. recall-any@N: an evidence turn is among the first N turns;
  recall-all@10: every evidence turn is among the first 10; MRR: 1 / the rank of the first
  evidence turn among the first 25 (0 if none). Answerable questions only.
- BM25: Okapi BM25 (k1 = 1.2, b = 0.75) in Python over the conversation's turns, lowercase
  word tokens less a small English stop-word list, no stemming; the same measures.
- the block: ``context(tenant, question, scopes=Scopes(project=...), budget_chars=5000)``.
  The block holds ``item_ids`` only, so the items' cited turns come from ``select`` with
  the same arguments (the items whose ids the block shows), and from the turn ids found in
  the block's text. ``block_evidence_rate``: the share of answerable questions whose block
  cites an evidence turn; ``unanswerable_quiet_rate``: the share of unanswerable questions
  whose block is empty or cites no turn; ``unanswerable_no_fact_rate``: the share whose block
  shows no fact (quoted turns only, or nothing): a fact could be read as an answer, a quoted
  turn is what was said.
- ``fact_precision``: after ``process()``, every active fact of the tenant (the facts read
  model, read-only SQL through ``memory.engine``) counts as kept when every turn it cites is
  labelled informative; kept / all.

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import secrets
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from memledger import MemoryLedger, Scopes, TurnInput

DEFAULT_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "conversations_test.jsonl"
DEPTH = 25
BUDGET_CHARS = 5000
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain", "unanswerable")
SECONDS_PER_TURN = 5
_STOP_WORDS_TEXT = (
    "a about after again all am an and any are as at be been before but by can could did do does doing for from "
    "had has have having he her hers him his how i if in into is it its just me my no not of on or our out over "
    "own she so some such than that the their them then there these they this those through to too under until "
    "up very was we were what when where which while who whom why will with would you your"
)
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def tokens(text: str) -> list[str]:
    """Lowercase words less the stop words (no stemming)."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


class Bm25:
    """Okapi BM25 over a few hundred documents, in memory."""

    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.terms = {doc_id: Counter(tokens(text)) for doc_id, text in docs.items()}
        self.lengths = {doc_id: sum(tf.values()) for doc_id, tf in self.terms.items()}
        self.average = sum(self.lengths.values()) / max(1, len(self.lengths))
        df: Counter[str] = Counter()
        for tf in self.terms.values():
            df.update(tf.keys())
        n = len(self.terms)
        self.idf = {term: math.log(1 + (n - d + 0.5) / (d + 0.5)) for term, d in df.items()}

    def rank(self, query: str, k: int) -> list[str]:
        words = set(tokens(query))
        scored = []
        for doc_id, tf in self.terms.items():
            norm = self.k1 * (1 - self.b + self.b * self.lengths[doc_id] / self.average)
            score = sum(self.idf[w] * tf[w] * (self.k1 + 1) / (tf[w] + norm) for w in words if w in tf)
            if score > 0:
                scored.append((-score, doc_id))
        return [doc_id for _, doc_id in sorted(scored)[:k]]


def distinct(turn_ids: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for turn_id in turn_ids:
        if turn_id not in seen:
            seen.add(turn_id)
            out.append(turn_id)
    return out


def ranking_scores(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """recall-any@5/10/25, recall-all@10 and MRR of ``ranked`` turns against ``evidence``."""
    gold = set(evidence)
    first = next((rank for rank, turn in enumerate(ranked[:DEPTH], start=1) if turn in gold), 0)
    return {
        "any_at_5": float(bool(gold & set(ranked[:5]))),
        "any_at_10": float(bool(gold & set(ranked[:10]))),
        "any_at_25": float(bool(gold & set(ranked[:25]))),
        "all_at_10": float(gold <= set(ranked[:10])),
        "mrr": 1 / first if first else 0.0,
    }


@dataclass
class Results:
    """Per-question outcomes, gathered over the conversations."""

    search: dict[str, list[dict[str, float]]] = field(default_factory=lambda: defaultdict(list))
    bm25: dict[str, list[dict[str, float]]] = field(default_factory=lambda: defaultdict(list))
    block_cites: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    quiet: list[float] = field(default_factory=list)
    no_fact: list[float] = field(default_factory=list)
    block_chars: list[int] = field(default_factory=list)
    context_ms: list[float] = field(default_factory=list)
    turns: int = 0
    record_s: float = 0.0
    process_s: float = 0.0
    facts: int = 0
    facts_kept: int = 0


def load(path: Path, limit: int | None) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        conversations = [json.loads(line) for line in f if line.strip()]
    return conversations[:limit] if limit else conversations


def record(memory: MemoryLedger, tenant: str, conversation: dict[str, Any]) -> int:
    """Record every turn, one batch per session; the number of turns."""
    cid = conversation["conversation_id"]
    count = 0
    for session in conversation["sessions"]:
        start = datetime.fromisoformat(session["date"])
        batch = [
            TurnInput(
                role="user",
                text=turn["text"],
                scopes=Scopes(session=session["session_id"], project=cid, user=turn["speaker"]),
                turn_id=turn["turn_id"],
                occurred_at=start + timedelta(seconds=SECONDS_PER_TURN * i),
            )
            for i, turn in enumerate(session["turns"])
        ]
        memory.record_turns(tenant, batch)
        count += len(batch)
    return count


CONTEXT_ERRORS: Counter[str] = Counter()  # context() calls that raised, by error
FACTS_SQL = sa.text("SELECT source_turns FROM proj_facts.facts WHERE tenant_id = :tenant AND status = 'active'")


def fact_precision(memory: MemoryLedger, tenant: str, informative: dict[str, bool]) -> tuple[int, int]:
    """(active facts, those whose every source turn is labelled informative)."""
    with memory.engine.connect() as conn:
        rows = conn.execute(FACTS_SQL, {"tenant": tenant}).all()
    kept = sum(1 for (sources,) in rows if sources and all(informative.get(t, False) for t in sources))
    return len(rows), kept


def block_turns(
    memory: MemoryLedger, tenant: str, question: str, scopes: Scopes, turn_ids: set[str]
) -> tuple[set[str], int, float, bool]:
    """The turns the block for ``question`` cites, its size in characters, the context() time in
    ms and whether it shows a fact (not only quoted turns)."""
    started = time.perf_counter()
    try:
        block = memory.context(tenant, question, scopes=scopes, budget_chars=BUDGET_CHARS)
    except Exception as e:  # noqa: BLE001 - context() promises never to raise: count it when it does
        CONTEXT_ERRORS[f"{type(e).__name__}: {e}"] += 1
        return set(), 0, (time.perf_counter() - started) * 1000, False
    elapsed = (time.perf_counter() - started) * 1000
    shown = set(block.item_ids)
    cited: set[str] = set()
    facts = False
    if shown:
        selection = memory.select(tenant, question, scopes=scopes)
        for item in selection.items:
            if item.item_id in shown:
                facts = facts or item.kind == "fact"
                cited.update(item.source_turns or ((item.item_id,) if item.kind == "turn" else ()))
    cited.update(t for t in re.findall(r"conv-[dt]\d+-s\d+-t\d+", block.text) if t in turn_ids)
    return cited, block.chars, elapsed, facts


def evaluate_conversation(memory: MemoryLedger, conversation: dict[str, Any], results: Results) -> None:
    cid = conversation["conversation_id"]
    tenant = f"eval-{cid}-{secrets.token_hex(4)}"
    turns = {t["turn_id"]: t for s in conversation["sessions"] for t in s["turns"]}
    started = time.perf_counter()
    results.turns += record(memory, tenant, conversation)
    recorded = time.perf_counter()
    memory.process()
    results.record_s += recorded - started
    results.process_s += time.perf_counter() - recorded
    total, kept = fact_precision(memory, tenant, {k: bool(t["informative"]) for k, t in turns.items()})
    results.facts += total
    results.facts_kept += kept
    bm25 = Bm25({k: t["text"] for k, t in turns.items()})
    scopes = Scopes(project=cid)
    for q in conversation["questions"]:
        category, evidence = q["category"], q["evidence"]
        cited, chars, ms, facts = block_turns(memory, tenant, q["question"], scopes, set(turns))
        results.block_chars.append(chars)
        results.context_ms.append(ms)
        if not evidence:
            results.quiet.append(float(not cited))
            results.no_fact.append(float(not facts))
            continue
        items = memory.search(tenant, q["question"], scopes=scopes, k=DEPTH)
        ranked = distinct(t for item in items for t in (item.source_turns or (item.item_id,)))
        results.search[category].append(ranking_scores(ranked, evidence))
        results.bm25[category].append(ranking_scores(bm25.rank(q["question"], DEPTH), evidence))
        results.block_cites[category].append(float(bool(cited & set(evidence))))


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def percentile(values: Sequence[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)], 1)


def summary(rows: Sequence[dict[str, float]]) -> dict[str, float | None]:
    keys = ("any_at_5", "any_at_10", "any_at_25", "all_at_10", "mrr")
    return {key: mean([r[key] for r in rows]) for key in keys}


def report(results: Results, seconds: float) -> dict[str, Any]:
    answerable = [c for c in CATEGORIES if results.search.get(c)]
    all_search = [r for c in answerable for r in results.search[c]]
    all_bm25 = [r for c in answerable for r in results.bm25[c]]
    all_block = [v for c in answerable for v in results.block_cites[c]]
    overall, baseline = summary(all_search), summary(all_bm25)
    per_category = {
        c: {
            "questions": len(results.search[c]),
            "search": summary(results.search[c]),
            "bm25": summary(results.bm25[c]),
            "block_evidence_rate": mean(results.block_cites[c]),
        }
        for c in answerable
    }
    ingest_s = results.record_s + results.process_s
    return {
        "questions_answerable": len(all_search),
        "questions_unanswerable": len(results.quiet),
        "search_any_at_5": overall["any_at_5"],
        "search_any_at_10": overall["any_at_10"],
        "search_any_at_25": overall["any_at_25"],
        "search_all_at_10": overall["all_at_10"],
        "search_mrr": overall["mrr"],
        "bm25_any_at_5": baseline["any_at_5"],
        "bm25_any_at_10": baseline["any_at_10"],
        "bm25_any_at_25": baseline["any_at_25"],
        "bm25_all_at_10": baseline["all_at_10"],
        "bm25_mrr": baseline["mrr"],
        "block_evidence_rate": mean(all_block),
        "unanswerable_quiet_rate": mean(results.quiet),
        "unanswerable_no_fact_rate": mean(results.no_fact),
        "block_chars_mean": round(statistics.fmean(results.block_chars), 1) if results.block_chars else None,
        "context_ms_p50": percentile(results.context_ms, 50),
        "context_ms_p99": percentile(results.context_ms, 99),
        "fact_precision": round(results.facts_kept / results.facts, 4) if results.facts else None,
        "facts": results.facts,
        "facts_kept": results.facts_kept,
        "turns": results.turns,
        "record_s": round(results.record_s, 2),
        "process_s": round(results.process_s, 2),
        "ingest_turns_per_s": round(results.turns / ingest_s, 1) if ingest_s else None,
        "eval_s": round(seconds, 1),
        "context_errors": sum(CONTEXT_ERRORS.values()),
        "by_category": per_category,
    }


def fmt(value: float | None) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def print_table(out: dict[str, Any]) -> None:
    head = f"{'category':13s} {'n':>4s} {'any@5':>6s} {'any@10':>6s} {'any@25':>6s} {'all@10':>6s} {'MRR':>6s}"
    print(f"{head} | {'bm25@10':>7s} {'bm25all':>7s} {'bm25MRR':>7s} | {'block':>6s}")
    by_category = out["by_category"].items()
    rows = [(c, d["questions"], d["search"], d["bm25"], d["block_evidence_rate"]) for c, d in by_category]
    total_search = {k.removeprefix("search_"): v for k, v in out.items() if k.startswith("search_")}
    total_bm25 = {k.removeprefix("bm25_"): v for k, v in out.items() if k.startswith("bm25_")}
    rows.append(("overall", out["questions_answerable"], total_search, total_bm25, out["block_evidence_rate"]))
    for name, n, s, b, block in rows:
        cells = " ".join(fmt(s[k]) for k in ("any_at_5", "any_at_10", "any_at_25", "all_at_10", "mrr"))
        print(
            f"{name:13s} {n:4d} {cells} | {fmt(b['any_at_10']):>7s} {fmt(b['all_at_10']):>7s} "
            f"{fmt(b['mrr']):>7s} | {fmt(block)}"
        )
    quiet = fmt(out["unanswerable_quiet_rate"])
    no_fact = fmt(out["unanswerable_no_fact_rate"])
    print(
        f"unanswerable: {out['questions_unanswerable']} questions, quiet block rate {quiet}, "
        f"block showing no fact {no_fact}"
    )
    for error, count in CONTEXT_ERRORS.most_common(5):
        print(f"context() raised {count} times: {error[:150]}")
    print(
        f"block: mean {out['block_chars_mean']} chars; context() p50 {out['context_ms_p50']} ms, "
        f"p99 {out['context_ms_p99']} ms"
    )
    print(
        f"facts: {out['facts']} active, {out['facts_kept']} citing only informative turns "
        f"(fact_precision {out['fact_precision']})"
    )
    print(
        f"ingestion: {out['turns']} turns, record {out['record_s']} s + process {out['process_s']} s = "
        f"{out['ingest_turns_per_s']} turns/s end to end; whole eval {out['eval_s']} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="a JSON lines file of conversations")
    parser.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    parser.add_argument("--json-only", action="store_true", help="print only the final JSON line")
    args = parser.parse_args(argv)
    conversations = load(args.set, args.limit_conversations)
    results = Results()
    started = time.perf_counter()
    with MemoryLedger.open() as memory:
        for conversation in conversations:
            evaluate_conversation(memory, conversation, results)
            if not args.json_only:
                print(f"{conversation['conversation_id']}: done ({time.perf_counter() - started:.0f} s)", flush=True)
    out = report(results, time.perf_counter() - started)
    if not args.json_only:
        print_table(out)
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
