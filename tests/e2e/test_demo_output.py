"""What ``memledger demo`` prints: its tenant and scopes, commands to ask the same
questions, and counts that match the rows it shows. Run in this process under a tenant
of its own, so the demo tenant of test_cli.py sees only its own first run."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import uuid
from collections import Counter

import pytest

from memledger.cli import demo
from memledger.formatting import TEXT_BEGIN, TEXT_END
from tests.conftest import TestDatabase

ITEM = re.compile(r"^- \[[^\]]+\] \((fact|entity|relationship|turn)\b", re.MULTILINE)
HOLDS = re.compile(r"the block holds (.*?): ")
GRAPH = re.compile(r"the graph around \w+ \((\d+) relationships\):\n((?:   .*\n)*)")


def run_demo(database: TestDatabase, tenant: str) -> str:
    """``memledger demo``'s output, the demo run under ``tenant`` on the session's database."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.setenv("DATABASE_URL", database.env["DATABASE_URL"])
        patch.setattr(demo, "DEMO_TENANT", tenant)
        assert demo.demo_command(argparse.Namespace()) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def shown(database: TestDatabase) -> tuple[str, str]:
    """(the demo's tenant, what the demo printed)."""
    tenant = f"demo-{uuid.uuid4().hex[:10]}"
    return tenant, run_demo(database, tenant)


def block_kinds(stdout: str) -> Counter[str]:
    block = stdout.split(TEXT_BEGIN, 1)[1].split(TEXT_END, 1)[0]
    return Counter(ITEM.findall(block))


def test_the_demo_prints_its_tenant_and_scopes(shown: tuple[str, str]) -> None:
    tenant, stdout = shown
    assert f"tenant: {tenant};" in stdout
    assert "--project phoenix --user alice" in stdout


def test_the_demo_block_count_equals_the_items_it_shows(shown: tuple[str, str]) -> None:
    _, stdout = shown
    holds = HOLDS.search(stdout)
    assert holds is not None, stdout
    said = Counter({kind: int(n) for n, kind in (part.split(" ", 1) for part in holds[1].split(", "))})
    shown_kinds = block_kinds(stdout)
    plural = {"fact": "facts", "entity": "entities", "relationship": "relationships", "turn": "turns"}
    assert said == Counter({plural[kind] if n != 1 else kind: n for kind, n in shown_kinds.items()})


def test_the_demo_graph_count_equals_its_lines(shown: tuple[str, str]) -> None:
    _, stdout = shown
    graph = GRAPH.search(stdout)
    assert graph is not None, stdout
    assert int(graph[1]) == len(graph[2].splitlines()) > 0


def test_the_demo_says_events_applied_not_rows(shown: tuple[str, str]) -> None:
    _, stdout = shown
    assert "events applied: " in stdout
    assert not re.search(r"facts \+\d+", stdout)


def test_the_demos_context_command_asks_the_same_question(shown: tuple[str, str]) -> None:
    tenant, stdout = shown
    line = next(line for line in stdout.splitlines() if line.strip().startswith("memledger context '"))
    words = shlex.split(line)
    assert words[2] == demo.REQUEST
    assert words[words.index("--tenant") + 1] == tenant
    assert words[words.index("--project") + 1] == "phoenix" and words[words.index("--user") + 1] == "alice"
