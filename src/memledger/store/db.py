"""Engines, transactions and the translation of driver errors (the embedded server:
``embedded_server``).

psycopg and SQLAlchemy exceptions are translated into ``LedgerError``s here and
nowhere else.
"""

from __future__ import annotations

import logging
import select
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import msgspec
import psycopg
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, Engine, make_url

from memledger.errors import DatabaseUnavailable, LedgerError
from memledger.store.identifiers import check_identifier
from memledger.store.row_security import APP_ROLE, TENANT_SETTING

log = logging.getLogger(__name__)

_UNAVAILABLE_STATES = {
    "25006": "the database is read-only",
    "53100": "the database disk is full",
    "53200": "the database is out of memory",
    "57P01": "the database server shut down",
    "57P02": "the database server crashed",
    "57P03": "the database server is starting up",
    "58030": "the database disk failed (I/O error)",
}


def to_psycopg_url(url: str | URL) -> URL:
    """A URL that SQLAlchemy opens with psycopg 3, whatever driver it named."""
    parsed = make_url(url)
    return parsed.set(drivername="postgresql+psycopg")


def ensure_database(server_url: URL, name: str) -> URL:
    """Create database ``name`` on the server if it is missing; return its URL."""
    admin = sa.create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            # text(): CREATE DATABASE takes no bind parameters; the name is quoted below.
            exists = conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}).scalar()
            if not exists:
                quoted = admin.dialect.identifier_preparer.quote(name)
                try:
                    conn.execute(sa.text(f"CREATE DATABASE {quoted}"))
                except (sa_exc.IntegrityError, sa_exc.ProgrammingError) as e:
                    # Another process created it since the check (processes started together):
                    # 23505 if its CREATE was still running, 42P04 if it had committed.
                    if getattr(e.orig, "sqlstate", None) not in {"23505", "42P04"}:
                        raise
    except sa_exc.OperationalError as e:
        raise DatabaseUnavailable(f"could not reach PostgreSQL to create {name!r}: {e}") from e
    finally:
        admin.dispose()
    return server_url.set(database=name)


def drop_database(server_url: URL, name: str) -> None:
    """Drop database ``name`` from the server if it exists, closing its sessions."""
    admin = sa.create_engine(server_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            quoted = admin.dialect.identifier_preparer.quote(name)
            # text(): DROP DATABASE takes no bind parameters; the name is quoted above.
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {quoted} WITH (FORCE)"))
    finally:
        admin.dispose()


def _cache_long_queries() -> None:
    """psycopg turns a query's ``%(name)s`` placeholders into ``$n`` with a regex on
    every execution, unless the query is short enough for its cache. The context
    selector's facts statement (five subqueries of twelve columns) is longer than
    that bound and would be converted anew for every request. The bound is a module
    setting of psycopg's (read at each call); raised here, once, if it is there."""
    queries = getattr(psycopg, "_queries", None)
    if queries is not None and isinstance(getattr(queries, "MAX_CACHED_STATEMENT_LENGTH", None), int):
        queries.MAX_CACHED_STATEMENT_LENGTH = max(queries.MAX_CACHED_STATEMENT_LENGTH, _LONGEST_CACHED_QUERY)


_LONGEST_CACHED_QUERY = 16_384


def create_engine(url: URL, *, idle_in_transaction_timeout_ms: int = 60_000, pool_size: int = 5) -> Engine:
    """An engine for the application's sessions.

    ``idle_in_transaction_session_timeout`` is set because any open write
    transaction in the cluster holds every gap-safe reader back until it ends.
    ``hide_parameters``: an error's message leaves out the statement's parameters,
    which hold what people said; errors are logged, and erasure cannot reach logs.
    """
    options = f"-c idle_in_transaction_session_timeout={int(idle_in_transaction_timeout_ms)}"
    _cache_long_queries()
    engine = sa.create_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        hide_parameters=True,
        connect_args={"options": options, "application_name": "memledger"},
    )
    sa.event.listen(engine, "checkout", _refuse_closed)
    return engine


def _refuse_closed(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Pool checkout: a connection the server has closed is discarded (the pool then
    takes another, or connects anew). The pool rolls back every connection it takes
    back, so an idle one has nothing to read: its socket reading as ready means the
    server ended it (a restart, a crash, the idle timeout; or a rare notice, and then
    a good connection is dropped). A poll of the socket, where a ping (``pool_pre_ping``)
    would cost a round trip, and CPU on each side, for every checkout. A
    server that vanished without closing its end is found by the first statement,
    which raises and makes the pool drop every connection made before it."""
    if dbapi_connection.closed or dbapi_connection.broken:
        raise sa_exc.DisconnectionError("the connection was closed")
    poller = select.poll()  # not select.select: it refuses descriptors above 1023
    try:
        poller.register(dbapi_connection.fileno(), select.POLLIN)
    except (OSError, ValueError, psycopg.OperationalError) as e:
        raise sa_exc.DisconnectionError(f"the connection's socket is gone: {e}") from e
    if poller.poll(0):  # readable, hung up or in error
        raise sa_exc.DisconnectionError("the server closed the connection")


# The execution option that carries an app engine's tenant into its begin hook.
TENANT_OPTION = "memledger_tenant"
# The execution option with settings for the transaction (``with_local_settings``).
LOCAL_SETTINGS_OPTION = "memledger_local_settings"
# The execution option that marks an app engine (its begin hook sets the tenant).
APP_ENGINE_OPTION = "memledger_app_engine"


def create_app_engine(url: URL, *, idle_in_transaction_timeout_ms: int = 60_000, pool_size: int = 5) -> Engine:
    """An engine connected as the application role (``row_security.APP_ROLE``).

    Every transaction it begins is fenced by row-level security to the tenant of
    the engine it came from (``for_tenant``); from the bare engine, to no tenant,
    which reads no row and may write none.
    """
    engine = create_engine(url, idle_in_transaction_timeout_ms=idle_in_transaction_timeout_ms, pool_size=pool_size)
    sa.event.listen(engine, "begin", _set_tenant)
    engine.update_execution_options(**{APP_ENGINE_OPTION: True})  # kept by every for_tenant engine
    return engine


def for_tenant(app_engine: Engine, tenant_id: str) -> Engine:
    """``app_engine`` fenced to ``tenant_id``: the same pool, and each transaction
    begun from it sets the tenant first. Cheap (no connection is made)."""
    return app_engine.execution_options(**{TENANT_OPTION: check_identifier("tenant_id", tenant_id)})


def _set_tenant(conn: Connection) -> None:
    options = conn.get_execution_options()
    settings = ((TENANT_SETTING, options.get(TENANT_OPTION, "")), *options.get(LOCAL_SETTINGS_OPTION, ()))
    # Through the driver's cursor: SQLAlchemy is inside its own begin here, and a
    # statement through ``conn`` would begin again. psycopg opens the transaction
    # with this statement; ``is_local`` ends the setting with the transaction, so a
    # pooled connection never carries a tenant into the next one. Always set, even
    # to '' (no tenant), so nothing set by hand on the session survives either.
    # Any other settings asked for ride on the same round trip.
    cursor = conn.connection.cursor()
    try:
        cursor.execute(_set_configs(len(settings)), [value for pair in settings for value in pair])
    except psycopg.OperationalError as e:
        # Raised in SQLAlchemy's "begin" hook, outside its wrapping: a server that died
        # after the pool's ping would otherwise escape ``begin`` as a bare driver error.
        raise DatabaseUnavailable(f"the database is unreachable: {str(e).strip()}") from e
    finally:
        cursor.close()


@lru_cache(maxsize=8)
def _set_configs(count: int) -> str:
    return "SELECT " + ", ".join(["set_config(%s, %s, true)"] * count)


def with_local_settings(conn: Connection, settings: Mapping[str, str]) -> Connection:
    """``conn`` with ``settings`` (name -> value) in force (``SET LOCAL``) for the
    transaction about to begin: call it before. On an app engine they are set by
    the statement that sets the tenant (no round trip of their own), and again at
    every later begin of this Connection object; otherwise by one statement now,
    which begins the transaction, and end with it. Never beyond the Connection."""
    pairs = tuple(settings.items())
    if conn.get_execution_options().get(APP_ENGINE_OPTION):
        return conn.execution_options(**{LOCAL_SETTINGS_OPTION: pairs})
    conn.exec_driver_sql(_set_configs(len(pairs)), tuple(value for pair in pairs for value in pair))
    return conn


@contextmanager
def reading(engine: Engine) -> Iterator[Connection]:
    """A connection for reads, its transaction ended with COMMIT when the block ends
    without an error. psycopg deallocates all of a connection's prepared statements at
    every ROLLBACK, so reads that rolled back (a ``connect`` block's end) never ran a
    statement prepared, and dropped those that other reads of the pool had prepared."""
    with engine.connect() as conn:
        yield conn
        conn.commit()


def app_url(owner_url: URL, password: str | None) -> URL:
    """The owner's URL with the application role as user (and its password, if any)."""
    return owner_url.set(username=APP_ROLE, password=password)


def check_app_role(app_engine: Engine) -> None:
    """Refuse an application role that row-level security would not fence: a
    superuser, one with BYPASSRLS, or one that is (or inherits) the ledger's owner,
    as when its URL names the owner. ``DatabaseUnavailable`` if it cannot connect."""
    # text(): catalogue queries about the connected role.
    check = sa.text(
        "SELECT current_user, r.rolsuper, r.rolbypassrls,"
        " pg_has_role(current_user, c.relowner, 'USAGE')"
        " FROM pg_roles r, pg_class c WHERE r.rolname = current_user AND c.oid = 'public.events'::regclass"
    )
    try:
        with app_engine.connect() as conn:
            user, superuser, bypass, owner = conn.execute(check).one()
    except sa_exc.DBAPIError as e:
        raise translate(e) from e
    if superuser or bypass or owner:
        why = "a superuser" if superuser else "allowed to bypass row-level security" if bypass else "the owner"
        raise DatabaseUnavailable(
            f"the application role {user!r} is {why}, so tenants would not be fenced: connect it as {APP_ROLE}"
            " (MEMLEDGER_APP_DATABASE_URL)"
        )


def translate(error: sa_exc.DBAPIError) -> LedgerError:
    """The LedgerError for a driver error that callers cannot fix by changing input."""
    state = getattr(error.orig, "sqlstate", None) or ""
    if "Read-only file system" in str(error.orig):  # EROFS: PostgreSQL reports it as 42501 too
        return DatabaseUnavailable(f"the database disk is read-only: {str(error.orig).strip()}")
    if state == "42501":  # insufficient_privilege: a grant, the tenant fence or the append-only trigger
        return LedgerError(f"the database refused: {str(error.orig).strip()}")
    reason = _UNAVAILABLE_STATES.get(state)
    if reason is None and isinstance(error, sa_exc.OperationalError):
        reason = "the database is unreachable"
    return DatabaseUnavailable(f"{reason or 'database error'}: {str(error.orig).strip()}")


@contextmanager
def begin(engine: Engine) -> Iterator[Connection]:
    """A transaction that commits on success, rolls back on any error, and
    raises driver errors as ``LedgerError``s."""
    try:
        with engine.begin() as tx:
            yield tx
    except sa_exc.DBAPIError as e:
        raise translate(e) from e


def violated_constraint(error: sa_exc.IntegrityError) -> str | None:
    """The name of the unique constraint an INSERT broke, if that is what happened."""
    diag = getattr(error.orig, "diag", None)
    state = getattr(error.orig, "sqlstate", None)
    if state != "23505" or diag is None:
        return None
    name = diag.constraint_name
    return str(name) if name else None


class ServerStatus(msgspec.Struct, frozen=True):
    """What ``memledger db status`` reports about the server."""

    server_version: str
    pgvector_version: str | None
    database: str
    oldest_write_transaction_s: float | None
    idle_in_transaction_timeout: str


def server_status(conn: Connection) -> ServerStatus:
    """Versions, and the age of the oldest running write transaction in the cluster,
    which holds every gap-safe reader back until it ends."""
    # text(): catalogue and settings functions with no table to model.
    row = conn.execute(
        sa.text(
            "SELECT current_setting('server_version'),"
            " (SELECT extversion FROM pg_extension WHERE extname = 'vector'),"
            " current_database(),"
            " (SELECT extract(epoch FROM max(clock_timestamp() - xact_start))"
            "    FROM pg_stat_activity WHERE backend_xid IS NOT NULL),"
            " current_setting('idle_in_transaction_session_timeout')"
        )
    ).one()
    age = None if row[3] is None else float(row[3])
    return ServerStatus(row[0], row[1], row[2], age, row[4])
