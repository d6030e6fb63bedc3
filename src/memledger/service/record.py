"""Recording turns: the agent's hot path. It appends and returns; nothing waits on extraction."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import msgspec
from sqlalchemy.engine import Engine

from memledger.errors import InvalidIdentifier, Refused
from memledger.events.catalogue import Role, Scopes, TurnRecorded
from memledger.events.envelope import Metadata, NewEvent
from memledger.service import scope_ids, tenant_settings
from memledger.store import db, event_store
from memledger.store.event_store import AppendResult


class TurnInput(msgspec.Struct, frozen=True, kw_only=True):
    """A turn as a caller gives it. ``turn_id`` is the caller's own id, if it has one."""

    role: Role
    text: str
    scopes: Scopes = Scopes()
    turn_id: str | None = None
    occurred_at: datetime | None = None
    subject: str | None = None
    actor: str | None = None


def conversation_stream(scopes: Scopes) -> str:
    """The stream a conversation's turns go to: one per session (give the stored scopes)."""
    return f"conversation:{scopes.session or 'default'}"


def to_new_event(turn: TurnInput, *, now: datetime, make_id: Callable[[], object]) -> NewEvent:
    """The event for a turn. The event id comes from the turn id, so re-recording
    the same turn (a retry) is idempotent."""
    if turn.turn_id is not None and not turn.turn_id.strip():
        # a blank id would silently become a random one: a retry would be recorded twice
        raise InvalidIdentifier("turn_id", turn.turn_id, "must not be empty or blank (None: memledger makes one)")
    turn_id = turn.turn_id or str(make_id())
    event = TurnRecorded(
        turn_id=turn_id,
        role=turn.role,
        text=turn.text,
        scopes=turn.scopes,
        subject=turn.subject or turn.scopes.user,
    )
    return NewEvent(
        event=event,
        event_id=f"turn:{turn_id}",
        occurred_at=turn.occurred_at or now,
        metadata=Metadata(actor=turn.actor),
    )


def stored_turn(key: scope_ids.TenantKey, turn: TurnInput) -> TurnInput:
    """``turn`` with its scope keys and subject as ``key``'s tenant stores them."""
    scopes = key.stored_scopes(turn.scopes)
    subject = key.stored_id("user", turn.subject, field="subject") if turn.subject else scopes.user
    return msgspec.structs.replace(turn, scopes=scopes, subject=subject)


def record_turns(
    engine: Engine,
    tenant_id: str,
    turns: Sequence[TurnInput],
    *,
    max_payload_bytes: int = event_store.DEFAULT_MAX_PAYLOAD_BYTES,
    notify: bool = False,
) -> list[AppendResult]:
    """Append turns, one conversation stream per session, in one transaction.

    All or nothing: a bad turn raises and no turn of the call is written. Turns
    recorded before under the same ids (a client resending its buffer with new turns
    after a timeout) keep their positions, and only the new ones are appended. Scope keys
    and subjects are stored as the tenant stores them (``scope_ids``): the session's
    stored id names the stream, and the subject defaults to the stored user.
    """
    for turn in turns:  # refuse a bad id before the tenant's key is looked up (or made)
        scope_ids.check_scopes(turn.scopes)
        if turn.subject:
            scope_ids.check_raw("subject", turn.subject)
    key = scope_ids.key_for(engine, tenant_id)
    now = datetime.now(UTC)
    by_stream: dict[str, list[NewEvent]] = {}
    for turn in turns:
        stored = stored_turn(key, turn)
        new = to_new_event(stored, now=now, make_id=uuid.uuid4)
        by_stream.setdefault(conversation_stream(stored.scopes), []).append(new)
    with db.begin(engine) as tx:
        if not tenant_settings.load(tx, tenant_id).capture:
            raise Refused(
                "capture_off", f"capture is switched off for tenant {tenant_id!r}: the turns were not recorded"
            )
        return [
            event_store.append_resent(tx, tenant_id, stream, batch, max_payload_bytes=max_payload_bytes, notify=notify)
            for stream, batch in sorted(by_stream.items())
        ]
