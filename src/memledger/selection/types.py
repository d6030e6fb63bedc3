"""What the selector returns and the formatter renders. Pure data."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from memledger.events.catalogue import ScopeKind, Scopes

ItemKind = Literal["fact", "entity", "relationship", "turn"]
ITEM_KINDS: tuple[ItemKind, ...] = ("fact", "entity", "relationship", "turn")


class TurnRef(msgspec.Struct, frozen=True, kw_only=True):
    """A turn an item cites: its id, who said it (their name, when the turn was
    recorded with one) and when."""

    turn_id: str
    speaker: str | None = None
    said_at: datetime | None = None


class SelectedItem(msgspec.Struct, frozen=True, kw_only=True):
    """One memory chosen for a prompt, with why it was chosen and where it came from."""

    item_id: str
    kind: ItemKind
    text: str
    confidence: float
    score: float
    scope: ScopeKind | None = None
    scope_key: str | None = None
    category: str | None = None
    conflicted: bool = False
    conflict_id: str | None = None
    source_turns: tuple[str, ...] = ()
    valid_from: datetime | None = None
    reasons: tuple[str, ...] = ()
    # The stored user ids of whoever said it (a fact of a shared scope: speakers.py).
    said_by: tuple[str, ...] = ()
    # Their names, where the turns were recorded with one (speakers.py).
    speakers: tuple[str, ...] = ()
    # Each cited turn with its speaker and time, in ``source_turns`` order (speakers.py).
    cited: tuple[TurnRef, ...] = ()


class Selection(msgspec.Struct, frozen=True, kw_only=True):
    """The items chosen for one request, most important first; empty with a reason
    when the selector had nothing to give or failed open. ``scopes``: the request's
    scopes as stored, which the block calls "the user", "this project" and so on."""

    request: str
    items: tuple[SelectedItem, ...] = ()
    empty_reason: str | None = None
    as_of: str | None = None
    scopes: Scopes | None = None
