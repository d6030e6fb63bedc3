"""The cache of answers asked on every request: kept for a time, dropped by a change."""

from __future__ import annotations

import pytest

from memledger.service.ttl_cache import TtlCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_answer_is_kept_for_its_time_and_no_longer() -> None:
    clock = Clock()
    cache: TtlCache[str, int] = TtlCache(2.0, 8, clock)
    cache.put("a", 1, cache.generation())
    clock.now += 1.99
    assert cache.get("a") == 1
    clock.now += 0.01
    assert cache.get("a") is None


def test_a_drop_forgets_what_matches_and_keeps_the_rest() -> None:
    cache: TtlCache[str, tuple[str, str]] = TtlCache(60.0, 8, Clock())
    cache.put("k1", ("t1", "key-1"), cache.generation())
    cache.put("k2", ("t1", "key-2"), cache.generation())
    cache.drop_where(lambda _k, v: v == ("t1", "key-1"))
    assert cache.get("k1") is None
    assert cache.get("k2") == ("t1", "key-2")


def test_an_answer_read_across_a_drop_is_not_kept() -> None:
    cache: TtlCache[str, int] = TtlCache(60.0, 8, Clock())
    before = cache.generation()  # a read begins
    cache.drop_where(lambda _k, _v: True)  # a revocation lands meanwhile
    cache.put("a", 1, before)  # the read ends with what it saw before the revocation
    assert cache.get("a") is None
    cache.put("a", 2, cache.generation())
    assert cache.get("a") == 2


def test_it_holds_at_most_its_size_dropping_the_oldest() -> None:
    cache: TtlCache[int, int] = TtlCache(60.0, 3, Clock())
    for n in range(5):
        cache.put(n, n, cache.generation())
    assert [cache.get(n) for n in range(5)] == [None, None, 2, 3, 4]


def test_a_time_of_zero_keeps_nothing_and_bad_bounds_are_refused() -> None:
    cache: TtlCache[str, int] = TtlCache(0.0, 8, Clock())
    cache.put("a", 1, cache.generation())
    assert cache.get("a") is None
    with pytest.raises(ValueError, match="max_entries"):
        TtlCache(1.0, 0)


def test_get_or_load_keeps_what_it_loaded_but_not_none_nor_what_a_drop_raced() -> None:
    cache: TtlCache[str, int] = TtlCache(2.0, 8, Clock())
    loads: list[str] = []

    def load(key: str, value: int | None) -> int | None:
        loads.append(key)
        return value

    assert cache.get_or_load("a", lambda: load("a", 1)) == 1
    assert cache.get_or_load("a", lambda: load("a", 2)) == 1, "kept: not loaded again"
    assert cache.get_or_load("none", lambda: load("none", None)) is None
    assert cache.get("none") is None, "an unknown answer is not kept"

    def load_raced() -> int:
        cache.drop_where(lambda _k, _v: False)  # a revocation lands while the answer is read
        return 3

    assert cache.get_or_load("b", load_raced) == 3
    assert cache.get("b") is None, "an answer read across a drop is not kept"
    assert loads == ["a", "none"]
