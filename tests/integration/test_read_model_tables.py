"""Each read model's schema is written twice: its DDL (``projection_sql/<name>/v<N>.sql``,
which creates the tables) and its ``sa.Table`` (which the projector writes and the queries
read). These tests hold the two to each other on the copy the DDL made: the same columns,
the same nullability, the same primary key."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.projectors import registry, runner
from memledger.projectors.base import Projector

PROJECTORS = registry.all_projectors()


@pytest.mark.parametrize("projector", PROJECTORS, ids=[p.name for p in PROJECTORS])
def test_the_ddl_creates_the_columns_and_keys_the_table_declares(engine: Engine, projector: Projector) -> None:
    runner.install(engine, projector)
    inspector = sa.inspect(engine)
    tables = runner.projection_tables(projector)
    assert tables, f"{projector.name} declares no table"
    assert {t.name for t in tables} <= set(inspector.get_table_names(schema=tables[0].schema))
    for table in tables:
        created = {c["name"]: c for c in inspector.get_columns(table.name, schema=table.schema)}
        declared = {c.name: c for c in table.columns}
        assert set(created) == set(declared), f"{table.fullname}: columns differ"
        nullable = {name: bool(c["nullable"]) for name, c in created.items()}
        assert nullable == {name: bool(c.nullable) for name, c in declared.items()}, f"{table.fullname}: nullability"
        key = inspector.get_pk_constraint(table.name, schema=table.schema)["constrained_columns"]
        assert key == [c.name for c in table.primary_key.columns], f"{table.fullname}: primary key"
