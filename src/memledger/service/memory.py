"""Commands people and agents give memory: promote, retract, restore, resolve a conflict.

Each appends one event (to the item's own stream) and changes nothing else: the
read models follow from the ledger. A surface that has the owner's engine (the
library, the HTTP API) then calls ``read_your_write``, so the next context shows the
command: a user who says "forget that" must not find it in the next prompt.
"""

from __future__ import annotations

import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Literal

import msgspec
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from memledger.errors import InvalidCommand, InvalidField, NotFound, ProjectionFailed
from memledger.events.catalogue import (
    MAX_SLOT_ID,
    ConflictResolved,
    Event,
    ItemKind,
    MemoryPromoted,
    MemoryRestored,
    MemoryRetracted,
    PromotionKind,
    ScopeKind,
    Scopes,
)
from memledger.events.envelope import Cursor, Metadata, NewEvent
from memledger.events.keys import conflict_stream, item_stream
from memledger.extraction.policy import short_hash
from memledger.extraction.secrets import find_secret
from memledger.projectors import registry, runner, summaries
from memledger.projectors.facts import queries as facts_queries
from memledger.projectors.relationships import graph_queries
from memledger.projectors.summaries import SUMMARIES
from memledger.service import scope_ids
from memledger.store import db, event_reads, event_store
from memledger.store.event_store import AppendResult
from memledger.store.identifiers import check_identifier, check_text


def _append(engine: Engine, tenant_id: str, stream: str, event: Event, actor: str | None) -> AppendResult:
    new = NewEvent(
        event=event, event_id=f"cmd:{uuid.uuid4()}", occurred_at=datetime.now(UTC), metadata=Metadata(actor=actor)
    )
    with db.begin(engine) as tx:
        return event_store.append(tx, tenant_id, stream, [new], None)


def item_kind(engine: Engine, tenant_id: str, item_id: str) -> ItemKind:
    """Whether ``item_id`` names a fact, an entity or a relationship of the tenant."""
    check_identifier("tenant_id", tenant_id)
    check_identifier("item_id", item_id)
    with engine.connect() as conn:
        if facts_queries.by_ids(conn, tenant_id, [item_id]):
            return "fact"
        if graph_queries.entities_by_id(conn, tenant_id, [item_id]):
            return "entity"
        if graph_queries.edges_by_key(conn, tenant_id, [item_id]):
            return "relationship"
    raise NotFound(f"tenant {tenant_id!r} has no memory item {item_id!r}")


# The read model each kind of item lives in: what a command on the item changes.
READ_MODEL: dict[str, str] = {kind: name for kind, name, _ in SUMMARIES}

# How long a command waits for its read model before answering anyway. Short: the
# command is in the ledger either way, and the read model follows it (the worker's
# projectors); only the caller's next read may not show it yet.
READ_YOUR_WRITE_S = 2.0
_POLL_S = 0.02
PRECHECK_S = 0.25  # how long a retraction waits to learn the item is retracted already

log = logging.getLogger(__name__)


def read_your_write(
    owner: Engine, tenant_id: str, kind: str, stream: str, *, timeout_s: float = READ_YOUR_WRITE_S
) -> bool:
    """Bring ``kind``'s read model up to the last event of the tenant's ``stream``
    (``read_model_through``)."""
    return read_model_through(owner, tenant_id, READ_MODEL[kind], stream, timeout_s=timeout_s)


def read_model_through(
    owner: Engine, tenant_id: str, name: str, stream: str, *, timeout_s: float = READ_YOUR_WRITE_S
) -> bool:
    """Bring the read model ``name`` up to the last event of the tenant's ``stream`` (the
    command just appended); True once it shows it, False if that did not happen within
    ``timeout_s`` (a long backlog, a worker holding the batch, a failed projection, or a
    writer anywhere on the server holding gap-safe readers back).

    ``owner`` is the owner's engine: projecting writes every tenant's rows. Idempotent:
    applying is exactly once (the runner's checkpoint), so racing a worker is harmless.
    The bound is checked between batches: a batch under way (ours, or a worker's whose
    checkpoint lock ours waits for) finishes first, so it may overrun by one batch.
    """
    projector = registry.by_name(name)
    deadline = time.monotonic() + timeout_s
    try:
        runner.install(owner, projector)
        with owner.connect() as conn:
            target = _last_cursor(conn, tenant_id, stream)
        if target is None:
            return True  # nothing on the stream: nothing to wait for
        while not runner.wait_for(owner, projector, target, timeout=0):
            if time.monotonic() >= deadline:
                return False
            if not runner.run_batch(owner, projector, until=target):
                time.sleep(_POLL_S)  # the event is committed but not readable yet (an older writer is open)
    except ProjectionFailed as e:
        log.warning("read model %s is stopped, so a command shows once it is fixed: %s", projector.name, e)
        return False
    except sa_exc.DBAPIError as e:
        raise db.translate(e) from e
    return True


def _last_cursor(conn: Connection, tenant_id: str, stream: str) -> Cursor | None:
    version = event_store.stream_version(conn, tenant_id, stream)
    last = event_reads.read_stream(conn, tenant_id, stream, after_version=version - 1, limit=1) if version else []
    return last[0].cursor if last else None


ChangeStatus = Literal["retracted", "already retracted", "restored", "not retracted"]


class Change(msgspec.Struct, frozen=True, kw_only=True):
    """What a retraction or a restore did. ``appended``: False when the item already
    was as asked (nothing is recorded). ``shown``: the read model showed the result
    before the call returned (only when given the owner's engine), so the next context does."""

    kind: ItemKind
    status: ChangeStatus
    appended: bool
    shown: bool


def retract(
    engine: Engine,
    tenant_id: str,
    item_id: str,
    *,
    reason: str = "",
    actor: str | None = None,
    owner: Engine | None = None,
) -> Change:
    """Soft-delete an item (nothing is lost; ``restore`` undoes it). With ``owner``, an
    item the caught-up read model shows retracted already is left as it is (nothing
    appended: retrying is safe), and the read model shows the retraction on return."""
    return _change(engine, tenant_id, item_id, retracting=True, reason=reason, actor=actor, owner=owner)


def restore(
    engine: Engine,
    tenant_id: str,
    item_id: str,
    *,
    reason: str = "",
    actor: str | None = None,
    owner: Engine | None = None,
) -> Change:
    """Undo a retraction. With ``owner``, an item the caught-up read model does not
    show retracted is left as it is (nothing appended: history never holds a restore
    without a retraction before it), and the read model shows the restore on return."""
    return _change(engine, tenant_id, item_id, retracting=False, reason=reason, actor=actor, owner=owner)


def _change(
    engine: Engine,
    tenant_id: str,
    item_id: str,
    *,
    retracting: bool,
    reason: str,
    actor: str | None,
    owner: Engine | None,
) -> Change:
    """Retract or restore. Without ``owner`` the read model cannot be caught up, so its
    state is not trusted to skip the command: it is appended (as a retry would be)."""
    kind = item_kind(engine, tenant_id, item_id)
    stream = item_stream(item_id)
    # Trusted to skip the command only if it catches up at once; under lag the command is
    # appended (harmless: a retry), and only the wait after it is the caller's.
    fresh = owner is not None and read_your_write(owner, tenant_id, kind, stream, timeout_s=PRECHECK_S)
    if fresh and _is_retracted(engine, tenant_id, kind, item_id) == retracting:
        return Change(
            kind=kind, status="already retracted" if retracting else "not retracted", appended=False, shown=True
        )
    command = MemoryRetracted if retracting else MemoryRestored
    _append(engine, tenant_id, stream, command(item_id=item_id, item_kind=kind, reason=reason), actor)
    shown = owner is not None and read_your_write(owner, tenant_id, kind, stream)
    return Change(kind=kind, status="retracted" if retracting else "restored", appended=True, shown=shown)


def _is_retracted(engine: Engine, tenant_id: str, kind: str, item_id: str) -> bool:
    """Whether the item's read model holds it retracted."""
    with engine.connect() as conn:
        return summaries.status(conn, kind, tenant_id, item_id) == "retracted"


def promotion_shown(owner: Engine, tenant_id: str, memory_id: str) -> bool:
    """``read_your_write`` for a promotion that returned ``memory_id``."""
    return read_your_write(owner, tenant_id, "fact", item_stream(memory_id))


def resolution_shown(owner: Engine, tenant_id: str, conflict_id: str) -> bool:
    """``read_your_write`` for a resolution of ``conflict_id`` (conflicts live with the facts)."""
    return read_your_write(owner, tenant_id, "fact", conflict_stream(conflict_id))


def promote(
    engine: Engine,
    tenant_id: str,
    *,
    kind: PromotionKind,
    scope: ScopeKind,
    scopes: Scopes,
    memory_id: str | None = None,
    statement: str | None = None,
    key: str | None = None,
    actor: str | None = None,
) -> str:
    """Copy a memory (or a new statement) to a longer-lived scope; returns the new id.
    A memory is promoted in its own words, citing its turns: a ``statement`` that differs
    from them is refused, as is a ``scope`` that is none of the four (InvalidCommand). A fact
    of a session or a user scope is promoted only by a caller naming that session or user
    in ``scopes``; for anyone else it does not exist (NotFound).

    Explicit promotion always works, whatever the tenant's automatic-promotion switch.
    The target scope's key is given raw (or as the stored id we showed) and stored hashed.
    """
    _check_request(tenant_id, scope, memory_id, statement, key)
    scopes = scope_ids.stored_scopes(engine, tenant_id, scopes)
    scope_key = getattr(scopes, scope)
    if not scope_key:
        raise InvalidCommand(f"promotion to the {scope} scope needs the {scope} scope key")
    source_turns: tuple[str, ...] = ()
    if memory_id is not None:
        fact = _fact_to_promote(engine, tenant_id, scopes, memory_id, statement)
        statement, key, source_turns = fact.statement, key or fact.key, tuple(fact.source_turns)
    if not statement or not statement.strip():
        raise InvalidCommand("promotion needs a memory_id or a statement")
    key = _stored_key(kind, statement, key, of_fact=memory_id is not None)
    new_id = "promoted-" + short_hash(scope, scope_key, key, statement)
    event = MemoryPromoted(
        memory_id=new_id,
        kind=kind,
        scope=scope,
        scope_key=scope_key,
        key=key,
        statement=statement,
        promoted_from=memory_id,
        source_turns=source_turns,
    )
    _append(engine, tenant_id, item_stream(new_id), event, actor)
    return new_id


def _check_request(tenant_id: str, scope: str, memory_id: str | None, statement: str | None, key: str | None) -> None:
    """Refuse a promotion's input before anything is read: the ids, the scope's kind, and
    the words sent (their length first: a long text need not be scanned for secrets)."""
    check_identifier("tenant_id", tenant_id)
    if scope not in scope_ids.KINDS:
        raise InvalidCommand(f"scope must be one of {', '.join(scope_ids.KINDS)}, not {scope!r}")
    if memory_id is not None:
        check_identifier("memory_id", memory_id)
    if statement is not None:
        _check_statement_length(statement)
    for field, text in (("statement", statement), ("key", key)):
        if text is not None:
            check_text(field, text)
            _check_no_secret(field, text)


def _fact_to_promote(
    engine: Engine, tenant_id: str, scopes: Scopes, memory_id: str, statement: str | None
) -> facts_queries.FactHit:
    """The fact ``memory_id`` as ``scopes`` (stored) may see it; NotFound if they may not,
    InvalidCommand if ``statement`` puts other words in its turns' mouth."""
    with engine.connect() as conn:
        found = facts_queries.by_ids(conn, tenant_id, [memory_id])
    if not found:
        raise NotFound(f"tenant {tenant_id!r} has no fact {memory_id!r}")
    fact = found[0]
    if fact.scope in _PRIVATE and getattr(scopes, fact.scope) != fact.scope_key:
        # A session's or a person's own memory is theirs to share: as if it did not exist.
        raise NotFound(f"tenant {tenant_id!r} has no fact {memory_id!r} that these scopes may see")
    if statement is not None and statement.strip() != fact.statement.strip():
        # The promoted fact cites the fact's turns: other words would be put in their mouth.
        raise InvalidCommand(
            "give a memory_id or a statement, not both: a promoted fact keeps the words its turns said "
            "(promote a new statement without memory_id)"
        )
    return fact


def _stored_key(kind: str, statement: str, key: str | None, *, of_fact: bool) -> str:
    """The key the promotion stores, once the words it stores pass the checks again: a
    fact's own (``of_fact``: failures name its memory_id) were stored before the length
    cap, and before the guard knew its kind."""
    _check_statement_length(statement, of_fact=of_fact)
    key = key or derived_key(kind, statement)
    _check_no_secret("statement", statement, of_fact=of_fact)
    _check_no_secret("key", key, of_fact=of_fact)
    return key


_PRIVATE = ("session", "user")  # scopes whose facts only their own requests read

# The longest statement a promotion stores: what the LLM extractor lets a fact say, so
# any extracted fact can be promoted. A promoted memory is served in every later context
# of its scope: a much longer one would take most of a block's budget.
MAX_PROMOTED_STATEMENT = 2000


def _check_statement_length(statement: str, *, of_fact: bool = False) -> None:
    if len(statement) > MAX_PROMOTED_STATEMENT:
        said = (
            f"is {len(statement):,} characters long, above the {MAX_PROMOTED_STATEMENT:,} a promoted "
            "memory may hold: promote a shorter statement"
        )
        raise _refusal("statement", said, of_fact=of_fact)


def _check_no_secret(field: str, text: str, *, of_fact: bool = False) -> None:
    """InvalidField if ``text`` looks like a credential. A promoted memory is served at
    full confidence in every later context of its scope, so promotion gets the same guard
    as extraction; the message names the kind, never the value."""
    kind = find_secret(text)
    if kind is not None:
        said = f"looks like it holds a credential ({kind}); secrets are not stored as memories"
        raise _refusal(field, said, of_fact=of_fact)


def _refusal(field: str, said: str, *, of_fact: bool) -> InvalidField:
    """``field`` ``said``, naming the field sent: the ``memory_id`` when the text is the
    fact's (promoted by id), not the caller's."""
    return InvalidField("memory_id", f"names a fact whose {field} {said}") if of_fact else InvalidField(field, said)


# A derived key is a short label of the statement: a long first word (a URL, a pasted
# token) must not make it longer than a key may be (ShortText, 1,000 characters).
DERIVED_KEY_CHARS = 200


def derived_key(kind: str, statement: str) -> str:
    """The key of a promotion given none: its kind and the statement's first words."""
    key = f"{kind.replace('_', ' ')}: {' '.join(statement.lower().split()[:6])}"
    return key[:DERIVED_KEY_CHARS].rstrip()


def resolve_conflict(
    engine: Engine,
    tenant_id: str,
    conflict_id: str,
    chosen_memory_id: str,
    *,
    reason: str = "",
    actor: str | None = None,
) -> None:
    """Record a person's choice of which fact stands in a conflict."""
    check_identifier("tenant_id", tenant_id)
    check_identifier("conflict_id", conflict_id, max_length=MAX_SLOT_ID)  # a slot: scope, its key, a fact's key
    check_identifier("chosen_memory_id", chosen_memory_id)
    with engine.connect() as conn:
        found = facts_queries.by_ids(conn, tenant_id, [chosen_memory_id])
        # whether the conflict exists matters only for a fact of another slot
        elsewhere = bool(found) and found[0].slot_id != conflict_id
        known = elsewhere and facts_queries.has_conflict(conn, tenant_id, conflict_id)
    if not found:
        raise NotFound(f"tenant {tenant_id!r} has no fact {chosen_memory_id!r} (for conflict {conflict_id!r})")
    if elsewhere:
        if not known:
            raise NotFound(f"tenant {tenant_id!r} has no conflict {conflict_id!r}")
        raise InvalidCommand(f"{chosen_memory_id!r} is not a fact of conflict {conflict_id!r}")
    event = ConflictResolved(
        conflict_id=conflict_id, chosen_memory_id=chosen_memory_id, reason=reason, resolved_by=actor
    )
    _append(engine, tenant_id, conflict_stream(conflict_id), event, actor)


def conflicts(engine: Engine, tenant_id: str, state: str | None = None) -> list[facts_queries.ConflictView]:
    """The tenant's conflicts, optionally only those in one state."""
    check_identifier("tenant_id", tenant_id)
    with engine.connect() as conn:
        return facts_queries.list_conflicts(conn, tenant_id, states=None if state is None else [state])
