"""Recording turns: the agent's hot path. It appends and returns; nothing waits on extraction."""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import msgspec
from sqlalchemy.engine import Engine

from memledger.errors import InvalidField, InvalidIdentifier, Refused
from memledger.events.catalogue import Role, Scopes, TurnRecorded
from memledger.events.envelope import Metadata, NewEvent
from memledger.service import scope_ids, tenant_settings
from memledger.store import db, event_store
from memledger.store.event_store import AppendResult


class TurnInput(msgspec.Struct, frozen=True, kw_only=True):
    """A turn as a caller gives it. ``turn_id`` is the caller's own id, if it has one;
    ``speaker`` the name a block shows for who said it (``speaker_name``)."""

    role: Role
    text: str
    scopes: Scopes = Scopes()
    turn_id: str | None = None
    occurred_at: datetime | None = None
    subject: str | None = None
    actor: str | None = None
    speaker: str | None = None


# A person's name: one to four words, each a capital letter then letters, with
# hyphens, apostrophes or dots inside ("Caroline", "Mary-Jane O'Neil", "Jae-won").
_PERSON_NAME = re.compile(r"[^\W\d_][^\W\d_'\u2019.-]*(?:['\u2019.-][^\W\d_]+)*\.?")


def speaker_name(turn: TurnInput) -> str | None:
    """Who said ``turn``, as a block names them: its ``speaker``, else a user's raw
    user key when that reads as a person's name (a conversation recorded with each
    person's name as their user key), never an id of another shape (an account id,
    an e-mail address: those are stored only as keyed hashes, ``scope_ids``)."""
    if turn.speaker is not None:
        return scope_ids.check_raw("speaker", turn.speaker).strip()
    raw = turn.scopes.user
    if turn.role != "user" or raw is None or scope_ids.is_stored(raw):
        return None
    words = raw.split(" ")
    if not 1 <= len(words) <= 4 or len(raw) > 60:
        return None
    named = all(_PERSON_NAME.fullmatch(w) and w[0].isupper() and not w.isupper() for w in words)
    return raw if named else None


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
        speaker=turn.speaker,
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


def check_turns(turns: Sequence[TurnInput], *, indexed: bool | None = None) -> None:
    """Refuse turns with a bad one, naming its field as the caller sent it: with
    ``indexed`` (default: when there is more than one turn) as ``turns.<index>.<field>``,
    the index in ``turns`` (the store numbers its events per stream, and would name
    ``events[1].event_id`` for ``turns.3.turn_id``), else as ``<field>``."""
    if indexed is None:
        indexed = len(turns) > 1
    first_of: dict[str, int] = {}
    for index, turn in enumerate(turns):
        try:
            _check_turn(turn)
        except (InvalidIdentifier, InvalidField) as e:
            if not indexed:
                raise
            raise dataclasses.replace(e, field=f"turns.{index}.{e.field}") from None
        if turn.turn_id is not None:
            first = first_of.setdefault(turn.turn_id, index)
            if first != index:
                raise InvalidField(f"turns.{index}.turn_id", f"{turn.turn_id!r} is also the id of turns.{first}")


def _check_turn(turn: TurnInput) -> None:
    scope_ids.check_scopes(turn.scopes)
    if turn.subject:
        scope_ids.check_raw("subject", turn.subject)
    if turn.speaker is not None:
        scope_ids.check_raw("speaker", turn.speaker)
    if turn.occurred_at is not None and turn.occurred_at.utcoffset() is None:
        raise InvalidField("occurred_at", "needs a timezone (e.g. 2026-11-21T10:42:00+00:00)")


def record_turns(
    engine: Engine,
    tenant_id: str,
    turns: Sequence[TurnInput],
    *,
    max_payload_bytes: int = event_store.DEFAULT_MAX_PAYLOAD_BYTES,
    notify: bool = False,
    indexed: bool | None = None,
) -> list[AppendResult]:
    """Append turns, one conversation stream per session, in one transaction.

    All or nothing: a bad turn raises and no turn of the call is written. Turns
    recorded before under the same ids (a client resending its buffer with new turns
    after a timeout) keep their positions, and only the new ones are appended. Scope keys
    and subjects are stored as the tenant stores them (``scope_ids``): the session's
    stored id names the stream, and the subject defaults to the stored user. A bad
    turn's error names its field as ``check_turns`` does (``indexed``).
    """
    check_turns(turns, indexed=indexed)  # before the tenant's key is looked up (or made)
    key = scope_ids.key_for(engine, tenant_id)
    now = datetime.now(UTC)
    by_stream: dict[str, list[NewEvent]] = {}
    for turn in turns:
        stored = stored_turn(key, msgspec.structs.replace(turn, speaker=speaker_name(turn)))
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
