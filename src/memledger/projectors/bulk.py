"""Set-wise writes of read-model rows: one statement per table per batch.

Rows travel as one JSON text parameter expanded by ``jsonb_to_recordset``
(much faster than executemany; PERFORMANCE-NOTES.md), then upsert on the
table's primary key. Generated columns and columns the rows don't carry are
left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
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
def _upsert(table: sa.Table, fields: tuple[str, ...]) -> Any:
    insert = _insert(table, fields)
    keys = [c.name for c in table.primary_key.columns]
    return insert.on_conflict_do_update(
        index_elements=keys,
        set_={f: insert.excluded[f] for f in fields if f not in keys},
    )


def upsert(tx: Connection, table: sa.Table, rows: Sequence[msgspec.Struct]) -> None:
    """Insert or replace ``rows`` (Structs whose fields are columns of ``table``)."""
    if not rows:
        return
    fields = tuple(type(rows[0]).__struct_fields__)
    tx.execute(_upsert(table, fields), {"rows": _encoder.encode(rows).decode()})


def insert_new(tx: Connection, table: sa.Table, rows: Sequence[msgspec.Struct]) -> None:
    """Insert ``rows``; a row whose primary key exists already is left as it was."""
    if not rows:
        return
    fields = tuple(type(rows[0]).__struct_fields__)
    statement = _insert(table, fields).on_conflict_do_nothing()
    tx.execute(statement, {"rows": _encoder.encode(rows).decode()})


def load(tx: Connection, table: sa.Table, row_type: type[S], *where: sa.ColumnElement[bool]) -> list[S]:
    """Rows of ``table`` matching ``where``, as ``row_type`` Structs."""
    fields = row_type.__struct_fields__
    stmt = sa.select(*(table.c[f] for f in fields)).where(*where)
    return [row_type(*row) for row in tx.execute(stmt).all()]
