"""Which turns, entities and relationships a request may be shown.

Facts live in one scope and are read only from the request's scopes. Turns, and
the entities and relationships drawn from them, are the tenant's, but a person's
words belong where they were said: Ada's "I'm seeing my therapist on Fridays",
said in project Apollo, has no place in the prompt of Carol working on Phoenix
when the two share nothing but the tenant. So such an item is shown only when
one of its source turns shares a scope key (session, project, user or
organisation) with the request. A turn recorded with no scope key is the
tenant's, and a request with no scope key (an operator's search) sees all.
Only what is known to come from other people's scopes is hidden: an item citing
no turn the ledger holds is shown as before.

The turns' scopes come from ``projectors.turns.voices``, which reads them from the
ledger: turns are immutable, so a selection as of a past moment keeps what the live
selection kept.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.engine import Connection

from memledger.events.catalogue import Scopes
from memledger.projectors.turns.voices import scopes_of
from memledger.selection.candidates import scope_pairs
from memledger.selection.rank import Candidate

GUARDED = frozenset({"turn", "entity", "relationship"})


def keep_visible(conn: Connection, tenant_id: str, scopes: Scopes, found: Iterable[Candidate]) -> list[Candidate]:
    """``found`` without the turns, entities and relationships none of whose source turns
    shares a scope key with ``scopes`` (one statement, or none when nothing is guarded)."""
    found = list(found)
    guarded = (t for c in found if c.item.kind in GUARDED for t in c.item.source_turns)
    hidden = hidden_turns(conn, tenant_id, scopes, guarded)
    return [c for c in found if c.item.kind not in GUARDED or shown(c.item.source_turns, hidden)]


def hidden_turns(conn: Connection, tenant_id: str, scopes: Scopes, turns: Iterable[str]) -> set[str]:
    """Those of ``turns`` that share no scope key with ``scopes`` (none for a request
    with no scope key: an operator's sees all)."""
    wanted, guarded = set(scope_pairs(scopes)), set(turns)
    if not wanted or not guarded:
        return set()
    recorded = scopes_of(conn, tenant_id, guarded)
    return {turn for turn, keys in recorded.items() if keys and not keys & wanted}


def shown(source_turns: Iterable[str], hidden: set[str]) -> bool:
    """Unless every source turn is one the request may not see. A source turn the
    ledger does not hold as a turn (an item made without one) hides nothing."""
    turns = list(source_turns)
    return not turns or any(turn not in hidden for turn in turns)
