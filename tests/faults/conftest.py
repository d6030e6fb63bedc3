"""Fixtures of the faults tests: a PostgreSQL server of their own, which they may
stop, crash, restart and starve of disk (the shared session server is never touched)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.own_server import OwnServer


@pytest.fixture(scope="session")
def own_server() -> Iterator[OwnServer]:
    """Started once for the faults tests; each test makes databases of its own on it."""
    server = OwnServer()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg(own_server: OwnServer) -> Iterator[OwnServer]:
    """The faults server, up again at the end of the test whatever the test did to it."""
    yield own_server
    if not own_server.running():
        own_server.start()
