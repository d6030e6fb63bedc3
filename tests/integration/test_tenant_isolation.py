"""Tenant isolation enforced by PostgreSQL: row-level security on the ledger and every
read model, for the application role, whatever SQL it sends.

Two tenants on a database of their own, each with rows in every tenant table (turns,
facts, a conflict, entities, relationships, embeddings, an API key, extraction
counters, the hash chain, the scope-id secret). The application role, with tenant A
set for its transaction, runs raw SQL against every table and finds nothing of B,
cannot write a row of B, sees nothing without a tenant, and cannot turn the fence
off. The service functions, given A's fenced engine and B's tenant id (a bug that
asks for the wrong tenant), find nothing and write nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from memledger import bootstrap
from memledger.config import Settings
from memledger.errors import DatabaseUnavailable, LedgerError, NotFound
from memledger.events import NewEvent, Scopes, TurnRecorded
from memledger.library import MemoryLedger
from memledger.service import context, integrity, memory, projections, provenance, search
from memledger.service.record import TurnInput, record_turns
from memledger.store import db, event_store, row_security
from tests.conftest import DEADLINE_MS, TestDatabase

SCOPES = Scopes(session="shared-session", project="phoenix", user="sam")
A_TURNS = (
    "Project Phoenix uses Marmaladebase.",
    "Project Tobermory uses Redis.",
    "Project Tobermory uses Memcached.",
)
B_TURNS = (
    "Project Phoenix uses Quokkabase.",
    "The Phoenix service depends on the Quokkabase service.",
    "The Quokkabase service depends on the Zephyrinelib service.",  # two hops from Phoenix
    "Project Snorkelwave uses Redis.",
    "Project Snorkelwave uses Memcached.",  # two caches: a conflict
)
B_WORDS = ("Quokkabase", "Snorkelwave", "Zephyrinelib")

# What the application role may do, and nothing else (migration 0008, projectors.fences).
LEDGER_GRANTS = {
    ("public", "events"): {"SELECT", "INSERT"},
    ("public", "projection_checkpoints"): {"SELECT"},
    ("public", "tenant_secrets"): {"SELECT", "INSERT"},
}


@dataclass(frozen=True)
class TwoTenants:
    owner: Engine
    app: Engine
    ledger: MemoryLedger
    a: str
    b: str

    def as_a(self) -> Engine:
        return db.for_tenant(self.app, self.a)


@pytest.fixture(scope="module")
def two(database: TestDatabase) -> Iterator[TwoTenants]:
    """A database of its own with tenants A and B, extracted, projected and sealed."""
    url = database.new_database("isolation")
    ledger = MemoryLedger.open(Settings(DATABASE_URL=url.render_as_string(hide_password=False)))
    a, b = f"iso-a-{uuid.uuid4().hex[:8]}", f"iso-b-{uuid.uuid4().hex[:8]}"
    try:
        for tenant, texts in ((a, A_TURNS), (b, B_TURNS)):
            ledger.record_turns(tenant, [TurnInput(role="user", text=t, scopes=SCOPES) for t in texts])
        ledger.process()
        for tenant in (a, b):
            ledger.create_key(tenant, label=f"key of {tenant}")
            ledger.context(tenant, "Which database does Phoenix use?", scopes=SCOPES)
        projections.catch_up_all(ledger.engine)
        integrity.seal(ledger.engine)
        yield TwoTenants(ledger.engine, ledger.database.app_engine, ledger, a, b)
    finally:
        ledger.close()
        db.drop_database(database.server_url, str(url.database))


def _tenant_tables(engine: Engine) -> list[tuple[str, str]]:
    with engine.connect() as conn:
        # text(): a catalogue query over every schema of the database.
        rows = conn.execute(
            sa.text(
                "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped"
                " WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
                " ORDER BY 1, 2"
            )
        ).all()
    return [(str(s), str(t)) for s, t in rows]


def _q(schema: str, table: str) -> str:
    return f'"{schema}"."{table}"'


def _count(engine: Engine, sql: str, **params: object) -> int:
    with engine.connect() as conn:
        # text(): the test sends the raw SQL a compromised request path could send.
        return int(conn.execute(sa.text(sql), params).scalar_one())


# -- the fence is on every tenant table, and the role cannot get round it -------------------


def test_every_table_with_a_tenant_column_has_the_tenant_fence(two: TwoTenants) -> None:
    tables = _tenant_tables(two.owner)
    names = {t for _, t in tables}
    assert {"events", "event_chain", "extraction_counters", "tenant_secrets"} <= names
    assert {"facts", "conflicts", "entities", "relationships", "turns", "embeddings", "api_keys"} <= names
    with two.owner.connect() as conn:
        for schema, table in tables:
            # text(): catalogue queries.
            enabled = conn.execute(
                sa.text("SELECT relrowsecurity FROM pg_class WHERE oid = to_regclass(:name)"),
                {"name": _q(schema, table)},
            ).scalar_one()
            policies = conn.execute(
                sa.text(
                    "SELECT policyname, cmd, qual, with_check FROM pg_policies WHERE schemaname = :s AND tablename = :t"
                ),
                {"s": schema, "t": table},
            ).all()
            assert enabled, f"{schema}.{table} has no row-level security"
            assert [(p.policyname, p.cmd) for p in policies] == [(row_security.POLICY, "ALL")], (schema, table)
            for expression in (policies[0].qual, policies[0].with_check):
                assert "current_setting('memledger.tenant'" in expression and "tenant_id =" in expression


def test_the_application_role_is_granted_only_what_request_paths_need(two: TwoTenants) -> None:
    with two.owner.connect() as conn:
        # text(): a catalogue query.
        rows = conn.execute(
            sa.text(
                "SELECT table_schema, table_name, privilege_type FROM information_schema.role_table_grants"
                " WHERE grantee = :role"
            ),
            {"role": row_security.APP_ROLE},
        ).all()
    granted: dict[tuple[str, str], set[str]] = {}
    for schema, table, privilege in rows:
        granted.setdefault((schema, table), set()).add(privilege)
    read_models = {key: privileges for key, privileges in granted.items() if key[0].startswith("proj_")}
    assert {key: granted[key] for key in granted if key not in read_models} == LEDGER_GRANTS
    assert {t for _, t in read_models} >= {"facts", "entities", "relationships", "turns", "embeddings", "api_keys"}
    assert all(privileges == {"SELECT"} for privileges in read_models.values()), read_models
    fenced = set(_tenant_tables(two.owner))
    assert set(granted) - fenced == {("public", "projection_checkpoints")}  # no tenant column: cursors only


def test_the_application_role_owns_nothing_and_cannot_bypass_row_security(two: TwoTenants) -> None:
    with two.owner.connect() as conn:
        # text(): catalogue queries about the role.
        role = conn.execute(
            sa.text(
                "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolcanlogin"
                " FROM pg_roles WHERE rolname = :r"
            ),
            {"r": row_security.APP_ROLE},
        ).one()
        owned = conn.execute(
            sa.text(
                "SELECT (SELECT count(*) FROM pg_class WHERE relowner = r.oid)"
                " + (SELECT count(*) FROM pg_namespace WHERE nspowner = r.oid)"
                " + (SELECT count(*) FROM pg_proc WHERE proowner = r.oid)"
                " + (SELECT count(*) FROM pg_auth_members WHERE member = r.oid)"
                " FROM pg_roles r WHERE rolname = :r"
            ),
            {"r": row_security.APP_ROLE},
        ).scalar_one()
    assert tuple(role) == (False, False, False, False, True)
    assert owned == 0
    db.check_app_role(two.app)  # the check a server runs at start passes for it...
    owner_as_app = db.create_app_engine(two.owner.url)
    try:
        with pytest.raises(DatabaseUnavailable, match="superuser"):
            db.check_app_role(owner_as_app)  # ...and refuses the owner's URL given as the app's
    finally:
        owner_as_app.dispose()


@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE events DISABLE ROW LEVEL SECURITY",
        "ALTER TABLE events NO FORCE ROW LEVEL SECURITY",
        "DROP POLICY tenant_fence ON events",
        "CREATE POLICY open_door ON events USING (true)",
        "ALTER TABLE proj_facts.facts DISABLE ROW LEVEL SECURITY",
        "SET ROLE postgres",
        "SET SESSION AUTHORIZATION postgres",
        "ALTER ROLE memledger_app BYPASSRLS",
        "CREATE TABLE public.mine (tenant_id text)",
        "UPDATE events SET payload = payload",
        "DELETE FROM events",
        "UPDATE proj_facts.facts SET statement = 'x'",
        "DELETE FROM proj_turns.turns",
        "SELECT count(*) FROM embedding_cache",
        "SELECT count(*) FROM event_chain",
        "SELECT count(*) FROM extraction_counters",
    ],
)
def test_the_application_role_cannot_lift_the_fence(two: TwoTenants, statement: str) -> None:
    with pytest.raises(sa_exc.DBAPIError) as info, two.as_a().begin() as tx:
        # text(): the raw SQL a compromised request path could send.
        tx.execute(sa.text(statement))
    assert getattr(info.value.orig, "sqlstate", "") == "42501", info.value  # insufficient_privilege


def test_row_security_off_is_an_error_not_a_way_round(two: TwoTenants) -> None:
    with pytest.raises(sa_exc.DBAPIError, match="row-level security"), two.as_a().begin() as tx:
        # text(): a session setting the role may change, which then refuses the query.
        tx.execute(sa.text("SET LOCAL row_security = off"))
        tx.execute(sa.text("SELECT count(*) FROM events"))


# -- reading and writing across tenants in raw SQL ---------------------------------------


def test_with_tenant_a_set_no_table_shows_a_row_of_b(two: TwoTenants) -> None:
    for schema, table in _tenant_tables(two.owner):
        name = _q(schema, table)
        of_a, of_b = (
            _count(two.owner, f"SELECT count(*) FROM {name} WHERE tenant_id = :t", t=tenant)
            for tenant in (two.a, two.b)
        )
        assert of_a > 0 and of_b > 0, f"the seed left {name} without rows of both tenants"  # the control
        if table in {"event_chain", "extraction_counters"}:
            continue  # the application role may not read these at all (see the test above)
        a_sees_of_b = _count(two.as_a(), f"SELECT count(*) FROM {name} WHERE tenant_id = :b", b=two.b)
        a_sees_not_a = _count(two.as_a(), f"SELECT count(*) FROM {name} WHERE tenant_id <> :a", a=two.a)
        assert (a_sees_of_b, a_sees_not_a) == (0, 0), name
        assert _count(two.as_a(), f"SELECT count(*) FROM {name}") == of_a, name


def test_b_s_words_appear_in_no_row_a_can_read(two: TwoTenants) -> None:
    readable = [(s, t) for s, t in _tenant_tables(two.owner) if t not in {"event_chain", "extraction_counters"}]
    for schema, table in readable:
        name = _q(schema, table)
        for word in B_WORDS:
            assert _count(two.as_a(), f"SELECT count(*) FROM {name} x WHERE x::text ILIKE :w", w=f"%{word}%") == 0
    owner_found = sum(
        _count(two.owner, f"SELECT count(*) FROM {_q(s, t)} x WHERE x::text ILIKE :w", w="%Quokkabase%")
        for s, t in readable
    )
    assert owner_found >= 4  # the control: events, turns, facts, entities, relationships hold it


def test_a_row_of_b_cannot_be_written_with_tenant_a_set(two: TwoTenants) -> None:
    new = NewEvent(
        event=TurnRecorded(turn_id="forged", role="user", text="forged", scopes=SCOPES),
        event_id=f"forged-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
    )
    with pytest.raises(sa_exc.DBAPIError, match="row-level security"), two.as_a().begin() as tx:
        event_store.append(tx, two.b, "conversation:forged", [new], None)
    with pytest.raises(sa_exc.DBAPIError, match="row-level security"), two.as_a().begin() as tx:
        # text(): a raw insert of another tenant's secret.
        tx.execute(sa.text("INSERT INTO tenant_secrets (tenant_id) VALUES (:b)"), {"b": f"{two.b}-new"})
    with pytest.raises(sa_exc.DBAPIError, match="permission denied"), two.as_a().begin() as tx:
        # text(): read models are written by their projectors only.
        tx.execute(
            sa.text(
                "INSERT INTO proj_api_keys.api_keys (tenant_id, key_id, key_sha256, label, issued_at)"
                " VALUES (:b, 'k-forged', 'forged', 'forged', now())"
            ),
            {"b": two.b},
        )
    assert _count(two.owner, "SELECT count(*) FROM events WHERE event_id = :e", e=new.event_id) == 0


def test_without_a_tenant_nothing_is_visible_and_nothing_writable(two: TwoTenants) -> None:
    for schema, table in _tenant_tables(two.owner):
        if table not in {"event_chain", "extraction_counters"}:
            assert _count(two.app, f"SELECT count(*) FROM {_q(schema, table)}") == 0, table
    with two.as_a().begin() as tx:
        # text(): a tenant set, then reset inside the transaction.
        assert tx.execute(sa.text("SELECT count(*) FROM events")).scalar_one() > 0
        tx.execute(sa.text("RESET memledger.tenant"))
        assert tx.execute(sa.text("SELECT count(*) FROM events")).scalar_one() == 0
    new = NewEvent(
        event=TurnRecorded(turn_id="nobody", role="user", text="nobody", scopes=SCOPES),
        event_id=f"nobody-{uuid.uuid4().hex}",
        occurred_at=datetime.now(UTC),
    )
    with pytest.raises(sa_exc.DBAPIError, match="row-level security"), two.app.begin() as tx:
        event_store.append(tx, two.a, "conversation:nobody", [new], None)


def test_a_tenant_set_by_hand_on_the_session_does_not_outlive_the_hook(two: TwoTenants) -> None:
    with two.app.connect() as conn:
        # text(): a session-level setting, as a careless statement would leave it.
        conn.execute(sa.text("SELECT set_config('memledger.tenant', :b, false)"), {"b": two.b})
        conn.commit()
        # The next transaction begins through the hook, which sets the (absent) tenant again.
        assert conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one() == 0
        conn.rollback()
        conn.execute(sa.text("RESET memledger.tenant"))
        conn.commit()


def test_a_pooled_connection_does_not_carry_a_tenant_to_the_next_one(two: TwoTenants) -> None:
    app = db.create_app_engine(two.app.url, pool_size=1)
    try:
        with db.for_tenant(app, two.b).connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one() > 0  # text(): a probe
        with db.for_tenant(app, two.a).connect() as conn:
            # text(): the same pooled connection, now for A.
            assert conn.execute(sa.text("SELECT count(*) FROM events WHERE tenant_id = :b"), {"b": two.b}).scalar() == 0
        with app.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM events")).scalar_one() == 0  # text(): a probe
    finally:
        app.dispose()


def test_local_settings_ride_on_the_tenant_statement_and_never_outlive_their_connection(two: TwoTenants) -> None:
    wanted = {
        "statement_timeout": "750",
        "hnsw.iterative_scan": "relaxed_order",
        "plan_cache_mode": "force_custom_plan",
    }
    chosen = ("750ms", "relaxed_order", "force_custom_plan")
    # text(): the settings as the session sees them.
    probe = sa.text(
        "SELECT current_setting('memledger.tenant', true), current_setting('statement_timeout'),"
        " current_setting('hnsw.iterative_scan', true), current_setting('plan_cache_mode')"
    )
    statements: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement)

    for engine, tenant in ((two.as_a(), two.a), (two.owner, None)):
        statements.clear()
        sa.event.listen(engine, "before_cursor_execute", seen)
        try:
            with engine.connect() as plain:
                conn = db.with_local_settings(plain, wanted)
                assert conn.execute(probe).one() == (tenant, *chosen)
                conn.rollback()
                again = conn.execute(probe).one()[1:]  # an app connection sets them at every begin
                assert (again == chosen) is (tenant is not None)
            with engine.connect() as conn:  # the same pooled connection, a new Connection: none of them
                assert conn.execute(probe).one()[1:] != chosen
        finally:
            sa.event.remove(engine, "before_cursor_execute", seen)
        # On the app engine they cost no statement of their own (the hook's runs through the driver).
        assert len(statements) == (3 if tenant else 4)


def test_a_blank_or_malformed_tenant_is_refused_before_any_sql(two: TwoTenants) -> None:
    for bad in ("", "  ", "a\x00b"):
        with pytest.raises(LedgerError, match="tenant_id"):
            two.ledger.database.for_tenant(bad)


# -- the service layer, asked for the wrong tenant, is stopped by the fence ----------------


def _b_fact(two: TwoTenants) -> str:
    found = search.search(two.owner, two.b, SCOPES, "Quokkabase", k=5)
    return next(i.item_id for i in found if i.kind == "fact")


def test_service_reads_for_tenant_b_through_a_s_engine_find_nothing(two: TwoTenants) -> None:
    fact = _b_fact(two)
    assert search.search(two.as_a(), two.b, SCOPES, "Quokkabase Snorkelwave", k=10) == []
    assert search.query_graph(two.as_a(), two.b, "Phoenix", depth=3).edges == []
    assert search.query_graph(two.owner, two.b, "Phoenix", depth=3).edges  # the control
    with pytest.raises(NotFound):
        provenance.provenance(two.as_a(), two.b, fact)
    assert memory.conflicts(two.as_a(), two.b) == []
    assert memory.conflicts(two.owner, two.b)  # the control: B's two caches for Snorkelwave
    request = context.SelectRequest(two.b, SCOPES, "Which database does Phoenix use?", deadline_ms=DEADLINE_MS)
    assert context.select(two.as_a(), request).items == ()
    assert context.select(two.owner, request).items  # the control


def test_service_writes_for_tenant_b_through_a_s_engine_are_refused(two: TwoTenants) -> None:
    before = _count(two.owner, "SELECT count(*) FROM events WHERE tenant_id = :b", b=two.b)
    with pytest.raises(LedgerError, match="row-level security"):
        record_turns(two.as_a(), two.b, [TurnInput(role="user", text="forged Quokkabase turn", scopes=SCOPES)])
    with pytest.raises(NotFound):  # the fence hides B's fact: nothing to retract
        memory.retract(two.as_a(), two.b, _b_fact(two), reason="forged")
    assert _count(two.owner, "SELECT count(*) FROM events WHERE tenant_id = :b", b=two.b) == before


def test_a_rebuilt_projection_keeps_its_fence(two: TwoTenants) -> None:
    projections.rebuild(two.owner, "facts")
    with two.owner.connect() as conn:
        # text(): a catalogue query.
        enabled = conn.execute(sa.text("SELECT relrowsecurity FROM pg_class WHERE oid = 'proj_facts.facts'::regclass"))
        assert enabled.scalar_one()
    assert _count(two.as_a(), "SELECT count(*) FROM proj_facts.facts WHERE tenant_id = :b", b=two.b) == 0
    assert _count(two.as_a(), "SELECT count(*) FROM proj_facts.facts") > 0


def test_the_application_role_s_password_is_set_as_a_verifier(two: TwoTenants) -> None:
    secret = f"pw-{uuid.uuid4().hex}"
    try:
        with two.owner.begin() as tx:
            row_security.set_app_password(tx, secret)
        with two.owner.connect() as conn:
            # text(): the stored verifier, readable by a superuser only.
            stored = conn.execute(
                sa.text("SELECT rolpassword FROM pg_authid WHERE rolname = :r"), {"r": row_security.APP_ROLE}
            ).scalar_one()
        assert stored.startswith("SCRAM-SHA-256$") and secret not in stored
    finally:
        with two.owner.begin() as tx:
            # text(): back to no password (the embedded server trusts local connections).
            tx.execute(sa.text(f"ALTER ROLE {row_security.APP_ROLE} PASSWORD NULL"))


def test_fenced_full_text_search_keeps_its_gin_index(two: TwoTenants) -> None:
    """Under row-level security a condition is an index condition only if its function
    is LEAKPROOF; migration 0008 marks the full-text match so (see row_security)."""
    with two.owner.begin() as tx:
        # text(): 3,000 turns of A, of which one mentions the word, so that only the GIN
        # index is worth using; rolled back at the end. Then the plan as the app role.
        tx.execute(
            sa.text(
                "INSERT INTO proj_turns.turns (tenant_id, turn_id, role, text, stream_id, event_id, position,"
                " occurred_at, recorded_at) SELECT :a, 'bulk-' || n, 'user',"
                " CASE WHEN n = 1 THEN 'xylograph' ELSE 'turn number ' || n END, 's', 'e-' || n, n, now(), now()"
                " FROM generate_series(1, 3000) AS n"
            ),
            {"a": two.a},
        )
        tx.execute(sa.text("ANALYZE proj_turns.turns"))
        tx.execute(sa.text(f"SET LOCAL ROLE {row_security.APP_ROLE}"))
        tx.execute(sa.select(sa.func.set_config(row_security.TENANT_SETTING, two.a, True)))
        plan = "\n".join(
            tx.execute(
                sa.text("EXPLAIN SELECT turn_id FROM proj_turns.turns WHERE tsv @@ to_tsquery('english', 'xylograph')")
            ).scalars()
        )
        found = tx.execute(
            sa.text("SELECT count(*) FROM proj_turns.turns WHERE tsv @@ to_tsquery('english', 'xylograph')")
        )
        assert found.scalar_one() == 1
        tx.rollback()
    assert "Bitmap Index Scan on turns_tsv" in plan, plan


def test_a_start_marks_the_full_text_match_leakproof_again_after_a_restore_dropped_it(two: TwoTenants) -> None:
    def marked() -> bool:
        with two.owner.connect() as conn:
            # text(): a catalogue query.
            query = (
                "SELECT proleakproof FROM pg_proc WHERE oid = 'pg_catalog.ts_match_vq(tsvector, tsquery)'::regprocedure"
            )
            return bool(conn.execute(sa.text(query)).scalar_one())

    assert marked()
    with two.owner.begin() as tx:
        # text(): what a dump and restore leaves: the built-in function as it ships.
        tx.execute(sa.text("ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) NOT LEAKPROOF"))
    assert not marked()
    bootstrap.connect(Settings(DATABASE_URL=two.owner.url.render_as_string(hide_password=False))).close()
    assert marked()
