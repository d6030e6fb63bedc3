"""What a person's newer words replace in their graph: "I now work at Globex."

A person's own personal fact or preference on a key they spoke of before supersedes
the older fact (the facts fold), but their relationship to the older fact's value
stayed: after "I work at Acme." and later "I now work at Globex." (or "I left Acme."),
the graph still said the user is PART_OF Acme, and a block showed it beside the new
employer. The extraction worker now retracts that edge as part of the newer turn's
extraction (``retractions``), as it retracts what a person asks to forget: the events
say it, so a rebuild, an as-of selection and provenance see it, and ``restore``
undoes it.

Only the speaker's own user-scope facts count, with the relation their category is
drawn from: an employer's PART_OF, a preference's PREFERS. The older facts and edges
are read from the read models and from this batch's earlier turns; one said but not
yet projected is left (its edge stays until the next such turn).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, TypeGuard

from sqlalchemy.engine import Connection

from memledger.events.catalogue import Event, FactExtracted, MemoryRetracted, RelationshipObserved
from memledger.events.keys import entity_id, normalise_name
from memledger.extraction.protocol import TurnText
from memledger.projectors import facts_queries, graph_queries

_RELATION: Final = {"personal_fact": "PART_OF", "preference": "PREFERS"}
REASON: Final = "the speaker said something newer in its place"


def retractions(
    conn: Connection, turn: TurnText, written: Iterable[Event], earlier: Iterable[Event]
) -> list[MemoryRetracted]:
    """Retractions of the speaker's edges to what their facts among ``written`` (this
    turn's events) replace. ``earlier``: this batch's events before the turn's."""
    user = turn.scopes.user
    if not user or turn.speaker != user:
        return []  # edges start from the turn's user: only theirs, said by them
    newer = {e.key: e for e in written if _own(e, user) and e.value}
    if not newer:
        return []
    before = list(earlier)
    older: dict[str, set[str]] = {}  # relation -> the replaced values, normalised
    rows = facts_queries.live_and_superseded(conn, turn.tenant_id, {("user", user)})
    said = [(r.key, r.value) for r in rows if r.status != "superseded"]
    said += [(e.key, e.value) for e in before if _own(e, user)]
    for key, value in said:
        new = newer.get(key)
        if new is None or not value:
            continue
        now = _values(new.value)
        left = {v.removeprefix("left ") for v in now if v.startswith("left ")}
        # "I left Globex." ends Globex alone, whatever else was said; else what is no longer said.
        gone = _values(value) & left if left else _values(value) - now
        older.setdefault(_RELATION[new.category], set()).update(gone)
    if not any(older.values()):
        return []
    source = entity_id("user", user)
    edges = [
        (key, relation, target)
        for relation in sorted(older)
        for key, target in graph_queries.live_edges_from(conn, turn.tenant_id, source, relation)
    ]
    edges += [
        (e.relationship_id, e.relation, e.target_name)
        for e in before
        if isinstance(e, RelationshipObserved) and e.source_type == "user" and e.source_name == user
    ]
    keys = sorted({key for key, relation, target in edges if normalise_name(target) in older.get(relation, ())})
    return [
        MemoryRetracted(item_id=key, item_kind="relationship", reason=REASON, source_turns=(turn.turn_id,))
        for key in keys
    ]


def _own(event: Event, user: str) -> TypeGuard[FactExtracted]:
    return (
        isinstance(event, FactExtracted)
        and event.scope == "user"
        and event.scope_key == user
        and event.category in _RELATION
    )


def _values(value: str | None) -> set[str]:
    """A fact's value as the names it holds ("Vim, Emacs" holds two), normalised."""
    return {normalise_name(part) for part in (value or "").split(",") if part.strip()}
