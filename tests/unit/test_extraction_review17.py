"""Readings release 17's rules must not make, found by a review of its first draft: the
speaker carried into a clause with its own subject, initials after a role noun, a thing
named after a preposition's noun, a record's author taken as an acquaintance, and a role
in brackets after someone else's possessive. Each case failed on that draft."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    "text",
    [
        "me and my son went fishing and my husband uses Strava",
        "PR 88 merged. Author: Selam Tadesse",
        "Concert last night. Pianist: Ana Ruiz",
        "Brightwell's new hire Ana Ruiz (manager) starts Monday",
    ],
)
def test_no_edge_of_the_speakers_is_read_into_someone_elses_words(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user" and e[1] in ("USES", "KNOWS", "WORKS_WITH")}


def test_initials_after_a_role_noun_are_a_person() -> None:
    assert ("user", "KNOWS", "DJ") in edges("I asked my physio DJ for advice")


@pytest.mark.parametrize(
    ("text", "name", "wrong"),
    [
        ("I'm building a pc with a case called Fractal North", "Fractal North", "project"),
        ("I made a complaint to a company called Brightwell", "Brightwell", "project"),
    ],
)
def test_a_thing_named_behind_a_preposition_is_not_the_work_made(text: str, name: str, wrong: str) -> None:
    assert entities(text).get(name) != wrong


def test_a_role_set_between_commas_keeps_its_person_the_subject() -> None:
    # a guard: the draft's fix for the first case above first lost this one
    assert ("Xiaoling", "WORKS_ON", "Halyard team") in edges("Xiaoling, our tech lead, is on the Halyard team.")
