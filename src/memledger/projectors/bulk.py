"""Set-wise reads and writes of read-model rows: one statement per table per batch.

Rows travel as one JSON text parameter expanded by ``jsonb_to_recordset``
(much faster than executemany; PERFORMANCE-NOTES.md), then upsert on the
table's primary key. Generated columns and columns the rows don't carry are
left alone.

Rows are read back the same way round: ``load_keys`` sends the wanted keys as
one JSON parameter joined to the table (a statement that is compiled once and
cached, where an ``IN`` list of thousands of tuples was compiled and parsed
anew for every batch), and the server returns the matching rows as one JSON
array that msgspec decodes straight into the row Structs (no per-column
result processing in Python).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from functools import cache
from typing import Any, TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

S = TypeVar("S", bound=msgspec.Struct)

_encoder = msgspec.json.Encoder()


@cache
def _insert(table: sa.Table, fields: tuple[str, ...]) -> Any:
    recordset = (
        sa.func.jsonb_to_recordset(sa.cast(sa.bindparam("rows", type_=sa.Text), JSONB))
        .table_valued(*(sa.column(f, table.c[f].type) for f in fields))
        .render_derived(name="r", with_types=True)
    )
    insert = postgresql.insert(table).from_select(
        list(fields), sa.select(*(recordset.c[f] for f in fields))
    )
    return insert


@cache
def _upsert(table: sa.Table, fields: tuple[str, ...], keep: frozenset[str] = frozenset()) -> Any:
    insert = _insert(table, fields)
    keys = [c.name for c in table.primary_key.columns]
    return insert.on_conflict_do_update(
        index_elements=keys,
        set_={f: insert.excluded[f] for f in fields if f not in keys and f not in keep},
    )


@cache
def _insert_new(table: sa.Table, fields: tuple[str, ...]) -> Any:
    return _insert(table, fields).on_conflict_do_nothing()


def upsert(
    tx: Connection, table: sa.Table, rows: Sequence[msgspec.Struct], *, keep: Collection[str] = ()
) -> None:
    """Insert or replace ``rows`` (Structs whose fields are columns of ``table``).

    ``keep`` names columns that never change once a row exists: an existing row
    keeps them, so PostgreSQL need not recompute generated columns that depend
    on them only. The caller vouches that they are equal in ``rows``.
    """
    if not rows:
        return
    upsert_encoded(tx, table, tuple(type(rows[0]).__struct_fields__), _encoder.encode(rows), keep=keep)


def upsert_encoded(
    tx: Connection,
    table: sa.Table,
    fields: tuple[str, ...],
    rows_json: bytes,
    *,
    keep: Collection[str] = (),
) -> None:
    """``upsert`` of rows already encoded as one JSON array of objects with ``fields``."""
    tx.execute(_upsert(table, fields, frozenset(keep)), {"rows": rows_json.decode()})


def insert_new(tx: Connection, table: sa.Table, rows: Sequence[msgspec.Struct]) -> None:
    """Insert ``rows``; a row whose primary key exists already is left as it was."""
    if not rows:
        return
    fields = tuple(type(rows[0]).__struct_fields__)
    tx.execute(_insert_new(table, fields), {"rows": _encoder.encode(rows).decode()})


def load(tx: Connection, table: sa.Table, row_type: type[S], *where: sa.ColumnElement[bool]) -> list[S]:
    """Rows of ``table`` matching ``where``, as ``row_type`` Structs."""
    fields = row_type.__struct_fields__
    stmt = sa.select(*(table.c[f] for f in fields)).where(*where)
    return [row_type(*row) for row in tx.execute(stmt).all()]


def as_json(rows: sa.Select[Any]) -> sa.Select[Any]:
    """A query of one JSON array text holding the rows of ``rows`` as objects."""
    sub = rows.subquery("r")
    # Timestamps keep their offsets and floats print exactly in JSON, so the rows
    # msgspec decodes equal what the driver would have returned.
    return sa.select(sa.func.coalesce(sa.cast(sa.func.json_agg(sub.table_valued()), sa.Text), "[]"))


def key_list(name: str, columns: tuple[str, ...]) -> Any:
    """A derived table ``k`` of text columns ``columns``, from the JSON array of
    objects in the bind parameter ``name`` (see ``encode_keys``)."""
    return (
        sa.func.jsonb_to_recordset(sa.cast(sa.bindparam(name, type_=sa.Text), JSONB))
        .table_valued(*(sa.column(c, sa.Text) for c in columns))
        .render_derived(name="k", with_types=True)
    )


def encode_keys(columns: tuple[str, ...], keys: Iterable[tuple[str, ...]]) -> str:
    """The value of a ``key_list`` parameter."""
    return _encoder.encode([dict(zip(columns, key, strict=True)) for key in keys]).decode()


@cache
def _load_keys(table: sa.Table, fields: tuple[str, ...], key_columns: tuple[str, ...]) -> Any:
    wanted = key_list("keys", key_columns)
    match = sa.and_(*(table.c[c] == wanted.c[c] for c in key_columns))
    return as_json(sa.select(*(table.c[f] for f in fields)).select_from(table.join(wanted, match)))


@cache
def _rows_decoder(row_type: type[S]) -> msgspec.json.Decoder[list[S]]:
    return msgspec.json.Decoder(list[row_type])  # type: ignore[valid-type]


def fetch(tx: Connection, stmt: Any, row_type: type[S], params: dict[str, Any]) -> list[S]:
    """The rows of an ``as_json`` query, decoded into ``row_type`` Structs."""
    return _rows_decoder(row_type).decode(tx.execute(stmt, params).scalar_one())


def load_keys(
    tx: Connection,
    table: sa.Table,
    row_type: type[S],
    key_columns: tuple[str, ...],
    keys: Collection[tuple[str, ...]],
) -> list[S]:
    """Rows of ``table`` whose ``key_columns`` (text) equal one of ``keys``, as
    ``row_type`` Structs, in no particular order. One round trip, whatever the
    number of keys."""
    if not keys:
        return []
    stmt = _load_keys(table, tuple(row_type.__struct_fields__), key_columns)
    return fetch(tx, stmt, row_type, {"keys": encode_keys(key_columns, keys)})
