"""Benchmark importing a long conversation history: record_turns, then process().

    .venv/bin/python scripts/bench_conversation_import.py [--turns 6000] [--batch 500]

An embedded PostgreSQL of this process alone (``store.embedded_server.start_temporary``; deleted at
exit). The turns are the development conversations' (``tests/data/conversations_dev.jsonl``),
repeated with a numbered suffix until ``--turns`` distinct texts are had, so the offline
embedder embeds every one (no text is in its cache), with their speakers as user keys and
their sessions and dates as recorded. Recorded in batches of ``--batch`` turns, then one
``process()`` extracts and projects everything (the heuristic extractor, the offline
embedder). Prints turns/s for recording, for processing and end to end; the last line
is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memledger import MemoryLedger, Scopes, TurnInput
from memledger.config import Settings
from memledger.store import embedded_server

DEV_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "conversations_dev.jsonl"


def conversation_turns(count: int) -> list[TurnInput]:
    """``count`` turns of the development conversations, each text distinct."""
    sessions = [s | {"conversation": c["conversation_id"]} for line in DEV_SET.read_text().splitlines()
                for c in [json.loads(line)] for s in c["sessions"]]  # fmt: skip
    turns: list[TurnInput] = []
    round_ = 0
    while len(turns) < count:
        for session in sessions:
            start = datetime.fromisoformat(session["date"]) + timedelta(days=400 * round_)
            for i, turn in enumerate(session["turns"]):
                if len(turns) == count:
                    return turns
                suffix = f" (take {round_ + 1})" if round_ else ""
                scopes = Scopes(
                    session=f"{session['session_id']}-r{round_}", project=session["conversation"], user=turn["speaker"]
                )
                turns.append(
                    TurnInput(
                        role="user",
                        text=turn["text"] + suffix,
                        scopes=scopes,
                        turn_id=f"{turn['turn_id']}-r{round_}",
                        occurred_at=start + timedelta(seconds=5 * i),
                    )
                )
        round_ += 1
    return turns


def run(turns: list[TurnInput], batch: int) -> dict[str, Any]:
    url, stop = embedded_server.start_temporary(Path(tempfile.mkdtemp(prefix="bench-import-")) / "pg")
    try:
        with MemoryLedger.open(Settings(DATABASE_URL=url.render_as_string(hide_password=False))) as memory:
            memory.search("warm-up", "warm up the embedder")  # the model loads once, not inside the timing
            started = time.perf_counter()
            for at in range(0, len(turns), batch):
                memory.record_turns("bench-import", turns[at : at + batch])
            recorded = time.perf_counter()
            extracted = memory.process()
            done = time.perf_counter()
    finally:
        stop()
    record_s, process_s = recorded - started, done - recorded
    return {
        "turns": len(turns),
        "extracted": extracted,
        "record_s": round(record_s, 2),
        "process_s": round(process_s, 2),
        "record_turns_per_s": round(len(turns) / record_s, 1),
        "process_turns_per_s": round(len(turns) / process_s, 1),
        "end_to_end_turns_per_s": round(len(turns) / (record_s + process_s), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=6000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args(argv)
    out = run(conversation_turns(args.turns), args.batch)
    print(
        f"{out['turns']} turns: record {out['record_s']} s ({out['record_turns_per_s']}/s), "
        f"process {out['process_s']} s ({out['process_turns_per_s']}/s), "
        f"end to end {out['end_to_end_turns_per_s']} turns/s"
    )
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
