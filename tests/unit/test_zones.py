"""Token budget zones: minimums, preferred and maximum shares, leftovers, rounding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memledger.formatting import DEFAULT_ZONES, ZoneSpec, allocate, memory_budget
from memledger.formatting.zones import LEFTOVER_ORDER

SMALLEST_DEFAULT_WINDOW = 1859


def test_default_zones_of_a_128k_window() -> None:
    assert allocate(128_000) == {
        "system": 12_800,
        "tools": 19_200,
        "memory": 44_800,
        "history": 32_000,
        "reserve": 19_200,
    }
    assert memory_budget(128_000) == 44_800


@pytest.mark.parametrize("window", [SMALLEST_DEFAULT_WINDOW, 2_000, 4_096, 8_192, 32_768, 200_000, 1_000_000])
def test_default_zones_fill_the_window_exactly(window: int) -> None:
    budgets = allocate(window)
    assert sum(budgets.values()) == window
    assert list(budgets) == list(DEFAULT_ZONES)
    for name, spec in DEFAULT_ZONES.items():
        assert budgets[name] >= spec.min_tokens


def test_a_tiny_window_that_cannot_hold_the_minimums_is_refused() -> None:
    with pytest.raises(ValueError, match=r"window of 1000 tokens .* add up to 1474 tokens"):
        allocate(1_000)
    with pytest.raises(ValueError, match=r"window of 1858 tokens .* add up to 1859 tokens"):
        allocate(SMALLEST_DEFAULT_WINDOW - 1)
    with pytest.raises(ValueError, match="window of 0 tokens"):
        memory_budget(0)


def test_absolute_minimums_win_in_small_windows_and_the_rest_is_shared() -> None:
    # Floors: system 256, tools 300, memory 600, history 512, reserve 256 (1924).
    # Preferred shares still lack 100 (memory) and 44 (reserve); 76 tokens are left,
    # shared in proportion: memory 52.8 -> 53, reserve 23.2 -> 23.
    assert allocate(2_000) == {"system": 256, "tools": 300, "memory": 653, "history": 512, "reserve": 279}


def test_huge_windows_are_split_exactly() -> None:
    window = 10**12
    assert allocate(window) == {
        "system": 10**11,
        "tools": 15 * 10**10,
        "memory": 35 * 10**10,
        "history": 25 * 10**10,
        "reserve": 15 * 10**10,
    }


def test_leftover_goes_to_history_then_reserve_up_to_their_maximums() -> None:
    zones = {
        "memory": ZoneSpec(min_share=0.1, preferred_share=0.2, max_share=0.3),
        "history": ZoneSpec(min_share=0.1, preferred_share=0.2, max_share=0.4),
        "reserve": ZoneSpec(min_share=0.0, preferred_share=0.1, max_share=0.25),
    }
    # Preferred: 200 + 200 + 100; the 500 left give history +200 (to 400), reserve +150 (to 250).
    assert allocate(1_000, zones) == {"memory": 200, "history": 400, "reserve": 250}


def test_tokens_beyond_every_cap_stay_unallocated() -> None:
    zones = {"memory": ZoneSpec(min_share=0.1, preferred_share=0.2, max_share=0.5)}
    assert allocate(1_000, zones) == {"memory": 200}
    assert memory_budget(1_000, zones) == 200


def test_custom_zones_may_have_any_names() -> None:
    zones = {
        "system": ZoneSpec(min_share=0.05, preferred_share=0.05, max_share=0.1, min_tokens=500),
        "retrieval": ZoneSpec(min_share=0.2, preferred_share=0.3, max_share=0.4),
        "memory": ZoneSpec(min_share=0.1, preferred_share=0.2, max_share=0.3),
        "history": ZoneSpec(min_share=0.2, preferred_share=0.45, max_share=0.6),
    }
    assert allocate(20_000, zones) == {"system": 1_000, "retrieval": 6_000, "memory": 4_000, "history": 9_000}
    # At 8,000 tokens the system minimum (500 > 5%) leaves 3,500 for 3,600 wanted, shared in proportion.
    assert allocate(8_000, zones) == {"system": 500, "retrieval": 2_378, "memory": 1_578, "history": 3_544}


def test_an_absolute_minimum_above_the_maximum_share_still_holds() -> None:
    zones = {
        "system": ZoneSpec(min_share=0.0, preferred_share=0.1, max_share=0.1, min_tokens=900),
        "history": ZoneSpec(min_share=0.0, preferred_share=0.5, max_share=0.5),
    }
    assert allocate(1_000, zones) == {"system": 900, "history": 100}


@pytest.mark.parametrize(
    ("zones", "message"),
    [
        (
            {"a": ZoneSpec(min_share=0.6, preferred_share=0.6, max_share=1.0),
             "b": ZoneSpec(min_share=0.5, preferred_share=0.5, max_share=1.0)},
            "minimum shares add up to 1.1",
        ),
        (
            {"a": ZoneSpec(min_share=0.1, preferred_share=0.7, max_share=1.0),
             "b": ZoneSpec(min_share=0.1, preferred_share=0.4, max_share=1.0)},
            "preferred shares add up to 1.1",
        ),
        ({}, "at least one zone"),
    ],
)  # fmt: skip
def test_shares_over_the_whole_window_are_refused(zones: dict[str, ZoneSpec], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        allocate(10_000, zones)


def test_shares_adding_up_to_exactly_one_are_accepted() -> None:
    zones = {name: ZoneSpec(min_share=0.1, preferred_share=0.1, max_share=0.1) for name in "abcdefghij"}
    assert sum(allocate(12_345, zones).values()) == 12_340


@pytest.mark.parametrize(
    "fields",
    [
        {"min_share": -0.1, "preferred_share": 0.1, "max_share": 0.2},
        {"min_share": 0.1, "preferred_share": 0.2, "max_share": 1.5},
        {"min_share": 0.3, "preferred_share": 0.2, "max_share": 0.4},
        {"min_share": 0.1, "preferred_share": 0.5, "max_share": 0.4},
        {"min_share": 0.1, "preferred_share": 0.2, "max_share": 0.4, "min_tokens": -1},
        {"min_share": float("nan"), "preferred_share": 0.2, "max_share": 0.4},
    ],
)
def test_invalid_zone_specs_are_refused(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=r"zone shares|min_tokens"):
        ZoneSpec(**fields)  # type: ignore[arg-type]


def test_negative_windows_and_missing_memory_zone_are_refused() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        allocate(-1)
    with pytest.raises(ValueError, match="no 'memory' zone"):
        memory_budget(1_000, {"history": ZoneSpec(min_share=0.1, preferred_share=0.5, max_share=1.0)})


@st.composite
def zone_specs(draw: st.DrawFn) -> dict[str, ZoneSpec]:
    """Valid zones: shares in thousandths, minimum and preferred shares adding up to at most 1."""
    names = draw(st.lists(st.sampled_from(["system", "tools", "memory", "history", "reserve", "rag"]),
                          min_size=1, max_size=6, unique=True))  # fmt: skip
    specs: dict[str, ZoneSpec] = {}
    left = 1000  # thousandths of preferred share still free (minimums are below preferred)
    for name in names:
        low = draw(st.integers(0, left))
        preferred = draw(st.integers(low, left))
        high = draw(st.integers(preferred, 1000))
        left -= preferred
        specs[name] = ZoneSpec(min_share=low / 1000, preferred_share=preferred / 1000, max_share=high / 1000,
                               min_tokens=draw(st.integers(0, 5_000)))  # fmt: skip
    return specs


def part(share: float, window: int) -> int:
    """``share`` of ``window``, rounded down, for shares with at most three decimals."""
    return round(share * 1000) * window // 1000


@settings(max_examples=500, deadline=None)
@given(window=st.integers(0, 10**9), zones=st.none() | zone_specs())
def test_budgets_never_exceed_the_window_nor_fall_below_a_minimum(
    window: int, zones: dict[str, ZoneSpec] | None
) -> None:
    specs = DEFAULT_ZONES if zones is None else zones
    floors = {name: max(spec.min_tokens, part(spec.min_share, window)) for name, spec in specs.items()}
    caps = {name: max(floors[name], part(spec.max_share, window)) for name, spec in specs.items()}
    if sum(floors.values()) > window:
        with pytest.raises(ValueError, match=f"window of {window} tokens .* add up to {sum(floors.values())} tokens"):
            allocate(window, zones)
        return
    budgets = allocate(window, zones)
    assert list(budgets) == list(specs)
    assert sum(budgets.values()) <= window
    for name in specs:
        assert isinstance(budgets[name], int)
        assert floors[name] <= budgets[name] <= caps[name]
    if sum(budgets.values()) < window:  # only when every zone got its preferred share and the leftovers are capped
        for name, spec in specs.items():
            assert budgets[name] >= min(caps[name], max(floors[name], part(spec.preferred_share, window)))
        for name in LEFTOVER_ORDER:
            assert name not in budgets or budgets[name] == caps[name]
