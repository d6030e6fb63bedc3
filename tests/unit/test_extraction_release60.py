"""Release 60: the forty-first set's first look. "Our pick for the radiators was X";
"X over <something unnamed>, every time, if you ask me"; "I'd take a Zebra scanner over
..."; "Planday it is for the rota" names a thing chosen; "My colleagues on cover are A, B
and C". Names are invented; each case failed on release 59 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_our_pick_for_a_purpose_was_a_choice() -> None:
    assert ("user", "DECIDED", "Warmtek") in edges("Our pick for the radiators was Warmtek, since it needs no hub.")


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Tidewrite over plain nightly dumps, every time, if you ask me.", "Tidewrite"),
        ("I'd take a Stellar scanner over those phone apps any day.", "Stellar"),
    ],
)
def test_preferences_over_unnamed_rivals(text: str, thing: str) -> None:
    assert ("user", "PREFERS", thing) in edges(text)


def test_over_a_time_is_no_preference() -> None:
    assert not any(rel == "PREFERS" for _, rel, _ in edges("Tidewrite over the weekend broke twice."))  # a guard


def test_a_name_announced_with_it_is_is_a_choice() -> None:
    assert ("user", "DECIDED", "Rotawise") in edges("Rotawise it is for the café rota; we made the call on Monday.")


def test_an_institution_announced_stays_one() -> None:
    text = "Kirkmoor University it is for my master's, I accepted this morning."
    assert entities(text).get("Kirkmoor University") == "organization"  # a guard


@pytest.mark.parametrize(
    ("text", "relation"),
    [
        ("My colleagues on cover this week are Dilnaz Sadykova, Eoin Crowe and Paola Ferreira.", "WORKS_WITH"),
        ("My cousins are Amaru Quispe, Bolade Ajayi and Keoni Kahale.", "KNOWS"),
    ],
)
def test_a_plural_role_said_to_be_people(text: str, relation: str) -> None:
    found = edges(text)
    assert sum(1 for s, r, t in found if s == "user" and r == relation) == 3


def test_a_plural_role_said_to_be_no_one() -> None:
    assert edges("My colleagues are great this week.") == set()  # a guard
