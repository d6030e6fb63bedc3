"""Release 64: the forty-fifth set's first look. A name after "at"/"from" another's name is
that person's workplace, and the role said after it is the person's ("Dr. N at O is my
GP"); a person's name inside "my best friend N coaches at O" keeps O from the speaker; a
plural two-word role ("my lab partners"); "If ..., I'll try X" is what will be done; a
name before an arrow under "Decided:" is the one left; a title after the comma of a
role's apposition ("my supervisor, Professor N"). Names are invented; each case failed
on release 63 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_a_workplace_after_a_persons_name_leaves_the_role_to_the_person() -> None:
    text = "Dr. Amarachi Oduya at Thistlebank Medical Practice is my GP now."
    found = edges(text)
    assert entities(text).get("Thistlebank Medical Practice") == "organization"
    assert ("user", "KNOWS", "Amarachi Oduya") in found
    assert ("Amarachi Oduya", "PART_OF", "Thistlebank Medical Practice") in found


def test_a_role_after_a_plain_name_is_its_own() -> None:
    assert ("user", "WORKS_WITH", "Oriel") in edges("Oriel is my manager.")  # a guard


def test_a_friends_unit_is_not_the_speakers() -> None:
    found = edges("My best friend Ngozika coaches at Brackley Netball Club on Saturdays.")
    assert ("user", "PART_OF", "Brackley Netball Club") not in found


def test_the_speakers_own_unit_is_theirs() -> None:
    assert ("user", "PART_OF", "Mercy Vale Hospital") in edges(
        "Our ward at Mercy Vale Hospital is short-staffed."
    )  # a guard


def test_a_plural_two_word_role_is_a_colleague() -> None:
    found = edges("Ifeoluwa and Radek are my lab partners this term.")
    assert ("user", "WORKS_WITH", "Ifeoluwa") in found
    assert ("user", "KNOWS", "Ifeoluwa") not in found


def test_what_will_be_done_if_a_thing_comes_is_no_use() -> None:
    assert ("user", "USES", "Rodlane") not in edges(
        "If I ever get a proper darkroom, I'll try developing with Rodlane."
    )


def test_a_habit_kept_with_a_condition_after_it_is_a_use() -> None:
    found = edges("I'll keep using Obsidian if nothing better comes along.")
    assert ("user", "USES", "Obsidian") in found  # a guard


def test_the_name_before_an_arrow_under_a_decision_is_left() -> None:
    found = edges("Decided: MySQL -> TiDB for Sandwren.")
    assert ("user", "DECIDED", "TiDB") in found
    assert ("user", "DECIDED", "MySQL") not in found


@pytest.mark.parametrize(
    "text",
    [
        "My supervisor, Professor Wanjiru Otieno, wants every chapter drafted in Overleaf.",
        "My thesis supervisor, Professor Wanjiru Otieno, is brilliant.",
    ],
)
def test_a_title_after_a_roles_comma_leaves_the_role(text: str) -> None:
    assert ("user", "WORKS_WITH", "Wanjiru Otieno") in edges(text)


def test_a_role_right_before_a_name_is_the_speakers() -> None:
    assert ("user", "KNOWS", "Amaru") in edges("My professor Amaru is great.")  # a guard
