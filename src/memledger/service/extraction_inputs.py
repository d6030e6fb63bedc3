"""What the extraction worker gives its extractor: each recorded turn as a ``TurnText``,
with its project's name and its tenant's extraction mode."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import msgspec
from sqlalchemy.engine import Connection

from memledger.events.catalogue import TurnRecorded
from memledger.events.envelope import Recorded
from memledger.extraction.heuristic import MAX_TEXT_CHARS
from memledger.extraction.protocol import TurnText
from memledger.service import scope_ids, tenant_settings


def to_turn_text(rec: Recorded) -> TurnText:
    """A recorded turn as extractors see it."""
    event = rec.event
    assert isinstance(event, TurnRecorded)
    return TurnText(
        tenant_id=rec.tenant_id,
        turn_id=event.turn_id,
        event_id=rec.event_id,
        role=event.role,
        text=event.text,
        scopes=event.scopes,
        occurred_at=rec.occurred_at,
        subject=event.subject,
    )


_CAPITALISED: Final = re.compile(r"\b[A-Z][A-Za-z]{1,39}\b")


def project_names(conn: Connection, turns: Sequence[TurnText]) -> list[TurnText]:
    """``turns``, each whose project key is stored hashed given the name a capitalised word
    of its text hashes to ("Atlas uses MongoDB." in project ``atlas``): its members name
    the project bare, and the extractor sees only the stored key. Raw keys need nothing."""
    return [_with_project_name(conn, turn) for turn in turns]


def _with_project_name(conn: Connection, turn: TurnText) -> TurnText:
    project = turn.scopes.project
    if turn.role != "user" or not project or not scope_ids.is_stored(project):
        return turn
    key = scope_ids.key_for(conn, turn.tenant_id)
    words = list(dict.fromkeys(_CAPITALISED.findall(turn.text[:MAX_TEXT_CHARS])))[:100]
    for word in words:  # as typed or lower-cased, as callers key projects
        if project in (key.stored_id("project", word.lower()), key.stored_id("project", word)):
            return msgspec.structs.replace(turn, project_name=word.lower())
    return turn


def with_modes(conn: Connection, turns: Sequence[TurnText]) -> list[TurnText]:
    """``turns``, each with its tenant's extraction mode (``extraction.modes``), if it chose one."""
    if not turns:
        return []
    settings = tenant_settings.load_many(conn, {t.tenant_id for t in turns})
    return [
        msgspec.structs.replace(t, mode=mode) if (mode := settings[t.tenant_id].extraction_mode) else t for t in turns
    ]
