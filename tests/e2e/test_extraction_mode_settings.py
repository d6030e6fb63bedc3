"""A tenant's extraction mode, set over HTTP and the CLI: recorded as a settings event,
read back by both, refused when it is not a mode."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.e2e.conftest import Caller, Surfaces, run_cli


def test_the_extraction_mode_is_set_and_read_over_http(new_caller: Callable[[str], Caller]) -> None:
    caller = new_caller("mode")
    assert caller.http.get("/v1/settings").json()["extraction_mode"] is None
    changed = caller.http.post("/v1/settings", json={"extraction_mode": "hybrid"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["extraction_mode"] == "hybrid" and changed.json()["capture"] is True
    assert caller.http.get("/v1/settings").json()["extraction_mode"] == "hybrid"
    assert caller.http.post("/v1/settings", json={"extraction_mode": "magic"}).status_code == 422


def test_the_settings_command_sets_and_shows_the_extraction_mode(
    surfaces: Surfaces, new_caller: Callable[[str], Caller]
) -> None:
    caller = new_caller("modecli")
    done = run_cli(surfaces.env, "settings", "--tenant", caller.tenant, "--extraction-mode", "llm", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["extraction_mode"] == "llm"
    shown = run_cli(surfaces.env, "settings", "--tenant", caller.tenant)
    assert shown.returncode == 0, shown.stderr
    assert "extraction_mode: llm" in shown.stdout and "capture: on" in shown.stdout
    assert caller.http.get("/v1/settings").json()["extraction_mode"] == "llm"
    bad = run_cli(surfaces.env, "settings", "--tenant", caller.tenant, "--extraction-mode", "magic")
    assert bad.returncode == 2
