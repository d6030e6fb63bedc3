from sqlalchemy.engine import Engine

from memledger.store import event_reads, event_store
from tests.conftest import turn_event


def test_append_then_read_stream_returns_events_in_order(engine: Engine, tenant: str) -> None:
    with engine.begin() as tx:
        result = event_store.append(tx, tenant, "conv", [turn_event("a"), turn_event("b")], 0)
    with engine.connect() as conn:
        got = event_reads.read_stream(conn, tenant, "conv")
    assert [r.position for r in got] == list(result.positions)
    assert [r.event.text for r in got] == ["a", "b"]  # type: ignore[attr-defined]
    assert result.stream_version == 2
