"""A live copy of a read model upgraded where it stands, when the next version only adds
to the tables (columns empty for every event applied so far, or an index): its
``projections/<name>/v<to>_from_v<from>.sql`` equals a rebuild and spares one."""

from __future__ import annotations

from importlib import resources

import msgspec
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.projectors import checkpoints
from memledger.store import db


def upgrade(engine: Engine, name: str, from_version: int, to_version: int) -> bool:
    """Run the upgrade file on ``name``'s live copy if it is at ``from_version``; True if
    it upgraded; a copy of another version, or not live, is left."""
    sql_file = f"v{to_version}_from_v{from_version}.sql"
    sql = (resources.files("memledger.projection_sql") / name / sql_file).read_text(encoding="utf-8")
    with db.begin(engine) as tx:
        found = checkpoints.lock(tx, name)
        if found is None or found.version != from_version or found.state != "live":
            return False
        quoted = tx.dialect.identifier_preparer.quote_schema(found.db_schema)
        # text(): DDL from the projection's own SQL file, run with its schema first on the
        # search_path (as runner.create_tables); the schema name is quoted by the dialect.
        tx.execute(sa.text(f"SET LOCAL search_path TO {quoted}, public"))
        tx.execute(sa.text(sql))
        tx.execute(sa.text("SET LOCAL search_path TO DEFAULT"))
        checkpoints.replace(tx, name, msgspec.structs.replace(found, version=to_version))
    return True
