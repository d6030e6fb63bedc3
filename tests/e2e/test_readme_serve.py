"""The README's "Serve it" commands, run as written against a real ``memledger serve``
on a database of its own: its workers extract and project the turn (no ``process()``
here), so the turn's fact must reach the context block by the server alone."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from tests.conftest import TestDatabase
from tests.e2e.conftest import run_cli, scratch, start_server, stop_server, wait_until_serving

README = Path(__file__).resolve().parents[2] / "README.md"
README_URL = "http://127.0.0.1:8765"
FACT_TIMEOUT_S = 30.0


def serve_it_commands() -> list[str]:
    """The shell commands of the README's "Serve it" section, comments dropped."""
    section = re.search(r"## Serve it\n(.*?)\n## ", README.read_text(), re.DOTALL)
    assert section is not None, "the README lost its Serve it section"
    blocks = re.findall(r"```bash\n(.*?)```", section.group(1), re.DOTALL)
    joined = "".join(blocks).replace("\\\n", "")  # a line ending in \ goes on in the next
    lines = [line.split("  #")[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line]


def test_readme_serve_commands_are_the_ones_this_test_runs() -> None:
    commands = serve_it_commands()

    assert commands[:3] == ["memledger keys create --tenant acme", "export MEMLEDGER_KEY=<the key>", "memledger serve"]
    assert [c.split()[0] for c in commands[3:]] == ["curl", "curl"]
    assert "/v1/turns" in commands[3] and "Authorization: Bearer $MEMLEDGER_KEY" in commands[3]
    assert "/v1/memory/context" in commands[4] and "X-API-Key: $MEMLEDGER_KEY" in commands[4]


def test_readme_serve_records_a_turn_whose_fact_reaches_context_by_the_server_alone(
    database: TestDatabase,
) -> None:
    create_key, _, serve, post_turn, get_context = serve_it_commands()
    with scratch(database, "readme_serve") as ledger:
        env = {**database.env, "DATABASE_URL": ledger.database.url.render_as_string(hide_password=False)}
        server = start_server(env, *serve.split()[2:])  # the README's serve, on a free port
        try:
            created = run_cli(env, *create_key.split()[1:])
            assert created.returncode == 0, created.stderr
            env["MEMLEDGER_KEY"] = created.stdout.strip().splitlines()[-1]  # the key, printed last
            wait_until_serving(server)
            posted = _curl(post_turn, server.base_url, env)
            assert json.loads(posted)["positions"], posted
            block = _wait_for_fact(get_context, server.base_url, env)
        finally:
            stop_server(server)
    assert "Phoenix uses PostgreSQL" in block
    assert "turn" in block  # each item cites the turns it came from


def _curl(command: str, base_url: str, env: dict[str, str]) -> str:
    """Run a README curl command in bash, against ``base_url`` instead of the README's."""
    shell = command.replace(README_URL, base_url)
    done = subprocess.run(["bash", "-c", shell], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _wait_for_fact(command: str, base_url: str, env: dict[str, str]) -> str:
    """The context block once it holds the turn's fact (the server's workers put it there)."""
    deadline = time.monotonic() + FACT_TIMEOUT_S
    block = ""
    while time.monotonic() < deadline:
        block = json.loads(_curl(command, base_url, env))["block"]
        if "Phoenix uses PostgreSQL" in block:
            return block
        time.sleep(0.5)
    raise AssertionError(f"the turn's fact never reached context within {FACT_TIMEOUT_S:.0f} s:\n{block}")
