"""Row-level security: the application role, and the fence on every tenant table.

memledger reaches PostgreSQL as two roles. The owner of the tables runs the
migrations and the paths that work across tenants (projectors, the extraction
worker, the sealer, rebuild, verify, erase). ``APP_ROLE`` serves what callers ask
(the library, the HTTP API, MCP, the agents' commands): it owns nothing, cannot
bypass row-level security, and is granted only what those paths need.

Every table with a ``tenant_id`` has row-level security enabled and one policy,
``FENCE``, for reading and writing alike: a row is visible, and may be written,
only if its tenant is the one set for the transaction in ``TENANT_SETTING`` (by the
app engine's begin hook, ``store.db.create_app_engine``). Unset, the setting is
NULL (or '' once a transaction-local value has ended), which matches no row: a
transaction without a tenant reads nothing and can write nothing.

Row-level security is ENABLEd, not FORCEd: the owner is not fenced, because its
paths must see every tenant. Every primary and unique key starts with the
tenant, so a unique violation can never tell one tenant about another's rows.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from memledger.store import lock_keys

APP_ROLE = "memledger_app"
TENANT_SETTING = "memledger.tenant"
POLICY = "tenant_fence"
FENCE = f"tenant_id = NULLIF(current_setting('{TENANT_SETTING}', true), '')"
# Read models are written by their projectors (the owner) only.
READ_MODEL_PRIVILEGES = "SELECT"

# The role is cluster-wide, so several databases of one server share it; their
# migrations may race to create it (a unique violation on pg_authid, or
# duplicate_object). An existing role that could bypass the fence is refused.
_ENSURE_ROLE = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
        BEGIN
            CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN NULL;
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'memledger needs the role {APP_ROLE}, and % may not create roles', current_user
                    USING HINT = 'create it as an administrator: CREATE ROLE {APP_ROLE} LOGIN PASSWORD ''...'''
                        ' NOSUPERUSER NOBYPASSRLS; or migrate as a role with CREATEROLE';
        END;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}' AND (rolsuper OR rolbypassrls)) THEN
        RAISE EXCEPTION 'the role {APP_ROLE} can bypass row-level security (SUPERUSER or BYPASSRLS)'
            USING HINT = 'ALTER ROLE {APP_ROLE} NOSUPERUSER NOBYPASSRLS';
    END IF;
END
$$
"""

# Dropped only if no other database of the server still grants it anything.
_DROP_ROLE = f"""
DO $$
BEGIN
    DROP ROLE IF EXISTS {APP_ROLE};
EXCEPTION WHEN dependent_objects_still_exist THEN NULL;
END
$$
"""

# The password travels in a transaction-local setting, so that no statement text
# (which the server may log) holds it; %L quotes it as a literal.
_SET_PASSWORD = f"""
DO $$
BEGIN
    EXECUTE format('ALTER ROLE {APP_ROLE} PASSWORD %L', current_setting('memledger.app_password'));
END
$$
"""


# Under row-level security PostgreSQL uses a query's condition as an index condition
# only if its function is LEAKPROOF (it may then run on rows the fence hides, so it
# must reveal nothing of them). The full-text match is not marked so, which leaves
# the GIN indexes of facts, entities and turns unused for the application role: each
# search would read every row of the tenant.
# ts_match_vq raises no error and has no effect that depends on the row's tsvector,
# so it is marked LEAKPROOF, in this database only; only a superuser may.
LEAKPROOF_FUNCTIONS = ("pg_catalog.ts_match_vq(tsvector, tsquery)",)
_IS_SUPERUSER = sa.text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")

_TENANT_TABLES = sa.text(
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped"
    " WHERE n.nspname = :schema AND c.relkind IN ('r', 'p') ORDER BY c.relname"
)
_TABLES = sa.text(
    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE n.nspname = :schema AND c.relkind IN ('r', 'p') ORDER BY c.relname"
)
_ROLE_EXISTS = sa.text("SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = :role)")


def ensure_app_role(tx: Connection) -> None:
    """Create ``APP_ROLE`` if the server has none; refuse one that could bypass the fence."""
    # text(): a DO block; DDL on roles takes no bind parameters (the name is a constant).
    tx.execute(sa.text(_ENSURE_ROLE))


def drop_app_role(tx: Connection) -> None:
    """Drop ``APP_ROLE`` unless another database still grants it something."""
    # text(): as in ensure_app_role.
    tx.execute(sa.text(_DROP_ROLE))


def set_app_password(tx: Connection, password: str) -> None:
    """Give ``APP_ROLE`` ``password`` (for a server that asks the role for one). Needs
    the right to alter the role: a superuser, or the role with CREATEROLE that made it."""
    tx.execute(sa.select(sa.func.pg_advisory_xact_lock(lock_keys.APP_PASSWORD)))  # processes starting together
    tx.execute(sa.select(sa.func.set_config("memledger.app_password", password, True)))
    # text(): a DO block; the password is read from the setting above, never inlined.
    tx.execute(sa.text(_SET_PASSWORD))


def mark_leakproof(tx: Connection, *, leakproof: bool = True) -> bool:
    """Mark ``LEAKPROOF_FUNCTIONS`` LEAKPROOF (or not) if the connected role is a
    superuser; return whether it could. Without it, full-text search by the
    application role stays correct and fenced, only slower."""
    if not tx.execute(_IS_SUPERUSER).scalar_one():
        return False
    tx.execute(sa.select(sa.func.pg_advisory_xact_lock(lock_keys.LEAKPROOF)))  # processes starting together
    for function in LEAKPROOF_FUNCTIONS:
        # text(): a catalogue query and DDL on a constant function signature. Altered only
        # when needed: a dump and restore (or pg_upgrade) drops the mark, the next start
        # puts it back, and a start that finds it changes nothing.
        marked = tx.execute(sa.text(f"SELECT proleakproof FROM pg_proc WHERE oid = '{function}'::regprocedure"))
        if marked.scalar_one() != leakproof:
            tx.execute(sa.text(f"ALTER FUNCTION {function} {'' if leakproof else 'NOT '}LEAKPROOF"))
    return True


def app_role_exists(tx: Connection) -> bool:
    """Whether the server has ``APP_ROLE`` (not before migration 0008)."""
    return bool(tx.execute(_ROLE_EXISTS, {"role": APP_ROLE}).scalar_one())


def tenant_tables(tx: Connection, schema: str) -> list[str]:
    """The tables of ``schema`` that have a ``tenant_id`` column."""
    return list(tx.execute(_TENANT_TABLES, {"schema": schema}).scalars())


def fence_table(tx: Connection, schema: str, table: str) -> None:
    """Enable row-level security on ``schema.table`` with the ``FENCE`` policy (idempotent)."""
    name = _qualified(tx, schema, table)
    # text(): DDL; identifiers quoted by the dialect, the policy expression a constant.
    tx.execute(sa.text(f"ALTER TABLE {name} ENABLE ROW LEVEL SECURITY"))
    tx.execute(sa.text(f"DROP POLICY IF EXISTS {POLICY} ON {name}"))
    tx.execute(sa.text(f"CREATE POLICY {POLICY} ON {name} USING ({FENCE}) WITH CHECK ({FENCE})"))


def unfence_table(tx: Connection, schema: str, table: str) -> None:
    """Undo ``fence_table``."""
    name = _qualified(tx, schema, table)
    # text(): as in fence_table.
    tx.execute(sa.text(f"DROP POLICY IF EXISTS {POLICY} ON {name}"))
    tx.execute(sa.text(f"ALTER TABLE {name} DISABLE ROW LEVEL SECURITY"))


def grant(tx: Connection, privileges: str, schema: str, table: str) -> None:
    """Grant ``APP_ROLE`` ``privileges`` (e.g. "SELECT, INSERT") on ``schema.table``."""
    if not set(privileges.replace(",", " ").split()) <= {"SELECT", "INSERT"}:
        raise ValueError(f"the application role is granted SELECT and INSERT at most, not {privileges!r}")
    # text(): GRANT takes no bind parameters; privileges checked above, names quoted.
    tx.execute(sa.text(f"GRANT {privileges} ON {_qualified(tx, schema, table)} TO {APP_ROLE}"))


def fence_schema(tx: Connection, schema: str, privileges: str) -> None:
    """Fence every tenant table of ``schema`` and grant ``APP_ROLE`` ``privileges`` on
    them, and the use of the schema. Tables without a ``tenant_id`` are neither
    fenced nor granted: the application role cannot read them at all. Before the
    role exists (a database below migration 0008) only the fences are made; the
    migration grants."""
    tables = tenant_tables(tx, schema)
    for table in tables:
        fence_table(tx, schema, table)
    if not app_role_exists(tx):
        return
    # text(): as in grant.
    tx.execute(sa.text(f"GRANT USAGE ON SCHEMA {tx.dialect.identifier_preparer.quote_schema(schema)} TO {APP_ROLE}"))
    for table in tables:
        grant(tx, privileges, schema, table)


def unfence_schema(tx: Connection, schema: str) -> None:
    """Undo ``fence_schema``: drop the fences, revoke everything ``APP_ROLE`` has there."""
    for table in tenant_tables(tx, schema):
        unfence_table(tx, schema, table)
    if not app_role_exists(tx):
        return
    quoted = tx.dialect.identifier_preparer.quote_schema(schema)
    # text(): REVOKE takes no bind parameters; the schema name is quoted.
    tx.execute(sa.text(f"REVOKE ALL ON ALL TABLES IN SCHEMA {quoted} FROM {APP_ROLE}"))
    tx.execute(sa.text(f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA {quoted} FROM {APP_ROLE}"))
    tx.execute(sa.text(f"REVOKE USAGE ON SCHEMA {quoted} FROM {APP_ROLE}"))


def all_tables(tx: Connection, schema: str) -> list[str]:
    """Every table of ``schema``, with or without a tenant."""
    return list(tx.execute(_TABLES, {"schema": schema}).scalars())


def _qualified(tx: Connection, schema: str, table: str) -> str:
    prep = tx.dialect.identifier_preparer
    return f"{prep.quote_schema(schema)}.{prep.quote(table)}"
