"""Who said each chosen fact of a shared scope.

A fact of a session, project or organisation reaches everyone in it, and its
statement is in its speaker's words: Grace's "I prefer Vim over Emacs." in a
project's memory reads, in Ada's prompt, as Ada's own preference. Each chosen
fact of those scopes carries the stored ids of the users who said it (its
source turns' subjects), so the block can say "said by another user" (formatter
version 4), and so does each turn a search finds. A user-scope fact is the
request's user's own.

The voices come from ``projectors.turns.voices``, which reads them from the ledger:
the turns are immutable and precede the facts, so a replay finds the speakers the
live selection found.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from sqlalchemy.engine import Connection

from memledger.projectors.turns.voices import Voice, voices_of
from memledger.selection.types import SelectedItem, TurnRef

SHARED = frozenset({"session", "project", "org"})


def attach(
    conn: Connection, tenant_id: str, items: Sequence[SelectedItem], *, every: bool = False
) -> tuple[SelectedItem, ...]:
    """``items`` with ``said_by`` and ``speakers`` set on each fact of a shared scope
    and each turn, and ``cited`` (each source turn's speaker and time) on those, or on
    every item with ``every`` (search). One statement, or none when there is no such item."""
    turns = {turn for item in items if every or _shared(item) for turn in item.source_turns}
    if not turns:
        return tuple(items)
    voices = voices_of(conn, tenant_id, turns)
    return tuple(_with_voices(item, voices) if every or _shared(item) else item for item in items)


def _shared(item: SelectedItem) -> bool:
    return (item.kind == "fact" and item.scope in SHARED) or item.kind == "turn"


def _with_voices(item: SelectedItem, voices: dict[str, Voice]) -> SelectedItem:
    heard = [voices[t] for t in item.source_turns if t in voices]
    cited = tuple(
        TurnRef(turn_id=t, speaker=voices[t].name, said_at=voices[t].said_at) if t in voices else TurnRef(turn_id=t)
        for t in item.source_turns
    )
    changes: dict[str, object] = {"cited": cited}
    if _shared(item):
        said_by = tuple(sorted({v.subject for v in heard if v.subject}))
        if said_by:
            changes["said_by"] = said_by
            changes["speakers"] = tuple(sorted({v.name for v in heard if v.name}))
    return msgspec.structs.replace(item, **changes)
