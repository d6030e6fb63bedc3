"""The soak script's checks (scripts/soak.py): they find lost, doubled and misplaced turns
and judge memory, and a few seconds of its traffic against a real server pass them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from memledger.service.record import TurnInput, record_turns
from memledger.service.types import Scopes

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

SOAK = Path(__file__).resolve().parents[2] / "scripts" / "soak.py"


@pytest.fixture(scope="module")
def soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak", SOAK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def record(database: TestDatabase, tenant: str, *turn_ids: str) -> None:
    turns = [TurnInput(role="user", text=f"turn {t}", scopes=Scopes(session="s1"), turn_id=t) for t in turn_ids]
    record_turns(database.engine, tenant, turns)


def test_check_turns_passes_when_each_acknowledged_turn_is_there_once(soak: ModuleType, database: TestDatabase) -> None:
    run = f"s{uuid.uuid4().hex[:6]}"
    record(database, "soak-a", f"{run}-c00-0-0", f"{run}-c00-0-1")
    record(database, "soak-b", f"{run}-c01-0-0")
    acked = {f"{run}-c00-0-0": "soak-a", f"{run}-c00-0-1": "soak-a", f"{run}-c01-0-0": "soak-b"}
    found = soak.check_turns(database.engine, run, acked, {f"{run}-c02-0-0": "soak-b"})
    assert found["ok"], found
    assert (found["acknowledged"], found["found"], found["unacknowledged_found"]) == (3, 3, 0)


def test_check_turns_names_missing_doubled_misplaced_and_unknown_turns(
    soak: ModuleType, database: TestDatabase
) -> None:
    run = f"s{uuid.uuid4().hex[:6]}"
    lost, doubled, misplaced, stray = (f"{run}-c00-{n}-0" for n in range(4))
    record(database, "soak-a", doubled, stray)
    record(database, "soak-b", doubled, misplaced)  # the same turn id in a second tenant
    acked = {lost: "soak-a", doubled: "soak-a", misplaced: "soak-a"}
    found = soak.check_turns(database.engine, run, acked, {})
    assert not found["ok"]
    assert found["missing"] == [lost]
    assert found["duplicated"] == [doubled]
    assert found["wrong_tenant"] == sorted([doubled, misplaced])
    assert found["unknown"] == [stray]


def test_memory_is_judged_flat_only_over_a_long_enough_window(soak: ModuleType) -> None:
    assert soak.slope_mb_per_min([(0.0, 100.0), (60.0, 102.0), (120.0, 104.0)]) == pytest.approx(2.0)

    def traffic(minutes: float, mb_per_min: float) -> object:
        seconds = minutes * 60
        samples = [soak.Sample(t, "traffic", 300 + mb_per_min * t / 60, 20, 30) for t in range(0, int(seconds) + 1, 5)]
        return soak.Traffic(run="r", tenants=[], think=0.1, samples=samples, traffic_s=seconds)

    assert soak.memory_figures(traffic(10, 0.1), 1.0)["rss_flat"] is True
    leaking = soak.memory_figures(traffic(10, 3.0), 1.0)
    assert leaking["rss_flat"] is False
    assert leaking["rss_slope_mb_per_min"] == pytest.approx(3.0)
    assert leaking["rss_slope_window_s"] == 300
    assert soak.memory_figures(traffic(1, 3.0), 1.0)["rss_flat"] is None  # 30 s say nothing


def test_a_few_seconds_of_soak_pass_every_check(database: TestDatabase) -> None:
    """The whole script, small: its own database on the session's server, a server with
    workers, 4 clients on 3 tenants for 5 s, the rebuild, the drain and the checks."""
    args = ["--seconds", "5", "--clients", "4", "--tenants", "3", "--turns-per-tenant", "10", "--rebuild", "facts"]
    done = subprocess.run(
        [sys.executable, str(SOAK), *args],
        env=database.env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["turns_acknowledged"] > 0
    assert out["turns"]["found"] == out["turns_acknowledged"]
    assert out["verify"]["projections_equal"] and out["verify"]["chain_ok"]
    assert out["rebuild"]["exit"] == 0
