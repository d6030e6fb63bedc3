"""Release 38: a heading over labelled bullets, roles that are former or someone else's,
the tool a named work is built in, an apposition after a name and its noun, choices and
preferences said with the thing first. Names are invented; each case failed on release 37
unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


def test_labelled_bullets_under_decisions_are_choices() -> None:
    text = "decisions:\n- ORM: Drizzle\n- hosting: Railway"
    assert {"Drizzle", "Railway"} <= speakers(text, "DECIDED")
    assert not speakers(text, "USES")


def test_labelled_bullets_under_a_plan_state_no_use() -> None:
    assert not speakers("trip prep:\n- eSIM: Holafly\n- flights: Kiwi.com", "USES")


def test_labelled_bullets_under_a_plain_heading_still_list_uses() -> None:
    assert {"Postgres", "Redis"} <= speakers("Stack:\n- DB: Postgres\n- cache: Redis", "USES")  # a guard


def test_an_old_manager_is_a_former_one() -> None:
    found = edges("Farhan Okoro-Ellis, my old manager, just pinged me about a job.")
    assert not {e for e in found if e[0] == "user" and e[2] == "Farhan Okoro-Ellis"}


def test_an_old_friend_is_still_a_friend() -> None:
    assert ("user", "KNOWS", "Tama") in edges("my old friend Tama lives in Wellington")  # a guard


@pytest.mark.parametrize(
    "text",
    ["My nan uses Medisafe for her meds.", "My photography teacher prefers Capture One."],
)
def test_what_someone_of_the_speakers_does_is_not_the_speakers(text: str) -> None:
    assert not speakers(text, "USES") | speakers(text, "PREFERS")


def test_the_speakers_own_thing_is_still_theirs() -> None:
    assert "Ubuntu" in speakers("My work laptop runs Ubuntu.", "USES")  # a guard


def test_the_tool_a_named_work_is_built_in_is_the_works() -> None:
    found = edges("My colleague Wairimu wrote the Ashwick ETL in Dagster.")
    assert ("Ashwick", "USES", "Dagster") in found
    assert ("Wairimu", "USES", "Dagster") not in found


def test_a_tool_used_to_build_things_unnamed_is_the_builders() -> None:
    assert ("Kemal", "USES", "Festool") in edges("Kemal builds furniture with a Festool saw.")  # a guard


def test_an_apposition_after_a_name_and_its_noun_is_the_names() -> None:
    found = edges("The Ravensmoor renovation, our loft conversion, depends on Snagbook for tracking snags.")
    assert ("Ravensmoor", "DEPENDS_ON", "Snagbook") in found
    assert "Snagbook" not in speakers("The Ravensmoor renovation, our loft conversion, depends on Snagbook.", "USES")


@pytest.mark.parametrize(
    ("text", "relation", "tool"),
    [
        ("After the licence change, our choice was OpenTofu, mostly on principle.", "DECIDED", "OpenTofu"),
        ("Meilisearch was our choice for site search over Typesense.", "DECIDED", "Meilisearch"),
        ("For lecture notes, Obsidian wins over Notion for me.", "PREFERS", "Obsidian"),
        ("SketchUp over Floorplanner for the kitchen layout, any day.", "PREFERS", "SketchUp"),
        ("For the family group, WhatsApp suits me better than Telegram.", "PREFERS", "WhatsApp"),
    ],
)
def test_a_choice_or_preference_with_the_thing_first(text: str, relation: str, tool: str) -> None:
    assert tool in speakers(text, relation)


def test_a_pick_the_group_overruled_is_no_choice() -> None:
    assert "Notion" not in speakers("My pick was Notion but we went with Coda.", "DECIDED")  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I sold my old desk to Sam, my colleague.", ("user", "WORKS_WITH", "Sam")),
        ("My friend Nana Ama uses Jumia.", ("user", "KNOWS", "Nana Ama")),
        ("Editor: VS Code\nTrip prep:\n- editor: VS Code", ("user", "USES", "VS Code")),
    ],
)
def test_readings_the_new_rules_leave_alone(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # a guard


@pytest.mark.parametrize(
    ("text", "relation", "tool"),
    [
        ("Our pick was Wise but we went with Revolut.", "DECIDED", "Wise"),
        ("My sister says Canva wins over Photoshop.", "PREFERS", "Canva"),
    ],
)
def test_an_overruled_pick_or_someone_elses_verdict_is_not_the_speakers(text: str, relation: str, tool: str) -> None:
    assert tool not in speakers(text, relation)  # a guard
