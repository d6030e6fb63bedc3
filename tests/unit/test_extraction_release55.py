"""Release 55: the thirty-seventh set's first look. An "Owner:" line after a sentence that
names a project is work on that project; a name in the bracket after a person's ("Szymon
(guide, Tatra Trails)") is where they work; "I play for X" is membership of a team.
Names are invented; each case failed on release 54 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Stack for Lanternfish: Deno, Fresh, SQLite via Turso. Owner: Keahi.", ("Keahi", "WORKS_ON", "Lanternfish")),
        (
            "Ticket: the Tamarisk deployment depends on Keel. Owner: Oskar Wahlberg.",
            ("Oskar Wahlberg", "WORKS_ON", "Tamarisk"),
        ),
    ],
)
def test_an_owner_line_after_a_named_project_is_work_on_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_an_owners_list_keeps_its_projects() -> None:
    found = edges("Owners: Halyard - Bao; Cinder - Selam.")
    assert not any(source == "Halyard" for source, _, _ in found)  # a guard


def test_a_name_bracketed_after_a_person_is_their_workplace() -> None:
    found = edges("Day 4 Kraków to Zakopane. Bus with Szymon (guide, Tatra Trails). Rain all day.")
    assert ("Szymon", "PART_OF", "Tatra Trails") in found


def test_a_role_bracketed_after_a_thing_is_no_workplace() -> None:
    found = edges("- gifts: AirTag (Dad), Kobo Clara (Gran)")
    assert not any(rel == "PART_OF" for _, rel, _ in found)  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I play for Dockside Rovers.", ("user", "PART_OF", "Dockside Rovers")),
        ("Ana plays for Dockside Rovers.", ("Ana", "PART_OF", "Dockside Rovers")),
    ],
)
def test_playing_for_a_team_is_membership(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "We played against Dockside Rovers.",
        "I played for Dockside Rovers as a kid.",
        "We've started tracking plays in BG Stats.",
    ],
)
def test_playing_against_before_or_the_noun_is_no_membership(text: str) -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges(text))  # guards


@pytest.mark.parametrize(
    "text",
    [
        "Project Ashgrove uses Postgres, project Tidewater uses MySQL. Owner: Priya.",
        "Project Dunmore uses Terraform.\nNotes from call with vendor.\nOwner: Rickard",
    ],
)
def test_an_owner_line_after_two_projects_or_none_names_no_work(text: str) -> None:
    assert not any(rel == "WORKS_ON" for _, rel, _ in edges(text))  # guards from the review


@pytest.mark.parametrize(
    "text", ["Hamid (Oslo) and Ruth (Bergen) joined the call.", "Dinner with Aiko (Sapporo) and her husband."]
)
def test_a_town_bracketed_after_a_person_is_no_workplace(text: str) -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges(text))  # guards from the review


def test_playing_in_a_clubs_tournaments_is_no_membership() -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges("I play in Northside Chess Club tournaments."))  # a guard
