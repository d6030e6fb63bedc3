"""The CLI's graph and search name stored (hashed) scope ids in words: the caller's own
user is "the user", another "another user (1234abcd)"; never ``hid.user.<hex>``."""

from __future__ import annotations

import contextlib
import io
import uuid

import pytest

from memledger.cli import main
from tests.conftest import TestDatabase
from tests.e2e.test_demo_output import run_demo


@pytest.fixture(scope="module")
def tenant(database: TestDatabase) -> str:
    """A tenant holding the demo's conversation, its scope ids stored hashed."""
    name = f"labels-{uuid.uuid4().hex[:10]}"
    run_demo(database, name)
    return name


def cli(database: TestDatabase, *argv: str) -> str:
    """``memledger ARGV``'s output, run in this process on the session's database."""
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.setenv("DATABASE_URL", database.env["DATABASE_URL"])
        assert main.main(list(argv)) == 0
    return out.getvalue()


def test_graph_me_names_the_caller_the_user(database: TestDatabase, tenant: str) -> None:
    shown = cli(database, "graph", "me", "--tenant", tenant, "--user", "alice")
    assert "Dave WORKS_WITH the user" in shown
    assert "hid." not in shown


def test_graph_names_another_users_id_by_its_first_digits(database: TestDatabase, tenant: str) -> None:
    shown = cli(database, "graph", "Dave", "--tenant", tenant)
    assert "Dave WORKS_WITH another user (" in shown
    assert "hid." not in shown


def test_search_shows_texts_without_stored_ids(database: TestDatabase, tenant: str) -> None:
    shown = cli(database, "search", "who works with me", "--tenant", tenant, "--user", "alice", "--project", "phoenix")
    texts = [line.split(": ", 1)[1] for line in shown.splitlines()]  # after the cited item id
    assert any("WORKS_WITH the user" in text for text in texts), shown
    assert not [text for text in texts if "hid." in text]
