"""Benchmark ``MemoryLedger.import_turns``: a history of ``--turns`` turns in the
{role, content} message-list shape, one conversation per session of the development
conversations (``tests/data/conversations_dev.jsonl``), repeated with a numbered suffix.

    .venv/bin/python scripts/bench_import_command.py [--turns 1000]

An embedded PostgreSQL of this process alone. Imports once (all new), then again (all
present, the re-run of a resumed import). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from memledger import MemoryLedger
from memledger.config import Settings
from memledger.store import embedded_server

DEV_SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "conversations_dev.jsonl"


def history(count: int) -> list[str]:
    """JSON lines of conversations holding ``count`` turns in all."""
    sessions = [s for line in DEV_SET.read_text().splitlines() for s in json.loads(line)["sessions"]]
    lines: list[str] = []
    total, round_ = 0, 0
    while total < count:
        for session in sessions:
            turns = session["turns"][: count - total]
            if not turns:
                break
            messages = [
                {
                    "role": "user",
                    "content": f"{t['text']} ({round_})",
                    "name": t["speaker"],
                    "timestamp": session["date"],
                }
                for t in turns
            ]
            lines.append(json.dumps({"id": f"{session['session_id']}-{round_}", "messages": messages}))
            total += len(turns)
        round_ += 1
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=1000, help="turns in the history (default: 1000)")
    args = parser.parse_args()
    lines = history(args.turns)
    url, stop = embedded_server.start_temporary(Path(tempfile.mkdtemp(prefix="bench-import-cmd-")) / "pg")
    try:
        with MemoryLedger.open(Settings(DATABASE_URL=url.render_as_string(hide_password=False))) as memory:
            first = memory.import_turns("bench", lines, source="bench.jsonl")
            again = memory.import_turns("bench", lines, source="bench.jsonl")
    finally:
        stop()
    print(json.dumps({
        "conversations": first.conversations, "turns": first.recorded,
        "import_s": round(first.seconds, 2), "import_turns_per_s": round(first.recorded / first.seconds, 1),
        "rerun_s": round(again.seconds, 2), "rerun_present": again.present,
        "rerun_turns_per_s": round(again.present / again.seconds, 1),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
