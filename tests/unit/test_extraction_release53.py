"""Release 53: the thirty-fifth set's first look. A person who moved to an organization
belongs to it (a team: works on it); "N is co-authoring it with me"; "works on P with
the X department" names a partner, not the work; "N is running the X literacy project";
"N from the X Society". Names are invented; each case failed on release 52 unless marked
a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Thandiwe has moved to Brennan College.", ("Thandiwe", "PART_OF", "Brennan College")),
        ("My sister Ana moved to Glenrock Analytics in May.", ("Ana", "PART_OF", "Glenrock Analytics")),
        ("Ilias moved to the mobile team last spring.", ("Ilias", "WORKS_ON", "mobile team")),
    ],
)
def test_a_person_who_moved_to_an_organization_belongs_to_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "We moved to Hetzner last year.",
        "Ana might move to Glenrock Analytics.",
        "Anneliese is going to move to the infra team after the reorg.",
        "I heard Faisal had moved to Sorrel Health but he came back to us.",
    ],
)
def test_the_speakers_move_a_plan_or_an_earlier_one_is_no_membership(text: str) -> None:
    assert not any(rel in ("PART_OF", "WORKS_ON") for _, rel, _ in edges(text))  # guards, the last two from the review


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("Zuzana Horváthová from Corvid Systems is co-authoring the paper with me.", "Zuzana Horváthová"),
        ("Mr. Abernathy-Cole, who's supposed to co-lead it with me, is always in meetings.", "Abernathy-Cole"),
    ],
)
def test_sharing_a_piece_of_work_with_the_speaker_is_working_with_them(text: str, person: str) -> None:
    assert person in speakers(text, "WORKS_WITH")


@pytest.mark.parametrize(
    "text", ["Ana co-founded Brightly with her brother.", "Salma might co-present the poster with me."]
)
def test_a_shared_work_with_someone_else_or_a_possible_one_is_no_colleague(text: str) -> None:
    assert not speakers(text, "WORKS_WITH")  # guards, the second from the review


@pytest.mark.parametrize(
    ("text", "partner"),
    [
        ("Leilani works on the Saltmarsh Restoration Project with the parks department.", "parks department"),
        ("Tuğba is working on the Okapi recall project together with the supplier team.", "supplier team"),
        ("Tobias works on the flood map with the parks department.", "parks department"),
    ],
)
def test_an_organization_worked_with_is_no_work_on_it(text: str, partner: str) -> None:
    assert not any(rel == "WORKS_ON" and target == partner for _, rel, target in edges(text))


def test_a_person_worked_with_is_still_a_colleague() -> None:
    assert "Agnieszka" in speakers("I'm working on Project Bluebell with Agnieszka.", "WORKS_WITH")  # a guard


def test_running_a_described_project_is_work_on_it() -> None:
    text = "Wambui Obuya, our deputy head, is running the Bright Pages literacy project this year."
    assert ("Wambui Obuya", "WORKS_ON", "Bright Pages") in edges(text)


def test_running_a_job_every_night_is_no_work_on_it() -> None:
    assert not any(rel == "WORKS_ON" for _, rel, _ in edges("We are running the Orion upgrade every night."))  # a guard


def test_a_person_from_the_named_society_belongs_to_it() -> None:
    text = "Rangi from the Tuatara Debate Society is helping me prep for the finals."
    assert ("Rangi", "PART_OF", "Tuatara Debate Society") in edges(text)


def test_an_opening_title_is_no_part_of_the_name() -> None:
    found = edges("Lecturer Damla Kaya from the Kessock Institute runs the outreach project.")
    assert ("Damla Kaya", "PART_OF", "Kessock Institute") in found  # a guard
