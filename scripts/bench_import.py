"""Benchmark ``memledger import`` into the ledger: turns/s and the command's peak RSS.

    .venv/bin/python scripts/bench_import.py [--turns 50000] [--compare]

A history of ``--turns`` turns in the {role, content} message-list shape, one
conversation per session of the development conversations
(``tests/data/conversations_dev.jsonl``), repeated with a numbered suffix
(``bench_import_command.history``). An embedded PostgreSQL of this run alone.

Runs ``memledger import FILE --json`` as a user would (a subprocess, so its peak RSS
is its own): once into an empty tenant, then again (every turn present: a re-run).
With ``--compare``, also in this process, alternating on fresh tenants: grouped
conversations (what the import does) against one transaction per conversation.
Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memledger.service import importing
from memledger.store import embedded_server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import_command import history

TARGET_TURNS_PER_S = 20_000.0


def run_cli(url: str, path: Path, tenant: str) -> tuple[dict[str, Any], float, float]:
    """``memledger import`` of ``path``: its JSON summary, the wall seconds of the whole
    command (start-up included) and the peak RSS of the process in MiB."""
    env = {**os.environ, "DATABASE_URL": url}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memledger.cli.main", "import", str(path), "--tenant", tenant, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"memledger import exited {done.returncode}: {done.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is the largest of any child so far: valid if this one is the largest.
    return json.loads(done.stdout), wall, max(peak, before) / 1024


def compare(url: str, lines: list[str], rounds: int) -> dict[str, Any]:
    """Turns/s of the import in groups against one transaction per conversation, in turns."""
    from memledger import MemoryLedger
    from memledger.config import Settings

    rates: dict[str, list[float]] = {"grouped": [], "per_conversation": []}
    grouped = importing.GROUP_TURNS
    with MemoryLedger.open(Settings(DATABASE_URL=url)) as memory:
        for round_ in range(rounds):
            for name, group_turns in (("grouped", grouped), ("per_conversation", 0)):
                importing.GROUP_TURNS = group_turns
                summary = memory.import_turns(f"compare-{name}-{round_}", lines, source="bench.jsonl")
                rates[name].append(summary.recorded / summary.seconds)
    importing.GROUP_TURNS = grouped
    ratios = [a / b for a, b in zip(rates["grouped"], rates["per_conversation"], strict=True)]
    return {
        "compare_grouped_turns_per_s": statistics.median(rates["grouped"]),
        "compare_per_conversation_turns_per_s": statistics.median(rates["per_conversation"]),
        "compare_ratio": statistics.median(ratios),
        "compare_rounds": rates,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=50_000, help="turns in the history (default: 50000)")
    parser.add_argument("--compare", action="store_true", help="also grouped vs one transaction per conversation")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --compare (default: 3)")
    args = parser.parse_args()
    lines = history(args.turns)
    home = Path(tempfile.mkdtemp(prefix="bench-import-"))
    path = home / "history.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    url, stop = embedded_server.start_temporary(home / "pg")
    address = url.render_as_string(hide_password=False)
    out: dict[str, Any] = {"turns": args.turns, "conversations": len(lines), "file_bytes": path.stat().st_size}
    try:
        first, first_wall, first_rss = run_cli(address, path, "bench")
        again, again_wall, again_rss = run_cli(address, path, "bench")
        out.update(
            import_turns=first["recorded"],
            import_s=first["seconds"],
            import_turns_per_s=first["recorded"] / first["seconds"],
            import_command_s=first_wall,
            import_command_turns_per_s=first["recorded"] / first_wall,
            peak_rss_mib=first_rss,
            rerun_present=again["present"],
            rerun_s=again["seconds"],
            rerun_turns_per_s=again["present"] / again["seconds"],
            rerun_command_s=again_wall,
            rerun_peak_rss_mib=again_rss,
        )
        if args.compare:
            out.update(compare(address, lines, args.rounds))
    finally:
        stop()
    out["target_turns_per_s"] = TARGET_TURNS_PER_S
    out["target_met"] = out["import_turns_per_s"] >= TARGET_TURNS_PER_S
    out["load_average"] = Path("/proc/loadavg").read_text(encoding="ascii").split()[0]
    print(
        f"memledger import of {out['import_turns']:,} turns ({out['conversations']:,} conversations):"
        f" {out['import_turns_per_s']:,.0f} turns/s into the ledger ({out['import_s']:.2f} s; the whole command"
        f" {out['import_command_s']:.2f} s), peak RSS {out['peak_rss_mib']:.0f} MiB;"
        f" re-run (all present) {out['rerun_turns_per_s']:,.0f} turns/s"
    )
    if args.compare:
        print(
            f"grouped {out['compare_grouped_turns_per_s']:,.0f} turns/s vs one transaction per conversation"
            f" {out['compare_per_conversation_turns_per_s']:,.0f} ({out['compare_ratio']:.2f}x)"
        )
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))


if __name__ == "__main__":
    main()
