"""What ``memledger context replay`` says after erasures: why the block may not match."""

from __future__ import annotations

import pytest

from memledger.cli.context_commands import _erasures_note
from memledger.events.catalogue import ContextServed, Scopes
from memledger.formatting import render
from memledger.selection.types import Selection
from memledger.service.context_replay import Replay

SERVED = ContextServed(
    request="what do I use?",
    scopes=Scopes(user="u"),
    item_ids=(),
    selector_version="2",
    formatter_version="3",
    block_hash="0" * 64,
)
BLOCK = render(Selection(request="what do I use?", empty_reason="nothing"))


@pytest.mark.parametrize(
    ("erasures", "record_erased", "erased_items", "said"),
    [
        (1, True, (), "1 erasure since took this record's request and items"),
        (2, False, ("tool:x", "fact-1"), "2 erasures since took 2 of its items out of the ledger"),
        (1, False, (), "1 erasure since; none took an item of this block out of the ledger"),
    ],
)
def test_the_note_says_what_the_erasures_took(
    erasures: int, record_erased: bool, erased_items: tuple[str, ...], said: str
) -> None:
    replayed = Replay(SERVED, BLOCK, False, erasures, record_erased=record_erased, erased_items=erased_items)
    assert _erasures_note(replayed).startswith(said)
