"""``memledger check`` as a command: its JSON shape and exit codes (issue 28, item 4)."""

from __future__ import annotations

import json
import time

from tests.e2e.conftest import Surfaces, free_port, run_cli


def test_check_json_reports_each_step_and_exits_0(surfaces: Surfaces) -> None:
    surfaces.catch_up()
    done = run_cli(surfaces.env, "check", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {"ok", "smoke", "steps"}
    assert (report["ok"], report["smoke"]) == (True, False)
    assert [s["name"] for s in report["steps"]] == ["database", "migrations", "projections", "embedder", "model"]
    for step in report["steps"]:
        assert set(step) == {"name", "status", "detail", "ms"}
        assert step["status"] in ("ok", "skipped") and isinstance(step["ms"], float)


def test_check_smoke_prints_a_line_per_step(surfaces: Surfaces) -> None:
    done = run_cli(surfaces.env, "check", "--smoke")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 12 and lines[-1] == "all good"
    assert lines[5].split()[:2] == ["✓", "record"] and " ms  tenant memledger-check-" in lines[5]
    assert lines[4].split()[:2] == ["-", "model"]


def test_check_of_an_unreachable_database_fails_fast_with_exit_1(surfaces: Surfaces) -> None:
    env = {**surfaces.env, "DATABASE_URL": f"postgresql://memledger@127.0.0.1:{free_port()}/memledger"}
    began = time.monotonic()
    done = run_cli(env, "check", "--smoke")
    took = time.monotonic() - began
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("✗ database") and "OperationalError" in lines[0]
    skipped = [line for line in lines[1:-1] if not line.startswith(("✓ embedder", "- model"))]
    assert len(skipped) == 8 and all(line.startswith("- ") and "did not pass" in line for line in skipped)
    assert lines[-1] == "CHECK FAILED"
    assert took < 15, took  # a Python start and imports, then a refused connection
