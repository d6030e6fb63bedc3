"""How a tool's failure reaches the agent: a readable error that names its kind,
never the SQL or its parameters (the request's words)."""

from __future__ import annotations

import psycopg
import pytest
import sqlalchemy as sa
from mcp.server.mcpserver.exceptions import ToolError
from sqlalchemy import exc as sa_exc

from memledger.errors import NotFound
from memledger.mcp_server import _explained


def _raising(error: BaseException) -> object:
    def tool() -> None:
        raise error

    return _explained(tool)


def test_an_outage_is_database_unavailable_without_the_sql() -> None:
    """Before, a search during an outage reached the agent as a bare "Error executing tool"."""
    down = sa_exc.OperationalError(
        "SELECT text FROM turns WHERE q = %(q)s", {"q": "my secret"}, psycopg.OperationalError()
    )
    with pytest.raises(ToolError) as raised:
        _raising(down)()  # type: ignore[operator]
    assert str(raised.value) == "DatabaseUnavailable: memory cannot be reached now; try again later"


def test_another_database_error_names_its_kind_only() -> None:
    broken = sa_exc.ProgrammingError("SELECT secret_words", {}, psycopg.errors.UndefinedTable())
    with pytest.raises(ToolError) as raised:
        _raising(broken)()  # type: ignore[operator]
    assert str(raised.value) == "database error: UndefinedTable"


def test_a_ledger_error_keeps_its_message() -> None:
    with pytest.raises(ToolError, match="NotFound: no memory 'x'"):
        _raising(NotFound("no memory 'x'"))()  # type: ignore[operator]


def test_mcp_over_http_says_503_when_the_key_cannot_be_checked() -> None:
    """Before, the key check's database error escaped the middleware: a bare 500."""
    from starlette.testclient import TestClient

    from memledger.mcp_server import _KeyRequired

    async def never_reached(scope: object, receive: object, send: object) -> None:
        raise AssertionError("MCP must not see a request whose key was not checked")

    dead = sa.create_engine("postgresql+psycopg://nobody@127.0.0.1:1/none", connect_args={"connect_timeout": 2})
    try:
        client = TestClient(_KeyRequired(never_reached, dead))
        answer = client.post("/mcp", json={}, headers={"Authorization": "Bearer mlk_some-key"})
    finally:
        dead.dispose()
    assert answer.status_code == 503
    assert answer.json()["error"].startswith("DatabaseUnavailable: ")
