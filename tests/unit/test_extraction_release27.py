"""Release 27: a clause dated by a month, a year or a school year, longing for a gerund's
doing, moves still to come, requests in notes, a stack line's instruments. Names are
invented; each case failed on release 26 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("In March my partner Aoife booked us on Gullwing Air to Porto.", ("Aoife", "USES", "Gullwing Air")),
        ("In 2019 we tracked everything in Trackwise.", ("user", "USES", "Trackwise")),
        ("In first year I did all my notes in Scribbleden.", ("user", "USES", "Scribbleden")),
    ],
)
def test_a_clause_dated_in_the_past_states_no_use_now(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)


@pytest.mark.parametrize(
    "text", ["In June we moved to Trackwise.", "We use Trackwise in June and July for the harvest."]
)
def test_a_change_or_a_present_in_a_dated_clause_still_holds(text: str) -> None:
    assert ("user", "USES", "Trackwise") in edges(text)  # a guard


def test_longing_for_what_a_gerund_tells_is_the_past() -> None:
    assert ("user", "USES", "Runewild") not in edges("Playing Runewild with the old guild, I kinda miss that.")


def test_a_move_still_to_come_is_no_use() -> None:
    assert ("user", "USES", "Shiftly") not in edges("We're switching to Shiftly next month.")
    assert ("user", "USES", "Shiftly") in edges("We switched to Shiftly last month.")  # a guard


def test_a_request_in_a_note_is_no_use() -> None:
    assert ("user", "USES", "Loomkey") not in edges("Feature request: please add SSO via Loomkey to Tidelist.")


def test_a_stack_lines_instruments_are_the_projects() -> None:
    found = edges("Stack for Saltmarsh: Ktor on Slatebox.")
    assert ("Saltmarsh", "USES", "Slatebox") in found
    assert ("user", "USES", "Slatebox") not in found


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Next month marks a year since we switched to Rustle.", ("user", "USES", "Rustle")),
        ("I've moved to Archway, next month I'll try Nixwell.", ("user", "USES", "Archway")),
        ("In 2019 I worked at Acme Mills, and I still work there.", ("user", "PART_OF", "Acme Mills")),
        ("Playing Valorant with friends, I miss it, so I still play on weekends.", ("user", "USES", "Valorant")),
        ("Using Obsidian now, I miss that Notion had databases.", ("user", "USES", "Obsidian")),
    ],
)
def test_what_a_review_of_the_draft_found_is_still_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # guards from the review
