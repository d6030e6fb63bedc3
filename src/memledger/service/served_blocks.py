"""A context block as it is served: rendered within its budget, with the record of
the ``ContextServed`` event that lets an auditor replay it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from memledger.errors import InvalidCommand
from memledger.formatting import Block, render
from memledger.selection.types import Selection


def render_block(selection: Selection, **options: Any) -> Block:
    """The block, or InvalidCommand when the budget cannot hold even its frame."""
    try:
        return render(selection, **options)
    except ValueError as e:
        raise InvalidCommand(str(e)) from e


@dataclass(frozen=True)
class ServedContext:
    """A rendered block and the event that recorded it."""

    block: Block
    selection: Selection
    event_id: str
    # A model was named but its tokenizer was still loading: the estimate counted the
    # block's tokens, and the record says so (its token_model is None), for replays.
    tokens_estimated: bool = False


class ServedBlock(Block, frozen=True, kw_only=True):
    """A served block with the id of the ``ContextServed`` event that recorded it, for
    a replay ("" when the ledger could not take the record)."""

    event_id: str = ""


def served_block(served: ServedContext) -> ServedBlock:
    """``served``'s block, carrying its event id."""
    return ServedBlock(**msgspec.structs.asdict(served.block), event_id=served.event_id)
