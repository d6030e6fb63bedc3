"""Recording a batch that repeats turns recorded before: the repeated turns keep their
positions and only the new ones are appended, also when several clients resend
overlapping buffers at once (real concurrent writers on one conversation stream)."""

from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from memledger.errors import InvalidCommand
from memledger.events.catalogue import Scopes
from memledger.service.record import TurnInput, record_turns
from memledger.store.schema import events

SCOPES = Scopes(session="resent", project="p")


def _turn(n: int, text: str | None = None) -> TurnInput:
    return TurnInput(role="user", text=text or f"turn number {n}", turn_id=f"t-{n:02d}", scopes=SCOPES)


def _recorded(engine: Engine, tenant: str) -> dict[str, int]:
    stmt = sa.select(events.c.event_id, events.c.position).where(
        events.c.tenant_id == tenant, events.c.event_type == "turn.recorded"
    )
    with engine.connect() as conn:
        return {event_id: int(position) for event_id, position in conn.execute(stmt).all()}


def test_a_resent_buffer_keeps_the_old_positions_and_appends_the_rest_in_order(engine: Engine, tenant: str) -> None:
    [first] = record_turns(engine, tenant, [_turn(1), _turn(2)])

    [again] = record_turns(engine, tenant, [_turn(1), _turn(2), _turn(3), _turn(4)])

    assert again.positions[:2] == first.positions
    assert again.positions[1] < again.positions[2] < again.positions[3]
    assert (again.replayed, again.appended_before) == (False, 2)
    expected = {f"turn:t-{n:02d}": p for n, p in zip(range(1, 5), again.positions, strict=True)}
    assert _recorded(engine, tenant) == expected
    [retry] = record_turns(engine, tenant, [_turn(3), _turn(1)])
    assert (retry.replayed, retry.appended_before) == (True, 2)
    assert retry.positions == (again.positions[2], first.positions[0])


def test_a_resent_turn_with_other_text_refuses_the_whole_batch(engine: Engine, tenant: str) -> None:
    record_turns(engine, tenant, [_turn(1)])

    with pytest.raises(InvalidCommand, match="'turn:t-01' was appended before with other content"):
        record_turns(engine, tenant, [_turn(1, "edited afterwards"), _turn(2)])

    assert set(_recorded(engine, tenant)) == {"turn:t-01"}


def test_a_turn_recorded_in_another_session_is_still_refused(engine: Engine, tenant: str) -> None:
    record_turns(engine, tenant, [_turn(1)])
    moved = TurnInput(role="user", text="turn number 1", turn_id="t-01", scopes=Scopes(session="elsewhere"))

    with pytest.raises(InvalidCommand, match="already appended in another batch or stream"):
        record_turns(engine, tenant, [moved, TurnInput(role="user", text="new", scopes=Scopes(session="elsewhere"))])

    assert set(_recorded(engine, tenant)) == {"turn:t-01"}


def test_clients_resending_overlapping_buffers_at_once_record_each_turn_once(engine: Engine, tenant: str) -> None:
    """Eight writers, each sending turns 0..k of one conversation, all started together:
    every turn is recorded once, and every writer gets the same position for it."""
    writers = 8
    barrier = threading.Barrier(writers)
    seen: list[dict[str, int]] = []
    errors: list[BaseException] = []

    def write(k: int) -> None:
        batch = [_turn(n) for n in range(k + 3)]
        barrier.wait()
        try:
            [result] = record_turns(engine, tenant, batch)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            return
        seen.append({f"turn:{t.turn_id}": p for t, p in zip(batch, result.positions, strict=True)})

    threads = [threading.Thread(target=write, args=(k,)) for k in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert errors == []
    recorded = _recorded(engine, tenant)
    assert len(recorded) == writers + 2
    for positions in seen:
        assert positions == {event_id: recorded[event_id] for event_id in positions}
