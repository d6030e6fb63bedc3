"""Release 59: the fortieth set's first look. "Our ingestion service X" names a piece of
work, no institution; "N and M run the X team" work on it; "I'd still choose X every
time" is a preference, no choice; "X is still my favourite editor"; a passive's patient
before a relative clause ("The X pipeline, which leans on Y, is owned by N"); "rather"
before a verb of use leaves the preference alone. Names are invented; each case failed on
release 58 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_our_service_named_is_work_not_an_institution() -> None:
    text = "Our ingestion service Kelpwake leans on Ravenmq for buffering."
    assert entities(text).get("Kelpwake") == "project"
    assert ("user", "PART_OF", "Kelpwake") not in edges(text)
    assert ("Kelpwake", "DEPENDS_ON", "Ravenmq") in edges(text)


def test_our_company_named_stays_an_institution() -> None:
    assert ("user", "PART_OF", "Dunmarsh Agro") in edges("Our company Dunmarsh Agro uses Tallybook.")  # a guard


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ("Ilse Moana and Tevita Lolo run the pharmacy team on nights.", ("Ilse Moana", "Tevita Lolo")),
        ("I run the inbound team at Corrowby.", ("user",)),
    ],
)
def test_running_a_team_is_work_on_it(text: str, people: tuple[str, ...]) -> None:
    found = edges(text)
    for person in people:
        assert any(s == person and r == "WORKS_ON" and t.endswith("team") for s, r, t in found)


@pytest.mark.parametrize(
    "text",
    [
        "We run the team retro every Friday.",
        "Dario runs the payments team's on-call rota.",
        "I run the sales team offsite every spring.",
        "Our scripts run the data team's nightly jobs.",
    ],
)
def test_running_a_thing_of_a_team_is_no_work_on_it(text: str) -> None:
    assert not any(rel == "WORKS_ON" for _, rel, _ in edges(text))  # guards


@pytest.mark.parametrize(
    "text",
    [
        "Faster printers exist, but I'd still choose my Quillmark every time.",
        "I'd rather go with the Quillmark vinyl because of the dog.",
    ],
)
def test_a_choice_under_would_is_a_preference(text: str) -> None:
    found = edges(text)
    assert ("user", "PREFERS", "Quillmark") in found
    assert ("user", "DECIDED", "Quillmark") not in found


def test_a_choice_made_stays_a_choice() -> None:
    assert ("user", "DECIDED", "Quillmark") in edges("We chose Quillmark for the floor.")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Brightlens Classic is still my favourite editor by a mile.",
        "Brightlens is my favourite editor.",
    ],
)
def test_a_tool_called_my_favourite_of_its_kind(text: str) -> None:
    assert any(r == "PREFERS" and t.startswith("Brightlens") for _, r, t in edges(text))


def test_a_passives_patient_before_a_relative_clause() -> None:
    found = edges("The Fenwick metrics pipeline, which leans on Tallystore, is owned by Aroha Ngata.")
    assert ("Aroha Ngata", "WORKS_ON", "Fenwick") in found
