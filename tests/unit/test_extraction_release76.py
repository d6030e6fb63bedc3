"""Release 76: a relative clause's "used to" dates only that clause ("I use X for
anything that used to be Y"); a membership the noun phrase tells ("N from O") holds
whatever the clause's verb says; "my book club is called O" names the club as a comma
would; "all of us" and "both of us" include the speaker. Names are invented; each case
failed on release 75 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_a_relative_clauses_past_leaves_the_main_clause_asserted() -> None:
    assert ("user", "USES", "Quillet") in edges("I use Quillet for anything that used to be spreadsheets.")
    assert ("user", "USES", "Quillet") in edges("We use Quillet for jobs that used to run on cron.")


def test_used_to_in_the_main_clause_still_dates_it() -> None:
    assert ("user", "USES", "Quillet") not in edges("I used to use Quillet for the invoices.")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Oyelade from Brackenmoor Roofing is quoting the repair next week.",
        "Oyelade from Brackenmoor Roofing didn't call me back.",
    ],
)
def test_a_membership_in_the_noun_phrase_outlasts_the_clause(text: str) -> None:
    assert ("Oyelade", "PART_OF", "Brackenmoor Roofing") in edges(text)


def test_a_membership_the_verb_tells_still_follows_the_clause() -> None:
    assert ("Oyelade", "PART_OF", "Brackenmoor Roofing") not in edges(
        "Oyelade doesn't work at Brackenmoor Roofing."
    )  # a guard


@pytest.mark.parametrize(
    ("text", "club"),
    [
        ("My book club is called Inkwhistle.", "Inkwhistle"),
        ("Our choir is called Larkspur Voices.", "Larkspur Voices"),
        ("Our pub quiz team is called the Quizmongers and we came second.", "Quizmongers"),
    ],
)
def test_my_group_is_called_names_the_group_i_am_in(text: str, club: str) -> None:
    assert ("user", "PART_OF", club) in edges(text)
    assert entities(text)[club] == "organization"


def test_my_project_is_called_names_my_work() -> None:
    assert ("user", "WORKS_ON", "Brambleton") in edges("My side project is called Brambleton.")


def test_an_earlier_name_is_no_membership() -> None:
    assert ("user", "PART_OF", "Larkspur Voices") not in edges("My old choir was called Larkspur Voices.")  # a guard


@pytest.mark.parametrize(
    "text",
    ["Both of us use Quillet for the rent.", "In our flat all of us are using Quillet.", "The two of us use Quillet."],
)
def test_all_of_us_includes_the_speaker(text: str) -> None:
    assert ("user", "USES", "Quillet") in edges(text)


@pytest.mark.parametrize("text", ["Most of us use Quillet.", "None of us use Quillet."])
def test_some_of_us_is_not_the_speaker_for_sure(text: str) -> None:
    assert ("user", "USES", "Quillet") not in edges(text)  # a guard
