import sqlalchemy as sa
from tests.integration.test_extraction_worker import *
def test_dbg(engine, tenant):
    worker = new_worker(engine, batch_turns=2)
    with engine.connect() as conn:
        print("cp", checkpoints.get(conn, worker.name))
    record(engine, tenant, "@entity Docker|0.95")
    with engine.connect() as conn:
        print(conn.execute(sa.text("select tx_id::text, position, event_type, tenant_id from events order by position desc limit 3")).all())
        print(conn.execute(sa.text("select pg_current_snapshot()::text, pg_current_xact_id_if_assigned()::text")).all())
        print(conn.execute(sa.text("select pid, state, backend_xid, backend_xmin, query, application_name from pg_stat_activity where datname is not null")).all())
    print(worker.pending())
