"""Running the alembic migrations that ship inside the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from memledger.store import lock_keys


def alembic_config() -> Config:
    """An alembic Config pointing at ``memledger.migrations``, wherever it is installed."""
    location = Path(str(resources.files("memledger.migrations")))
    config = Config()
    config.set_main_option("script_location", str(location))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database to ``revision``; safe to call from several processes at once."""
    _run(engine, lambda config: command.upgrade(config, revision))


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Migrate the database down to ``revision``."""
    _run(engine, lambda config: command.downgrade(config, revision))


def _run(engine: Engine, action: object) -> None:
    config = alembic_config()
    with engine.begin() as conn:
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(lock_keys.MIGRATION)))
        config.attributes["connection"] = conn
        action(config)  # type: ignore[operator]


def head() -> str | None:
    """The newest revision that ships with this version of memledger."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current(engine: Engine) -> str | None:
    """The revision the database is at, or None if it was never migrated."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()
