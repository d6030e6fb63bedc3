"""Score the heuristic extractor against a labelled corpus of user turns.

Usage: python scripts/eval_extraction.py [--corpus FILE] [--show N] [--min-confidence C]

Each corpus line is a JSON object: {"id", "text", "entities": [{"name", "type"}],
"relationships": [{"source", "source_type", "relation", "target", "target_type"}]}.

Matching (DESIGN.md, Extraction): an entity by (normalised name, type); a
relationship by (normalised source, relation, normalised target), a symmetric
relation either way round, a gold source "user" matching an edge whose source
is the speaker. Candidates under ``--min-confidence`` (default 0.5, the policy's
drop line) are not counted. Prints per-type numbers and some false positives and
negatives; the last line is one JSON object with the totals and the throughput
(turns per CPU second of the extractor alone, so that a busy machine does not skew it).

Labelling guide for the corpus, so that new lines stay consistent:
- entities are explicitly named people, projects, tools (languages, frameworks,
  databases, services, apps, hardware products), organizations (companies,
  universities, named teams such as "backend team") and concepts (named
  methods or ideas: TDD, event sourcing, Scrum). No pronouns, no unnamed roles
  ("my dad"), no places, no file formats, nothing only inside a code block;
  versions are dropped ("Python 3.12" is "Python"), titles too ("Mrs. Okafor").
- relationships are what the sentence states, not what it implies: "I use X"
  (user USES X), "we switched from A to B" (user USES B), "Project P uses X" (P
  USES X), "X for project P" (user USES X and P USES X), "I prefer X over Y"
  (user PREFERS X), "we decided to go with X" (user DECIDED X), "my colleague S"
  (user WORKS_WITH S), "my sister M" (user KNOWS M), "S works on P" (S WORKS_ON P),
  "S from Acme" (S PART_OF Acme), "P depends on X" (P DEPENDS_ON X). Questions,
  plans under evaluation ("considering X") and negations state no relationship;
  hedged statements ("I think we use X") do.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memledger.events.catalogue import Scopes
from memledger.events.keys import SYMMETRIC_RELATIONS, normalise_name
from memledger.extraction import name_guess
from memledger.extraction.heuristic import HeuristicExtractor
from memledger.extraction.protocol import TurnExtraction, TurnText

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / "tests/data/extraction_corpus.jsonl"
Key = tuple[str, ...]


def load(path: Path) -> list[dict[str, Any]]:
    """The corpus lines of ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def turns_of(rows: Iterable[dict[str, Any]]) -> list[TurnText]:
    """One user turn per corpus line."""
    when = datetime(2024, 1, 1, tzinfo=UTC)
    return [
        TurnText(
            tenant_id="eval",
            turn_id=row["id"],
            event_id=f"event-{row['id']}",
            role="user",
            text=row["text"],
            scopes=Scopes(),
            occurred_at=when,
        )
        for row in rows
    ]


def gold_entities(row: dict[str, Any]) -> set[Key]:
    return {(normalise_name(e["name"]), e["type"]) for e in row["entities"]}


def _edge_key(source: str, relation: str, target: str) -> Key:
    if relation in SYMMETRIC_RELATIONS and target < source:
        source, target = target, source
    return (source, relation, target)


def gold_relationships(row: dict[str, Any]) -> set[Key]:
    keys = set()
    for rel in row["relationships"]:
        source = "user" if rel["source_type"] == "user" else normalise_name(rel["source"])
        keys.add(_edge_key(source, rel["relation"], normalise_name(rel["target"])))
    return keys


def found_entities(extraction: TurnExtraction, floor: float) -> set[Key]:
    return {(normalise_name(e.name), e.entity_type) for e in extraction.entities if e.confidence >= floor}


def found_relationships(extraction: TurnExtraction, floor: float) -> set[Key]:
    keys = set()
    for rel in extraction.relationships:
        if rel.confidence < floor:
            continue
        source = "user" if rel.source_type == "user" else normalise_name(rel.source_name)
        keys.add(_edge_key(source, rel.relation, normalise_name(rel.target_name)))
    return keys


class Tally:
    """True positives, false positives and false negatives, in total and per label."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self.errors: list[tuple[str, str, Key]] = []

    def add(self, turn_id: str, gold: set[Key], found: set[Key], label_at: int) -> None:
        for key in gold | found:
            outcome = "tp" if key in gold and key in found else "fp" if key in found else "fn"
            self.counts[(outcome, key[label_at])] += 1
            self.counts[(outcome, "*")] += 1
            if outcome != "tp":
                self.errors.append((outcome, turn_id, key))

    def scores(self, label: str = "*") -> tuple[float, float, int, int, int]:
        tp, fp, fn = (self.counts[(o, label)] for o in ("tp", "fp", "fn"))
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        return precision, recall, tp, fp, fn

    def labels(self) -> list[str]:
        return sorted({label for _, label in self.counts if label != "*"})


def report(name: str, tally: Tally, show: int) -> None:
    print(f"\n{name}")
    print(f"  {'label':<14}{'P':>7}{'R':>7}{'tp':>6}{'fp':>6}{'fn':>6}")
    for label in [*tally.labels(), "*"]:
        p, r, tp, fp, fn = tally.scores(label)
        print(f"  {label if label != '*' else 'ALL':<14}{p:7.2f}{r:7.2f}{tp:6d}{fp:6d}{fn:6d}")
    for outcome in ("fp", "fn"):
        shown = [e for e in tally.errors if e[0] == outcome][:show]
        for _, turn_id, key in shown:
            print(f"  {outcome} {turn_id}: {' | '.join(key)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--show", type=int, default=8, help="false positives/negatives to show")
    parser.add_argument("--min-confidence", type=float, default=0.5)
    args = parser.parse_args(argv)

    rows = load(args.corpus)
    turns = turns_of(rows)
    extractor = HeuristicExtractor()
    started = time.process_time()
    name_guess.warm()  # once per process: reported apart from the per-turn rate
    startup = time.process_time() - started
    started = time.process_time()
    results = extractor.extract(turns)
    elapsed = time.process_time() - started

    entities, relationships = Tally(), Tally()
    empty = TurnExtraction()
    for row in rows:
        extraction = results.get(row["id"], empty)
        entities.add(row["id"], gold_entities(row), found_entities(extraction, args.min_confidence), 1)
        relationships.add(row["id"], gold_relationships(row), found_relationships(extraction, args.min_confidence), 1)
    report("entities (by type)", entities, args.show)
    report("relationships (by relation)", relationships, args.show)

    ep, er, etp, efp, efn = entities.scores()
    rp, rr, rtp, rfp, rfn = relationships.scores()
    summary = {
        "corpus": str(args.corpus),
        "turns": len(rows),
        "entity_precision": round(ep, 4),
        "entity_recall": round(er, 4),
        "relationship_precision": round(rp, 4),
        "relationship_recall": round(rr, 4),
        "entity_counts": {"tp": etp, "fp": efp, "fn": efn},
        "relationship_counts": {"tp": rtp, "fp": rfp, "fn": rfn},
        "turns_per_cpu_second": round(len(rows) / elapsed, 1) if elapsed else None,
        "startup_cpu_s": round(startup, 3),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
