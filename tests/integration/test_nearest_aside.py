"""The nearest facts on a connection of their own (service/nearest_aside.py): read
beside the facts statement only when the process selects nothing else and a
connection is free, and the selection is the same either way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes
from memledger.library import MemoryLedger
from memledger.selection.types import Selection
from memledger.service import nearest_aside
from memledger.store import db
from tests.e2e.conftest import PHOENIX_TURNS, said, select_with_vectors

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

SCOPES = Scopes(session="s1", project="phoenix", user="ada")
REQUEST = "Which datastore should the Phoenix service keep its records in?"


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[tuple[MemoryLedger, str]]:
    with said(database, "aside", PHOENIX_TURNS, SCOPES) as made:
        yield made


@pytest.fixture
def aside_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tenant of each read of the nearest facts beside a selection."""
    calls: list[str] = []
    read = nearest_aside._nearest

    def counted(engine: Engine, *args: Any) -> Any:
        calls.append(engine.get_execution_options()[db.TENANT_OPTION])  # the tenant the engine is fenced to
        return read(engine, *args)

    monkeypatch.setattr(nearest_aside, "_nearest", counted)
    return calls


def _select(library: MemoryLedger, engine: Engine, tenant: str) -> Selection:
    return select_with_vectors(library, engine, tenant, SCOPES, REQUEST)


def _shown(selection: Selection) -> list[tuple[str, float, tuple[str, ...]]]:
    return [(item.item_id, item.score, item.reasons) for item in selection.items]


def test_an_idle_process_reads_the_nearest_facts_beside_and_selects_the_same(
    ledger: tuple[MemoryLedger, str], aside_calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    library, tenant = ledger
    engine = library.database.for_tenant(tenant)
    _select(library, engine, tenant)  # the model loaded, the request's vector cached
    aside_calls.clear()

    beside = _select(library, engine, tenant)
    assert aside_calls == [tenant]
    with monkeypatch.context() as inline:
        inline.setattr(nearest_aside, "start", lambda *_, **__: None)
        after = _select(library, engine, tenant)

    assert beside.empty_reason is None
    assert any("vector" in reason for item in beside.items for reason in item.reasons)
    assert _shown(beside) == _shown(after)


def test_while_another_selection_runs_the_nearest_facts_are_read_on_the_selections_connection(
    ledger: tuple[MemoryLedger, str], aside_calls: list[str]
) -> None:
    library, tenant = ledger
    engine = library.database.for_tenant(tenant)
    alone = _select(library, engine, tenant)
    aside_calls.clear()
    other = library.database.selections
    assert other.acquire(0)  # another caller's selection
    try:
        shared = _select(library, engine, tenant)
    finally:
        other.release()
    assert aside_calls == []
    assert _shown(shared) == _shown(alone)


def test_with_no_connection_free_the_nearest_facts_are_read_on_the_selections_connection(
    ledger: tuple[MemoryLedger, str], aside_calls: list[str]
) -> None:
    library, tenant = ledger
    alone = _select(library, library.database.for_tenant(tenant), tenant)
    aside_calls.clear()
    one = db.create_app_engine(db.app_url(library.database.url, None), pool_size=1)
    try:
        selection = _select(library, db.for_tenant(one, tenant), tenant)
    finally:
        one.dispose()
    assert aside_calls == []
    assert _shown(selection) == _shown(alone)
