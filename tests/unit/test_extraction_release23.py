"""Release 23: a main-verb "do" before "all ...", a surname that is a town's name, and
roles at work named by their head noun. Names are invented; each case failed on release
22 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_do_before_all_is_the_clauses_verb() -> None:
    assert ("Henrique", "USES", "Origin") in edges("Henrique does all the plotting in Origin.")


def test_a_surname_that_is_a_towns_name_is_still_a_surname() -> None:
    assert entities("Henrique Saldanha does the plotting in Origin.").get("Henrique Saldanha") == "person"


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("My head chef Tomasz insists on Robot-Coupe processors.", "Tomasz"),
        ("My teamlead Vikram is deciding which framework we use.", "Vikram"),
        ("My sous chef Ana covers the weekends.", "Ana"),
    ],
)
def test_a_role_at_work_is_a_colleagues(text: str, person: str) -> None:
    found = edges(text)
    assert ("user", "WORKS_WITH", person) in found
    assert ("user", "KNOWS", person) not in found


def test_a_friend_is_still_known() -> None:
    assert ("user", "KNOWS", "Ana") in edges("My best friend Ana is great.")  # a guard


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("My private chef Marco cooks on Sundays.", "Marco"),
        ("My old headteacher Mrs. Okafor still sends me cards.", "Okafor"),
    ],
)
def test_a_chef_or_a_headteacher_of_ones_own_is_known(text: str, person: str) -> None:
    found = edges(text)
    assert ("user", "WORKS_WITH", person) not in found  # guards from the review
