"""Context selections under a limit (service/selection_limit.py): one that waits for a
slot waits within its deadline, and past it fails open, as any selection that misses
its deadline does (recorded, with the reason)."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes
from memledger.service import context
from memledger.service.selection_limit import SelectionLimit

SCOPES = Scopes(session="s1", project="phoenix", user="ada")


@pytest.fixture
def one_at_a_time() -> SelectionLimit:
    return SelectionLimit(1)


def test_a_selection_that_gets_no_slot_within_its_deadline_fails_open_and_is_recorded(
    engine: Engine, tenant: str, one_at_a_time: SelectionLimit
) -> None:
    request = context.SelectRequest(tenant, SCOPES, "What do I use for Phoenix?", deadline_ms=200)
    assert one_at_a_time.acquire(0)  # another caller's selection holds the only slot
    try:
        started = time.monotonic()
        selection = context.select(engine, request, limit=one_at_a_time)
        waited = time.monotonic() - started
        served = context.build_context(engine, request, limit=one_at_a_time)
    finally:
        one_at_a_time.release()

    assert selection.empty_reason == "memory unavailable (deadline exceeded)"
    assert 0.19 <= waited < 5.0
    assert served.selection.empty_reason == "memory unavailable (deadline exceeded)"
    assert served.event_id, "the failed-open block is recorded"


def test_a_selection_whose_slot_comes_within_its_deadline_is_served(
    engine: Engine, tenant: str, one_at_a_time: SelectionLimit
) -> None:
    request = context.SelectRequest(tenant, SCOPES, "What do I use for Phoenix?", deadline_ms=10_000)
    assert one_at_a_time.acquire(0)
    releaser = threading.Timer(0.2, one_at_a_time.release)
    releaser.start()
    started = time.monotonic()
    selection = context.select(engine, request, limit=one_at_a_time)
    waited = time.monotonic() - started
    releaser.join()

    assert selection.empty_reason == "no memory matches this request"  # selected: the tenant has no memory
    assert waited >= 0.19
    assert one_at_a_time.acquire(0), "the selection gave its slot back"
    one_at_a_time.release()
