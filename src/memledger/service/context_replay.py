"""Replaying a served context: the block rendered again from the ledger alone.

``ContextServed`` records which items a block held, where each read model stood,
and the formatter version and budget that rendered it; ``replay`` folds the
ledger to that moment (``history.state_at``), renders the same items with that
version and checks the hash (``memledger context replay``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import msgspec
from sqlalchemy.engine import Connection, Engine

from memledger.adapters.tokenizers import Tokenizers
from memledger.errors import InvalidCommand, NotFound
from memledger.events.catalogue import ContextServed, SubjectErased, TurnRecorded
from memledger.events.codec import tag_of
from memledger.events.envelope import Cursor, Recorded
from memledger.formatting import Block, render
from memledger.selection import items, speakers
from memledger.selection.excerpts import turn_item
from memledger.selection.types import SelectedItem, Selection
from memledger.service import history
from memledger.service.context_limits import token_counter
from memledger.service.context_recording import READ_MODELS, UNSTORABLE
from memledger.store import event_reads


@dataclass(frozen=True)
class Replay:
    """A served block rendered again from the ledger, and whether it matches.

    ``erasures_since``: how many erasures the tenant's ledger recorded after the block
    was served. An erasure takes words out of the past too, so a block that showed
    them cannot match any more: ``record_erased`` when the erasure took the record's
    own request and items (it served what the person said), ``erased_items`` the
    items it names that the ledger no longer holds (rendered without them). With no
    erasure since, a mismatch or a missing item means the ledger does not give what
    it gave then.
    """

    served: ContextServed
    block: Block
    matches: bool
    erasures_since: int = 0
    record_erased: bool = False
    erased_items: tuple[str, ...] = ()


def find_served(conn: Connection, tenant_id: str, event_id: str) -> ContextServed:
    """The ``ContextServed`` event ``event_id`` of the tenant (``NotFound`` if none)."""
    return _served_record(conn, tenant_id, event_id)[0]


def _served_record(conn: Connection, tenant_id: str, event_id: str) -> tuple[ContextServed, Recorded]:
    if not event_id or UNSTORABLE.search(event_id):  # no event can have such an id
        raise NotFound(f"no ContextServed event {event_id!r} for tenant {tenant_id!r}")
    for rec in event_reads.read_events(conn, tenant_id, [event_id]):
        if isinstance(rec.event, ContextServed):
            return rec.event, rec
    raise NotFound(f"no ContextServed event {event_id!r} for tenant {tenant_id!r}")


def replay(engine: Engine, tenant_id: str, event_id: str, tokenizers: Tokenizers | None = None) -> Replay:
    """Re-render a served block from the ledger alone and check its hash; a block counted
    by a model's tokenizer is counted again by it (``tokenizers``: the application's)."""
    with engine.connect() as conn:
        served, rec = _served_record(conn, tenant_id, event_id)
        states = _states_for(conn, tenant_id, served)
        erasures = event_reads.count_after(conn, rec.cursor, tenant_id=tenant_id, types=[tag_of(SubjectErased)])
        items, gone = [], []
        quoted = _turns_quoted(conn, tenant_id, served, states)
        for item_id, score in zip(served.item_ids, served.item_scores, strict=False):
            item = _item_from(states, item_id) or quoted.get(item_id)
            if item is None and not erasures:
                raise NotFound(f"item {item_id!r} of {event_id!r} is not in the ledger's state at that time")
            if item is None:
                gone.append(item_id)
                continue
            items.append(msgspec.structs.replace(item, score=score))
        chosen = speakers.attach(conn, tenant_id, items)
    selection = Selection(
        request=served.request,
        items=chosen,
        empty_reason=served.empty_reason,
        as_of=served.as_of,
        scopes=served.scopes,
    )
    try:  # as the recorded formatter version rendered it, not as today's would
        block = render(
            selection,
            style=served.style,
            max_chars=served.max_chars,
            max_tokens=served.max_tokens,
            count_tokens=token_counter(served.token_model, tokenizers),
            version=served.formatter_version,
        )
    except ValueError as e:
        raise InvalidCommand(f"cannot replay {event_id!r}: {e}") from e
    matches = block.sha256 == served.block_hash
    return Replay(served, block, matches, erasures, record_erased=rec.erased, erased_items=tuple(gone))


def _parse_cursor(text: str) -> Cursor:
    tx, position = text.split(":", 1)
    return Cursor(int(tx), int(position))


def _states_for(conn: Connection, tenant_id: str, served: ContextServed) -> dict[str, history.LedgerState]:
    """The ledger state each read model stood at when the block was served."""
    if served.as_of is not None:
        until: Cursor | datetime = (
            _parse_cursor(served.as_of) if "T" not in served.as_of else datetime.fromisoformat(served.as_of)
        )
        state = history.state_at(conn, tenant_id, until)
        return dict.fromkeys(READ_MODELS, state)
    by_cursor: dict[str, history.LedgerState] = {}
    out = {}
    for name in READ_MODELS:
        text = served.read_cursors.get(name, "0:0")
        if text not in by_cursor:
            by_cursor[text] = history.state_at(conn, tenant_id, _parse_cursor(text))
        out[name] = by_cursor[text]
    return out


def _turns_quoted(
    conn: Connection, tenant_id: str, served: ContextServed, states: dict[str, history.LedgerState]
) -> dict[str, SelectedItem]:
    """The turns the block quoted (its items no read model's state holds), as the
    selection quoted them for its request; an erased turn is not among them."""
    ids = [item_id for item_id in served.item_ids if _item_from(states, item_id) is None]
    recorded = event_reads.read_events(conn, tenant_id, [f"turn:{item_id}" for item_id in ids]) if ids else []
    return {
        rec.event.turn_id: turn_item(rec.event.turn_id, rec.event.text, served.request)
        for rec in recorded
        if isinstance(rec.event, TurnRecorded) and not rec.erased
    }


def _item_from(states: dict[str, history.LedgerState], item_id: str) -> SelectedItem | None:
    if (fact := states["facts"].facts.get(item_id)) is not None:
        return items.fact_item(fact)
    if (entity := states["entities"].entities.get(item_id)) is not None:
        return items.entity_item(entity)
    if (edge := states["relationships"].relationships.get(item_id)) is not None:
        return items.edge_item(edge)
    # A relationship whose key is too long to be an id is cited by the id its events carry.
    cited = (items.edge_item(edge) for edge in states["relationships"].relationships.values())
    return next((item for item in cited if item.item_id == item_id), None)
