"""Set-wise reads and writes of read-model rows: one statement per table per batch.

Rows travel as one JSON text parameter expanded by ``jsonb_to_recordset``
(one statement, not one per row as with executemany), then upsert on the
table's primary key. Generated columns and columns the rows don't carry are
left alone.

Rows are read back the same way round: ``load_keys`` sends the wanted keys as
one JSON parameter joined to the table (a statement that is compiled once and
cached, where an ``IN`` list of thousands of tuples would be compiled and parsed
anew for every batch), and the server returns the matching rows as one JSON
array that msgspec decodes straight into the row Structs (no per-column
result processing in Python).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from functools import cache
from operator import attrgetter
from typing import Any, TypeVar

import msgspec
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects.postgresql import JSON, JSONB
from sqlalchemy.engine import Connection

S = TypeVar("S", bound=msgspec.Struct)

_encoder = msgspec.json.Encoder()


@cache
def _recordset(table: sa.Table, fields: tuple[str, ...]) -> Any:
    # json, not jsonb: the rows are read once, and parsing the text straight into
    # records is cheaper for the server than building jsonb first.
    return (
        sa.func.json_to_recordset(sa.cast(sa.bindparam("rows", type_=sa.Text), JSON))
        .table_valued(*(sa.column(f, table.c[f].type) for f in fields))
        .render_derived(name="r", with_types=True)
    )


@cache
def _insert(table: sa.Table, fields: tuple[str, ...]) -> Any:
    recordset = _recordset(table, fields)
    return postgresql.insert(table).from_select(list(fields), sa.select(*(recordset.c[f] for f in fields)))


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


@cache
def _update(table: sa.Table, fields: tuple[str, ...], keep: frozenset[str]) -> Any:
    keys = [c.name for c in table.primary_key.columns]
    settable = [f for f in fields if f not in keys and f not in keep]
    # Only the columns it uses: the server skips converting the others' values.
    recordset = _recordset(table, (*keys, *settable))
    return (
        table.update()
        .where(*(table.c[k] == recordset.c[k] for k in keys))
        .values({f: recordset.c[f] for f in settable})
    )


def upsert(tx: Connection, table: sa.Table, rows: Sequence[msgspec.Struct], *, keep: Collection[str] = ()) -> None:
    """Insert or replace ``rows`` (Structs whose fields are columns of ``table``).

    ``keep`` names columns that never change once a row exists: an existing row
    keeps them. The caller vouches that they are equal in ``rows``.
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


def insert_encoded(tx: Connection, table: sa.Table, fields: tuple[str, ...], rows_json: bytes) -> None:
    """Insert rows that are new to the table (a duplicate key is an error)."""
    tx.execute(_insert(table, fields), {"rows": rows_json.decode()})


def update_encoded(
    tx: Connection,
    table: sa.Table,
    fields: tuple[str, ...],
    rows_json: bytes,
    count: int,
    *,
    keep: Collection[str] = (),
) -> None:
    """Replace ``count`` rows that exist (by primary key), leaving the ``keep`` columns.

    Cheaper for the server than an upsert: an insert that conflicts computes the
    generated columns of the row it does not insert, and an update computes only
    those that depend on the columns it sets. Raises ``LookupError`` when a row
    is missing.
    """
    result = tx.execute(_update(table, fields, frozenset(keep)), {"rows": rows_json.decode()})
    if result.rowcount != count:
        raise LookupError(f"{table.name}: {count} rows to update, {result.rowcount} found")


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


class Changes:
    """A replayed batch's rows of one table, encoded when the batch is folded
    (the Structs change later) and split into rows new to the table and rows it
    has: ``write`` inserts the first and updates the second."""

    def __init__(
        self,
        table: sa.Table,
        rows: Sequence[msgspec.Struct],
        written: set[tuple[str, str]],
        *,
        keep: frozenset[str] = frozenset(),
    ) -> None:
        self.table = table
        self.keep = keep
        self.fields = tuple(type(rows[0]).__struct_fields__) if rows else ()
        ident = attrgetter(*(c.name for c in table.primary_key.columns))
        new: list[msgspec.Struct] = []
        old: list[msgspec.Struct] = []
        for row in rows:
            key = ident(row)
            if key in written:
                old.append(row)
            else:
                written.add(key)
                new.append(row)
        self.new = _encoder.encode(new) if new else None
        self.old = _encoder.encode(old) if old else None
        self.old_count = len(old)

    def write(self, tx: Connection) -> None:
        """Insert the new rows and update the others, in the caller's transaction."""
        if self.new is not None:
            insert_encoded(tx, self.table, self.fields, self.new)
        if self.old is not None:
            update_encoded(tx, self.table, self.fields, self.old, self.old_count, keep=self.keep)
