"""Context selections take turns (service/turns.py): one that waits for a turn waits
within its deadline, and past it fails open, as any selection that misses its deadline
does (recorded, with the reason)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine

from memledger.events.catalogue import Scopes
from memledger.service import context, turns

SCOPES = Scopes(session="s1", project="phoenix", user="ada")


@pytest.fixture
def one_at_a_time() -> Iterator[turns.Turns]:
    turns.set_limit(1)
    try:
        yield turns.selections()
    finally:
        turns.set_limit(turns.default_limit())


def test_a_selection_that_gets_no_turn_within_its_deadline_fails_open_and_is_recorded(
    engine: Engine, tenant: str, one_at_a_time: turns.Turns
) -> None:
    request = context.SelectRequest(tenant, SCOPES, "What do I use for Phoenix?", deadline_ms=200)
    assert one_at_a_time.acquire(0)  # another caller's selection holds the only turn
    try:
        started = time.monotonic()
        selection = context.select(engine, request)
        waited = time.monotonic() - started
        served = context.build_context(engine, request)
    finally:
        one_at_a_time.release()

    assert selection.empty_reason == "memory unavailable (deadline exceeded)"
    assert 0.19 <= waited < 5.0
    assert served.selection.empty_reason == "memory unavailable (deadline exceeded)"
    assert served.event_id, "the failed-open block is recorded"


def test_a_selection_whose_turn_comes_within_its_deadline_is_served(
    engine: Engine, tenant: str, one_at_a_time: turns.Turns
) -> None:
    request = context.SelectRequest(tenant, SCOPES, "What do I use for Phoenix?", deadline_ms=10_000)
    assert one_at_a_time.acquire(0)
    releaser = threading.Timer(0.2, one_at_a_time.release)
    releaser.start()
    started = time.monotonic()
    selection = context.select(engine, request)
    waited = time.monotonic() - started
    releaser.join()

    assert selection.empty_reason == "no memory matches this request"  # selected: the tenant has no memory
    assert waited >= 0.19
    assert one_at_a_time.acquire(0), "the selection gave its turn back"
    one_at_a_time.release()
