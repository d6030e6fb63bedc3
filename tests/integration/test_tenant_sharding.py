"""Ready to shard by tenant (Citus, ``tenant_id`` the distribution column): checked on the
catalogue of a migrated database with every projection installed, and on the statements
the package sends while it records, extracts, projects, serves, erases and seals.

- Every primary and unique key begins with ``tenant_id``, but for the global tables and
  keys listed in ``GLOBAL_KEYS`` (why each: there, and in docs/operations.md, "Sharding
  by tenant with Citus").
- Every statement names the tenant of each tenant table it reads or writes (an equality,
  ``IN``, ``= ANY`` or a row comparison on ``<table>.tenant_id``; an INSERT's column list
  holds ``tenant_id``), so Citus can route it by tenant, or, for the projectors' batches
  keyed by (tenant_id, id), fan it out by tenant; and a statement of a request (the
  application role's) names one tenant only. The statements that read across tenants
  come only from the places listed in ``CROSS_TENANT`` (the ledger's global order and
  what walks every tenant), with the reason for each.
"""

from __future__ import annotations

import re
import traceback
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from memledger.events.catalogue import Scopes
from memledger.library import MemoryLedger
from memledger.service import erasure, integrity
from tests.conftest import TestDatabase
from tests.e2e.conftest import scratch

# (schema, table) -> the key columns it may have that do not begin with tenant_id, and why.
GLOBAL_KEYS: dict[tuple[str, str], tuple[tuple[tuple[str, ...], ...], str]] = {
    ("public", "alembic_version"): ((("version_num",),), "the schema's migration head: one row per database"),
    ("public", "projection_checkpoints"): (
        (("name",),),
        "one checkpoint per projection over the ledger's one global order (tx_id, position)",
    ),
    ("public", "embedding_cache"): (
        (("model", "text_sha256"),),
        "vectors by model and text hash, shared by tenants: a text is embedded once",
    ),
    ("proj_api_keys", "api_keys"): (
        (("key_sha256",),),
        "a request's key is looked up by its hash before its tenant is known",
    ),
}

# Functions (memledger.<module>.<function>) whose statements may read or write tenant tables
# without naming one tenant, and why. Anything else that does fails the test.
CROSS_TENANT: dict[str, str] = {
    "store.event_reads.read_all": "projectors and the extraction worker read the ledger's one global order",
    "store.event_reads.has_events_between": "whether a projector has caught up with a position of the global order",
    "store.event_reads.visible_head": "where the global order ends (a new extractor starting from now)",
    "store.event_reads.committed_head": "where the global order ends (what erasure waits for)",
    "store.chain.read_raw": "the sealer chains every tenant's new events, read in the global order",
    "projectors.embeddings.projector.hashes_in_use": "erasure keeps cache entries other tenants' vectors still use",
    "store.event_reads.cursor_at": "the (tx_id, position) of a global position (erasure's wait, an as_of)",
}
# Request statements (the application role's) that do not name their tenant: row-level
# security alone fences them, which Citus cannot route by. To fix (see docs/operations.md).
UNNAMED_IN_REQUESTS: dict[str, str] = {
    "store.event_reads.cursor_at": "an as_of position's cursor: the position is global, the tenant not named",
}

REFERENCE = re.compile(r"\b(FROM|JOIN|INTO|UPDATE)\s+((?:\w+\.)?\w+)(?:\s+(?:AS\s+)?(\w+))?", re.IGNORECASE)
NOT_ALIASES = frozenset(
    {"where", "on", "set", "join", "left", "right", "inner", "cross", "full", "group", "order", "limit", "offset"}
    | {"using", "values", "select", "returning", "with", "union", "for", "lateral", "having", "window", "and", "or"}
    | {"as", "natural"}
)


@dataclass
class Captured:
    role: str
    sql: str
    params: Any
    callers: list[str] = field(default_factory=list)


def _callers() -> list[str]:
    """The package's functions on the stack, innermost first (``module.function``)."""
    found = []
    for frame in reversed(traceback.extract_stack()):
        path = Path(frame.filename)
        if "memledger" not in path.parts or "tests" in path.parts:
            continue
        parts = path.with_suffix("").parts
        module = ".".join(parts[parts.index("memledger") + 1 :])
        found.append(f"{module}.{frame.name}")
    return found


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[Captured]:
    """Every statement sent through psycopg (SQLAlchemy's, and the appends' and streamed
    reads' own), by role."""
    seen: list[Captured] = []
    execute, executemany, stream = psycopg.Cursor.execute, psycopg.Cursor.executemany, psycopg.Cursor.stream

    def record(cursor: psycopg.Cursor[Any], query: Any, params: Any) -> None:
        sql = query if isinstance(query, str) else query.as_string(cursor.connection)
        seen.append(Captured(cursor.connection.info.user, " ".join(sql.split()), params, _callers()))

    def spy_execute(self: psycopg.Cursor[Any], query: Any, params: Any = None, **kw: Any) -> Any:
        record(self, query, params)
        return execute(self, query, params, **kw)

    def spy_executemany(self: psycopg.Cursor[Any], query: Any, params_seq: Any, **kw: Any) -> Any:
        rows = list(params_seq)
        for params in rows[:1]:
            record(self, query, params)
        return executemany(self, query, rows, **kw)

    def spy_stream(self: psycopg.Cursor[Any], query: Any, params: Any = None, **kw: Any) -> Any:
        record(self, query, params)
        return stream(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", spy_execute)
    monkeypatch.setattr(psycopg.Cursor, "executemany", spy_executemany)
    monkeypatch.setattr(psycopg.Cursor, "stream", spy_stream)
    return seen


@pytest.fixture(scope="module")
def ledger(database: TestDatabase) -> Iterator[MemoryLedger]:
    with scratch(database, "sharding") as opened:
        yield opened


def _keys(ledger: MemoryLedger) -> list[tuple[str, str, tuple[str, ...]]]:
    # text(): the catalogue's own tables.
    rows = sa.text(
        "SELECT n.nspname, c.relname, (SELECT array_agg(a.attname ORDER BY k.ord)"
        "   FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)"
        "   JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum)"
        " FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE (i.indisunique OR i.indisprimary)"
        " AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')"
    )
    with ledger.engine.connect() as conn:
        return [(r[0], r[1], tuple(r[2] or ())) for r in conn.execute(rows)]


def _tenant_tables(ledger: MemoryLedger) -> set[tuple[str, str]]:
    with ledger.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT table_schema, table_name FROM information_schema.columns WHERE column_name = 'tenant_id'"
                " AND table_schema NOT IN ('pg_catalog', 'information_schema')"
            )
        )
        return {(r[0], r[1]) for r in rows}


def _all_tables(ledger: MemoryLedger) -> set[tuple[str, str]]:
    with ledger.engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
                " AND table_schema NOT IN ('pg_catalog', 'information_schema')"
            )
        )
        return {(r[0], r[1]) for r in rows}


def test_every_key_begins_with_tenant_id_but_the_listed_global_ones(ledger: MemoryLedger) -> None:
    keys = _keys(ledger)
    global_keys = {(schema, table, cols) for (schema, table), (listed, _) in GLOBAL_KEYS.items() for cols in listed}
    wrong = [k for k in keys if k[2][:1] != ("tenant_id",) and k not in global_keys]
    assert not wrong, f"keys that do not begin with tenant_id (a distributed table's must): {wrong}"
    stale = global_keys - set(keys)
    assert not stale, f"listed as global but no such key any more: {stale}"


def test_the_tables_without_a_tenant_are_the_listed_global_ones(ledger: MemoryLedger) -> None:
    without = _all_tables(ledger) - _tenant_tables(ledger)
    expected = {table for table, (listed, _) in GLOBAL_KEYS.items() if all("tenant_id" not in c for c in listed)}
    expected -= {("proj_api_keys", "api_keys")}  # has tenant_id; only its hash key is global
    assert without == expected


def test_no_table_has_a_foreign_key(ledger: MemoryLedger) -> None:
    """Citus needs a foreign key between distributed tables to include the distribution
    column; none exists, so none constrains the layout."""
    with ledger.engine.connect() as conn:
        found = conn.execute(sa.text("SELECT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f'")).all()
    assert found == []


def _references(sql: str, tenant_tables: set[str]) -> list[tuple[str, str, str]]:
    """(keyword, table, the name its columns are qualified with) of each tenant table the statement names."""
    found = []
    for keyword, table, alias in REFERENCE.findall(sql):
        if table not in tenant_tables:
            continue
        named = alias if alias and alias.lower() not in NOT_ALIASES else table
        found.append((keyword.upper(), table, named))
    return found


def _names_its_tenant(sql: str, keyword: str, table: str, named: str) -> bool:
    if keyword == "INTO":
        columns = re.search(rf"INTO {re.escape(table)} \(([^)]*)\)", sql)
        return columns is not None and "tenant_id" in [c.strip() for c in columns.group(1).split(",")]
    column = re.escape(f"{named}.tenant_id")
    return any(
        re.search(pattern, sql)
        for pattern in (
            rf"(?<![\w.]){column}\s*(=|IN\b)",
            rf"=\s*{column}\b",
            rf"\(\s*{column}\s*,[^()]*\)\s*(IN\b|=|>)",
        )
    )


def _unnamed(statement: Captured, tenant_tables: set[str]) -> list[str]:
    refs = _references(statement.sql, tenant_tables)
    if len(refs) == 1 and refs[0][0] != "INTO" and re.search(r"(?<![\w.])tenant_id\s*(=|IN\b)", statement.sql):
        return []  # one table, its column unqualified
    return [table for keyword, table, named in refs if not _names_its_tenant(statement.sql, keyword, table, named)]


def _tenants_named(statement: Captured) -> set[str]:
    params = statement.params if isinstance(statement.params, dict) else {}
    return {str(v) for k, v in params.items() if k.startswith("tenant_id") and isinstance(v, str)}


def chosen_at(ledger: MemoryLedger, tenant: str) -> int:
    """The tenant's last position, for an ``as_of`` selection."""
    with ledger.engine.connect() as conn:
        # text(): a test's own question.
        last = conn.execute(sa.text("SELECT max(position) FROM events WHERE tenant_id = :t"), {"t": tenant})
        return int(last.scalar_one())


def _work(ledger: MemoryLedger, tenant: str) -> None:
    """Every path the package has on a tenant's data: record, extract and project, serve,
    search, graph, memory commands, provenance, history, replay, settings, erase, seal."""
    scopes = Scopes(session="s1", project="phoenix", user="dana")
    ledger.record_turn(tenant, "user", "Project Phoenix uses PostgreSQL. I work with Maria on Phoenix.", scopes=scopes)
    ledger.record_turn(tenant, "user", "My favourite editor is neovim.", scopes=scopes)
    ledger.process()
    served = ledger.context(tenant, "Which database does Phoenix use?", scopes=scopes)
    chosen = ledger.select(tenant, "Which database does Phoenix use?", scopes=scopes)
    ledger.select(tenant, "Which database does Phoenix use?", scopes=scopes, as_of=chosen_at(ledger, tenant))
    ledger.search(tenant, "PostgreSQL", scopes=scopes)
    ledger.graph(tenant, "Phoenix")
    fact = next(item.item_id for item in chosen.items if item.kind == "fact")
    ledger.retract(tenant, fact, "wrong")
    ledger.restore(tenant, fact, "right after all")
    ledger.promote(tenant, kind="preference", scope="user", scopes=scopes, statement="Dana prefers short answers.")
    ledger.provenance(tenant, fact, scopes=scopes)
    ledger.history(tenant, "database")
    ledger.replay(tenant, served.event_id)
    ledger.settings(tenant)
    ledger.process()
    integrity.seal(ledger.engine)
    integrity.verify(ledger.engine, tenant)
    erasure.erase(ledger.engine, tenant, "dana", reason="test", vacuum_after=False)


def test_every_statement_names_its_tenant_or_comes_from_a_listed_cross_tenant_reader(
    ledger: MemoryLedger, captured: list[Captured]
) -> None:
    tenant = f"shard-{uuid.uuid4().hex[:8]}"
    _work(ledger, tenant)
    tables = {t if s == "public" else f"{s}.{t}" for s, t in _tenant_tables(ledger)}
    assert len(captured) > 100, "the workload sent too few statements to prove anything"
    unlisted: dict[str, set[str]] = {}
    for statement in captured:
        missing = _unnamed(statement, tables)
        if missing and not any(caller in CROSS_TENANT for caller in statement.callers):
            where = statement.callers[0] if statement.callers else "?"
            unlisted.setdefault(where, set()).update(missing)
    assert not unlisted, f"statements on tenant tables that name no tenant, by caller: {unlisted}"
    used = {c for s in captured if _unnamed(s, tables) for c in s.callers if c in CROSS_TENANT}
    always = {"store.event_reads.read_all", "store.chain.read_raw", "projectors.embeddings.projector.hashes_in_use"}
    assert always <= used, f"listed as reading across tenants, but did not: {always - used}"


def test_a_request_statement_names_one_tenant_only(ledger: MemoryLedger, captured: list[Captured]) -> None:
    tenant = f"shard-{uuid.uuid4().hex[:8]}"
    _work(ledger, tenant)
    app = [s for s in captured if s.role == "memledger_app"]
    assert len(app) > 50
    several = [s.sql[:200] for s in app if len(_tenants_named(s)) > 1]
    assert not several, several
    tables = {t if s == "public" else f"{s}.{t}" for s, t in _tenant_tables(ledger)}
    unnamed = [
        (s.callers[:2], _unnamed(s, tables))
        for s in app
        if _unnamed(s, tables) and not any(c in UNNAMED_IN_REQUESTS for c in s.callers)
    ]
    assert not unnamed, f"request statements that do not name the tenant (only row-level security would): {unnamed}"
    listed_seen = {c for s in app if _unnamed(s, tables) for c in s.callers if c in UNNAMED_IN_REQUESTS}
    assert listed_seen == set(UNNAMED_IN_REQUESTS), "a listed request statement now names its tenant: unlist it"


def test_the_checker_finds_a_statement_that_names_no_tenant() -> None:
    """The checks above can fail: a statement without its tenant is caught, one with it passes."""
    tables = {"events", "proj_facts.facts"}
    bare = Captured("x", "SELECT events.position FROM events WHERE events.position > %(p)s", {})
    fenced = Captured("x", "SELECT known.position FROM events AS known WHERE known.tenant_id = %(t)s", {})
    joined = Captured(
        "x",
        "SELECT 1 FROM proj_facts.facts JOIN events ON events.tenant_id = proj_facts.facts.tenant_id"
        " WHERE proj_facts.facts.tenant_id = %(t)s",
        {},
    )
    insert = Captured("x", "INSERT INTO events (stream_id, position) VALUES (%(s)s, %(p)s)", {})
    assert _unnamed(bare, tables) == ["events"]
    assert _unnamed(fenced, tables) == []
    assert _unnamed(joined, tables) == []
    assert _unnamed(insert, tables) == ["events"]
    assert _tenants_named(Captured("x", "", {"tenant_id_1": "a", "tenant_id_2": "b"})) == {"a", "b"}
