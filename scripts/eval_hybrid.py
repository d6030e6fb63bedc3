"""How many model calls hybrid extraction saves over llm extraction, offline.

Usage: python scripts/eval_hybrid.py [--sample-every N] [--session-size K] [FILE ...]

Both modes run on each file's turn texts (labels are not read) through
``LlmExtractor`` with litellm's ``mock_response``: the recorded answers of
tests/data/llm_answers_*.json where a turn has one, else an empty answer. Only the
calls and the turns in them are counted. With ``--session-size 1`` (the default)
each line is its own conversation, so llm makes one call per turn (the worst case);
larger sizes group lines into conversations of K turns, as a worker batch would.
Prints one line per file, then a JSON line with the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch at import
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.contract.recorded: the recorded model

from tests.contract.recorded import RecordedLlm, load  # noqa: E402

from memledger.events.catalogue import Scopes  # noqa: E402
from memledger.extraction.heuristic import HeuristicExtractor  # noqa: E402
from memledger.extraction.hybrid import HybridExtractor  # noqa: E402
from memledger.extraction.protocol import TurnText  # noqa: E402

DATA = ROOT / "tests/data"
DEFAULT_FILES = ("extraction_corpus.jsonl", "extraction_dev_wide.jsonl")
FALLBACK_FILES = ("extraction_corpus.jsonl", "extraction_corpus_holdout.jsonl")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def turns_of(path: Path, session_size: int) -> list[TurnText]:
    """Each line's text as a user turn; ``session_size`` lines to a conversation."""
    texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [
        TurnText(
            tenant_id="eval",
            turn_id=f"{path.stem}-{i}",
            event_id=f"turn:{path.stem}-{i}",
            role="user",
            text=text,
            scopes=Scopes(session=f"s{i // session_size}", user="user"),
            occurred_at=NOW,
        )
        for i, text in enumerate(texts)
    ]


def recorded() -> dict[str, Any]:
    """Every recorded answer of tests/data/llm_answers_*.json, by text key."""
    answers: dict[str, Any] = {}
    for path in sorted(DATA.glob("llm_answers_*.json")):
        answers.update(load(path.name)["answers"])
    return answers


def measure(turns: list[TurnText], sample_every: int, answers: dict[str, Any]) -> dict[str, Any]:
    """Model calls and turns sent by llm and by hybrid for ``turns``."""
    heuristic = HeuristicExtractor()
    llm = RecordedLlm(heuristic, answers)
    llm.extract(turns)
    model = RecordedLlm(heuristic, answers)
    hybrid = HybridExtractor(heuristic, model, sample_every=sample_every)
    hybrid.extract(turns)
    return {
        "turns": len(turns),
        "llm_calls": llm.calls,
        "hybrid_calls": model.calls,
        "calls_saved": round(1 - model.calls / llm.calls, 3) if llm.calls else 0.0,
        "llm_turns_sent": llm.turns_sent,
        "hybrid_turns_sent": model.turns_sent,
        "turns_saved": round(1 - model.turns_sent / llm.turns_sent, 3) if llm.turns_sent else 0.0,
        "reasons": dict(sorted(hybrid.reasons.items())),
    }


def main(argv: list[str] | None = None) -> int:
    """Print the measure of each file and the totals."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="JSONL files with a text per line (default: see above)")
    parser.add_argument("--sample-every", type=int, default=0, help="hybrid's sample rate (default: 0, none)")
    parser.add_argument("--session-size", type=int, default=1, help="lines per conversation (default: 1)")
    args = parser.parse_args(argv)
    files = args.files or [DATA / n for n in DEFAULT_FILES if (DATA / n).exists()]
    if not args.files and not (DATA / DEFAULT_FILES[1]).exists():
        files = [DATA / n for n in FALLBACK_FILES]
    answers = recorded()
    total = {"turns": 0, "llm_calls": 0, "hybrid_calls": 0, "llm_turns_sent": 0, "hybrid_turns_sent": 0}
    for path in files:
        row = measure(turns_of(path, args.session_size), args.sample_every, answers)
        for key in total:
            total[key] += row[key]
        print(
            f"{path.name}: {row['turns']} turns; model calls llm {row['llm_calls']}, hybrid {row['hybrid_calls']}"
            f" ({row['calls_saved']:.1%} saved); turns sent {row['llm_turns_sent']} vs {row['hybrid_turns_sent']}"
            f" ({row['turns_saved']:.1%} saved); why sent: {row['reasons']}"
        )
    saved = 1 - total["hybrid_calls"] / total["llm_calls"] if total["llm_calls"] else 0.0
    print(json.dumps({**total, "calls_saved": round(saved, 3), "session_size": args.session_size}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
