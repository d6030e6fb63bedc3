"""Turns for context selections (service/turns.py): at most ``limit`` holders, the rest
served first come, first served, each waiting no longer than it said."""

from __future__ import annotations

import threading
import time

import pytest

from memledger.service.turns import Turns


def _waiter(turns: Turns, name: str, order: list[str], release: threading.Event) -> threading.Thread:
    def run() -> None:
        assert turns.acquire(10.0)
        order.append(name)
        release.wait(10.0)
        turns.release()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def _until(condition: object, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_turns_go_to_waiters_in_the_order_they_came_not_to_a_caller_that_gives_one_back() -> None:
    turns = Turns(1)
    assert turns.acquire(0)
    order: list[str] = []
    go = threading.Event()
    threads = []
    for name in "abcde":
        threads.append(_waiter(turns, name, order, go))
        queued = len(threads)
        _until(lambda queued=queued: turns.waiting == queued)  # each queued before the next comes
    # The holder gives its turn back and asks again at once: a semaphore would let it
    # take the turn again; here it waits behind the five.
    turns.release()
    late = threading.Thread(target=lambda: (turns.acquire(10.0), order.append("late"), turns.release()))
    late.start()
    go.set()
    for thread in [*threads, late]:
        thread.join(10.0)
    assert order == ["a", "b", "c", "d", "e", "late"]


def test_a_caller_waits_no_longer_than_its_timeout_and_leaves_no_turn_taken() -> None:
    turns = Turns(2)
    assert turns.acquire(0) and turns.acquire(0)
    started = time.monotonic()
    assert not turns.acquire(0.05)
    assert 0.04 <= time.monotonic() - started < 2.0
    assert turns.waiting == 0
    turns.release()
    assert turns.acquire(0)  # the freed turn is there: the one that gave up took none
    assert not turns.acquire(0)


def test_the_turn_block_raises_a_timeout_and_gives_its_turn_back() -> None:
    turns = Turns(1)
    with turns.turn(1.0), pytest.raises(TimeoutError, match="no turn to select within 10 ms"), turns.turn(0.01):
        pass
    with turns.turn(0):  # given back after the block, with or without an error inside it
        pass
    with pytest.raises(RuntimeError), turns.turn(0):
        raise RuntimeError("inside")
    assert turns.acquire(0)


def test_raising_the_limit_lets_waiters_in_and_no_limit_lets_all_in() -> None:
    turns = Turns(1)
    assert turns.acquire(0)
    order: list[str] = []
    go = threading.Event()
    threads = [_waiter(turns, name, order, go) for name in "ab"]
    _until(lambda: turns.waiting == 2)
    turns.resize(2)
    _until(lambda: order == ["a"])
    assert turns.waiting == 1
    turns.resize(0)
    _until(lambda: order == ["a", "b"])
    assert turns.acquire(0) and turns.acquire(0) and turns.acquire(0)  # no limit
    go.set()
    for thread in threads:
        thread.join(10.0)
    for _ in range(4):
        turns.release()
    turns.resize(1)  # back to one: every turn was given back, so one is free
    assert turns.acquire(0)
    assert not turns.acquire(0)


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="limit must be 0"):
        Turns(-1)
    with pytest.raises(ValueError, match="limit must be 0"):
        Turns(1).resize(-2)


def test_held_counts_the_turns_taken_and_given_back_handed_over_included() -> None:
    turns = Turns(1)
    assert turns.held == 0
    assert turns.acquire(0)
    order: list[str] = []
    go = threading.Event()
    waiter = _waiter(turns, "a", order, go)
    _until(lambda: turns.waiting == 1)
    assert turns.held == 1
    turns.release()  # handed to the waiter: still one held
    _until(lambda: order == ["a"])
    assert turns.held == 1
    go.set()
    waiter.join(10.0)
    assert turns.held == 0
    unlimited = Turns(0)
    assert unlimited.acquire(0) and unlimited.acquire(0)
    assert unlimited.held == 2
