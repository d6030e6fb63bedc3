"""A retried append must resend the same events.

Appends are idempotent on event ids: a batch whose ids were all appended before,
to the same stream, gets its original positions and writes nothing. That makes a
retry after a lost answer safe; it also meant that an id reused for other content
(a client numbering its turns "r1", "r2" per session and restarting at "r1") was
answered "replayed" and its new content silently dropped. So before answering
"replayed", the events stored under those ids are compared with the events sent:
any difference is an ``InvalidCommand`` naming the id. Only the event is compared
(its type and fields), not the envelope: a retry may carry another time or
correlation id. An erased event compares equal to anything: its words are gone,
and the retry must not bring them back.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.errors import InvalidCommand
from memledger.events import codec
from memledger.events.envelope import NewEvent
from memledger.store.schema import events

_STORED = sa.select(
    events.c.event_id,
    events.c.event_type,
    events.c.schema_version,
    sa.cast(events.c.payload, sa.Text),
    sa.cast(events.c.private, sa.Text),
).where(
    events.c.tenant_id == sa.bindparam("tenant_id"),
    events.c.event_id == sa.any_(sa.bindparam("event_ids", type_=sa.ARRAY(sa.Text))),
)


def check_same(tx: Connection, tenant_id: str, sent: Sequence[NewEvent], where: str = "") -> None:
    """Raise ``InvalidCommand`` if an event stored under one of ``sent``'s ids differs
    from the event sent under it (``where`` prefixes the message, e.g. "appends[2]: ")."""
    by_id = {new.event_id: new.event for new in sent}
    stored = tx.execute(_STORED, {"tenant_id": tenant_id, "event_ids": sorted(by_id)}).all()
    for event_id, event_type, schema_version, payload, private in sorted(stored):
        event, erased = codec.decode_stored(event_type, schema_version, payload, private)
        if not erased and event != by_id[event_id]:
            raise InvalidCommand(
                f"{where}event id {event_id!r} was appended before with other content; "
                "a retry must resend the same event, and new content needs a new id"
            )
