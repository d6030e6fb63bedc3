"""Release 45, from the sets already read: "Deps for P:" and "the project I'm on". Names
are invented; each case failed on release 44 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities, speakers


def test_deps_for_a_project_list_its_dependencies() -> None:
    found = edges("Deps for Pinewick: Postgres, Redis")
    assert {("Pinewick", "DEPENDS_ON", "Postgres"), ("Pinewick", "DEPENDS_ON", "Redis")} <= found
    assert "Deps" not in entities("Deps for Pinewick: Postgres, Redis")


@pytest.mark.parametrize(
    "text",
    [
        "Deps for Vantorel we got rid of: Redis",
        "Deps for Vantorel v2 maybe: Kafka, Redis",
        "Deps of Vantorel's competitor: Kafka, Redis",
    ],
)
def test_a_deps_label_that_says_more_than_whose_lists_no_dependency(text: str) -> None:
    assert not {e for e in edges(text) if e[1] == "DEPENDS_ON"}  # a guard


@pytest.mark.parametrize(
    ("text", "project"),
    [
        ("Hyacinthe is the project I'm on at Corvid Labs.", "Hyacinthe"),
        ("Corvane is the codebase I'm on, and it uses Stripe.", "Corvane"),
    ],
)
def test_the_project_the_speaker_is_on_is_worked_on(text: str, project: str) -> None:
    assert speakers(text, "WORKS_ON") == {project}


@pytest.mark.parametrize(
    "text",
    [
        "Sertraline is the medication I'm on, for anxiety.",
        "Threads is the app I'm on, for now.",
        "Vantorel is the team I'm on at work.",
        "Juniper is the hike we're doing tomorrow.",
        "Strava is the app I'm on every morning.",
    ],
)
def test_what_the_speaker_is_on_or_doing_is_no_work_unless_a_project(text: str) -> None:
    assert not speakers(text, "WORKS_ON")  # a guard
