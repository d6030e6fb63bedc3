"""Release 78: after a clause with a subject of its own, "and" before a name with an
auxiliary or a negation opens the name's own clause ("I'm a dispatcher at O and T isn't
assigning routes": the negation is T's); "X won our vote" and "X were our pick" are the
group's choice. Names are invented; each case failed on release 77 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    ("text", "org"),
    [
        (
            "Hello, I'm a dispatcher at Sorrelby Couriers and Routewell isn't assigning routes today.",
            "Sorrelby Couriers",
        ),
        ("I teach Year 9 at Oakhythe Academy and Quizhall won't let me publish a quiz.", "Oakhythe Academy"),
    ],
)
def test_a_later_names_negation_leaves_my_workplace_said(text: str, org: str) -> None:
    assert ("user", "PART_OF", org) in edges(text)


def test_two_names_joined_by_and_share_the_negation() -> None:
    text = "Spending a weekend on Flightwisp and Routeroo didn't sound so bad, so I'm still weighing it."
    assert not {t for s, r, t in edges(text) if s == "user" and r == "USES"}  # a guard


def test_a_subjects_own_negation_still_negates_it() -> None:
    assert ("user", "USES", "Quillet") not in edges("We don't use Quillet and Routeroo.")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Pantrymoss won our family vote for the recipe collection, and it's self-hosted now.",
        "In the end Wanderchip Lite were our pick for data in Japan.",
    ],
)
def test_the_groups_vote_or_pick_is_its_decision(text: str) -> None:
    assert {t for s, r, t in edges(text) if s == "user" and r == "DECIDED"}


def test_our_choice_overruled_after_but_is_no_decision() -> None:
    assert not {
        t for s, r, t in edges("Pantrymoss was our pick, but the landlord said no.") if r == "DECIDED"
    }  # a guard
