"""Events as PostgreSQL hands them over for reading: each row as one JSON array, built
by the server, and its private part, which the client splices into the array's event
object; a page of them decoded into ``Recorded`` by msgspec in one call.

Building a row in Python is a value per column and a decode per JSON column; one
JSON text per row is one value to decode, and decoding a page of them straight into
typed Structs leaves one small Python step per event. Rows msgspec cannot take as
they are (an erased event, an old schema version, a payload whose tag disagrees with
its row) send their page through ``codec`` row by row, so they decode exactly as they
always have.

``stream`` decodes a statement's rows as they arrive. The server stops sending once
the socket is full, so after each slice of about ``_SLICE_CHARS`` of rows' arrays (their
private parts not counted), what has arrived is moved into libpq's buffer: the server
keeps producing the next rows on the other core while a slice decodes.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from datetime import datetime
from typing import Any

import msgspec
import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from memledger.events import codec
from memledger.events.catalogue import ALL_EVENT_TYPES, AnyEvent, Event
from memledger.events.envelope import Metadata, Recorded
from memledger.store.schema import events

# No private part, yet a payload that names the digest of one: erased, if the type
# has private fields (``codec.decode_joined`` checks).
_DIGEST_ONLY = sa.and_(events.c.private.is_(None), events.c.payload.has_key(codec.DIGEST_KEY))

# A row as two texts: a JSON array in ``_Row``'s field order, ending with the payload,
# and the private part (or NULL), which ``decode`` splices into the payload (they
# never share a key), as ``codec.decode_stored`` joins them. Splicing the texts costs
# the client little; merging the two as jsonb would make the server rebuild and sort
# the object, the costliest step of a read. The transaction id goes as a number (xid8
# has no JSON form); timestamps in ISO 8601 with their offset.
COLUMNS: tuple[Any, ...] = (
    sa.cast(
        sa.func.json_build_array(
            events.c.tenant_id,
            events.c.position,
            sa.cast(sa.cast(events.c.tx_id, sa.Text), sa.Numeric),
            events.c.stream_id,
            events.c.stream_version,
            events.c.event_id,
            events.c.event_type,
            events.c.schema_version,
            events.c.metadata,
            events.c.occurred_at,
            events.c.recorded_at,
            _DIGEST_ONLY,
            events.c.payload,
        ),
        sa.Text,
    ).label("recorded"),
    sa.cast(events.c.private, sa.Text).label("private"),
)


class _Envelope(msgspec.Struct, array_like=True, gc=False):
    """A row's fields before its event, in ``COLUMNS``' order."""

    tenant_id: str
    position: int
    tx_id: int
    stream_id: str
    stream_version: int
    event_id: str
    event_type: str
    schema_version: int
    metadata: Metadata
    occurred_at: datetime
    recorded_at: datetime
    digest_only: bool


class _Row(_Envelope):
    """A row decoded in one pass, its event by the tag in its JSON."""

    event: AnyEvent


class _RawRow(_Envelope):
    """A row whose event is left as JSON, for ``codec`` to decode."""

    event: msgspec.Raw


# Rows come in results of this many where libpq offers it (version 17 on), else one
# by one: the same rows. Array text decoded between two reads of the socket (with the
# private parts, about what the socket holds).
_CHUNKED = psycopg.pq.version() >= 170000
_SLICE_CHARS = 128 * 1024

_TYPED = msgspec.json.Decoder(list[_Row])
_RAW = msgspec.json.Decoder(list[_RawRow])
_TAGS = {cls: codec.tag_of(cls) for cls in ALL_EVENT_TYPES}


def decode(rows: Sequence[tuple[str, str | None]]) -> list[Recorded]:
    """The events of rows selected as ``COLUMNS``, in the order given.

    Decodes as ``codec.decode_stored`` does (upcasting old versions, placeholders for
    erased fields) and raises what it raises for a row that does not decode.
    """
    if not rows:
        return []
    # Spliced as appends store them: a payload and a private part that are both objects
    # with keys. Any other pair gives JSON that does not parse or validate, and the
    # page goes through ``codec``, spliced with care.
    page = "[" + ",".join(text if private is None else f"{text[:-2]}, {private[1:]}]" for text, private in rows) + "]"
    try:
        found = _plain(_TYPED.decode(page))
    except msgspec.DecodeError:  # e.g. an erased event lacking a required field (ValidationError)
        found = None
    if found is not None:
        return found
    page = "[" + ",".join(_joined(text, private) for text, private in rows) + "]"
    return [_decoded(row) for row in _RAW.decode(page)]


def _joined(text: str, private: str | None) -> str:
    """A row's JSON with its private part spliced into the event that ends it. A row
    whose payload or private part is no object with keys is left as it is: ``codec``
    then names what is wrong with it."""
    if private is None or not private.startswith("{") or private == "{}":
        return text
    if not text.endswith("}]") or text.endswith("{}]"):
        return text
    return f"{text[:-2]}, {private[1:]}]"


def _plain(rows: list[_Row]) -> list[Recorded] | None:
    """The rows as ``Recorded`` if each is an event of the current version, not
    erased, whose tag is its row's type; None if any is not."""
    out = []
    for row in rows:
        event: Event = row.event
        if row.digest_only or row.schema_version != event.schema_version or _TAGS[type(event)] != row.event_type:
            return None
        out.append(_recorded(row, event, False))
    return out


def _decoded(row: _RawRow) -> Recorded:
    event, erased = codec.decode_joined(row.event_type, row.schema_version, bytes(row.event), row.digest_only)
    return _recorded(row, event, erased)


def _recorded(row: _Envelope, event: Event, erased: bool) -> Recorded:
    return Recorded(
        tenant_id=row.tenant_id,
        position=row.position,
        tx_id=row.tx_id,
        stream_id=row.stream_id,
        stream_version=row.stream_version,
        event_id=row.event_id,
        occurred_at=row.occurred_at,
        recorded_at=row.recorded_at,
        metadata=row.metadata,
        event=event,
        erased=erased,
    )


def stream(driver: psycopg.Connection[Any], sql: str, params: dict[str, Any], rows: int) -> Generator[list[Recorded]]:
    """The events of a statement selecting ``COLUMNS``, decoded in slices as its rows arrive
    (in results of ``rows`` rows), in its order. Runs in ``driver``'s transaction.

    Closed early, or when a row fails to decode, it reads the statement's remaining rows
    without decoding them (drained, not cancelled), so the transaction stays usable.
    Driver errors are raised as SQLAlchemy's, as ``Connection.execute`` raises them.
    """
    with driver.cursor() as cursor:
        found = cursor.stream(sql, params, size=rows if _CHUNKED else 1)
        try:
            yield from _sliced(driver, found)
        except psycopg.Error as e:
            raise sa_exc.DBAPIError.instance(sql, None, e, psycopg.Error, hide_parameters=True) from e
        except (GeneratorExit, Exception):  # stopped, or a row that does not decode: end the statement normally
            _drain(found, sql)
            raise


def _sliced(driver: psycopg.Connection[Any], found: Iterator[Any]) -> Generator[list[Recorded]]:
    rows: list[tuple[str, str | None]] = []
    size = 0
    for row in found:
        rows.append(row)
        size += len(row[0])
        if size >= _SLICE_CHARS:
            decoded = decode(rows)
            rows, size = [], 0
            driver.pgconn.consume_input()  # never waits: takes what the socket holds
            yield decoded
    yield decode(rows)


def _drain(found: Iterator[Any], sql: str) -> None:
    try:
        for _ in found:
            pass
    except psycopg.Error as e:
        raise sa_exc.DBAPIError.instance(sql, None, e, psycopg.Error, hide_parameters=True) from e
