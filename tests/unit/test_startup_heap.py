"""A server freezes what its startup built, so that a full collection during a request
walks only what requests made (``bootstrap.freeze_startup_heap``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from memledger import bootstrap


@pytest.fixture
def unfrozen_after() -> Iterator[None]:
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("unfrozen_after")
def test_what_startup_built_is_out_of_the_collectors_reach_and_what_follows_is_not() -> None:
    built = [[n] for n in range(1000)]
    bootstrap.freeze_startup_heap()
    later = [[n] for n in range(10)]
    walked = {id(o) for o in gc.get_objects()}
    assert gc.get_freeze_count() >= len(built)
    assert not any(id(item) in walked for item in built)
    assert all(id(item) in walked for item in later)
