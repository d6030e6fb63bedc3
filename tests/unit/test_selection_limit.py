"""The limit on context selections (service/selection_limit.py): at most ``limit`` holders, the rest
served first come, first served, each waiting no longer than it said."""

from __future__ import annotations

import threading
import time

import pytest

from memledger.service.selection_limit import SelectionLimit


def _waiter(limit: SelectionLimit, name: str, order: list[str], release: threading.Event) -> threading.Thread:
    def run() -> None:
        assert limit.acquire(10.0)
        order.append(name)
        release.wait(10.0)
        limit.release()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _until(condition: object, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_slots_go_to_waiters_in_the_order_they_came_not_to_a_caller_that_gives_one_back() -> None:
    limit = SelectionLimit(1)
    assert limit.acquire(0)
    order: list[str] = []
    go = threading.Event()
    threads = []
    for name in "abcde":
        threads.append(_waiter(limit, name, order, go))
        queued = len(threads)
        _until(lambda queued=queued: limit.waiting == queued)  # each queued before the next comes
    # The holder gives its slot back and asks again at once: a semaphore would let it
    # take the slot again; here it waits behind the five.
    limit.release()
    late = threading.Thread(target=lambda: (limit.acquire(10.0), order.append("late"), limit.release()))
    late.start()
    go.set()
    for thread in [*threads, late]:
        thread.join(10.0)
    assert order == ["a", "b", "c", "d", "e", "late"]


def test_a_caller_waits_no_longer_than_its_timeout_and_leaves_no_slot_taken() -> None:
    limit = SelectionLimit(2)
    assert limit.acquire(0) and limit.acquire(0)
    started = time.monotonic()
    assert not limit.acquire(0.05)
    assert 0.04 <= time.monotonic() - started < 2.0
    assert limit.waiting == 0
    limit.release()
    assert limit.acquire(0)  # the freed slot is there: the one that gave up took none
    assert not limit.acquire(0)


def test_the_hold_block_raises_a_timeout_and_gives_its_slot_back() -> None:
    limit = SelectionLimit(1)
    with limit.hold(1.0), pytest.raises(TimeoutError, match="no slot to select within 10 ms"), limit.hold(0.01):
        pass
    with limit.hold(0):  # given back after the block, with or without an error inside it
        pass
    with pytest.raises(RuntimeError), limit.hold(0):
        raise RuntimeError("inside")
    assert limit.acquire(0)


def test_raising_the_limit_lets_waiters_in_and_no_limit_lets_all_in() -> None:
    limit = SelectionLimit(1)
    assert limit.acquire(0)
    order: list[str] = []
    go = threading.Event()
    threads = [_waiter(limit, name, order, go) for name in "ab"]
    _until(lambda: limit.waiting == 2)
    limit.resize(2)
    _until(lambda: order == ["a"])
    assert limit.waiting == 1
    limit.resize(0)
    _until(lambda: order == ["a", "b"])
    assert limit.acquire(0) and limit.acquire(0) and limit.acquire(0)  # no limit
    go.set()
    for thread in threads:
        thread.join(10.0)
    for _ in range(4):
        limit.release()
    limit.resize(1)  # back to one: every slot was given back, so one is free
    assert limit.acquire(0)
    assert not limit.acquire(0)


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="limit must be 0"):
        SelectionLimit(-1)
    with pytest.raises(ValueError, match="limit must be 0"):
        SelectionLimit(1).resize(-2)


def test_held_counts_the_slots_taken_and_given_back_handed_over_included() -> None:
    limit = SelectionLimit(1)
    assert limit.held == 0
    assert limit.acquire(0)
    order: list[str] = []
    go = threading.Event()
    waiter = _waiter(limit, "a", order, go)
    _until(lambda: limit.waiting == 1)
    assert limit.held == 1
    limit.release()  # handed to the waiter: still one held
    _until(lambda: order == ["a"])
    assert limit.held == 1
    go.set()
    waiter.join(10.0)
    assert limit.held == 0
    unlimited = SelectionLimit(0)
    assert unlimited.acquire(0) and unlimited.acquire(0)
    assert unlimited.held == 2
