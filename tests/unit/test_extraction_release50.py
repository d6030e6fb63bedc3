"""Release 50: the thirty-second set's first look, and ticket fields and note titles from
the sets read before. A ticket's problem fields name no tool in use; a clause opened
after a comma by "the X <verb>s a ..."; a name ending in a plural before "project"; a
relative clause after an apposition; "I joined the X team"; "the kitchen of O"; a "TODO"
title. Names are invented; each case
failed on release 49 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


@pytest.mark.parametrize(
    "text",
    [
        "Subject: Webhook signature mismatch\nEvery webhook from Paylane fails verification since Monday.",
        "Bug: in TableHive, split bills on table 12 double-charge the service.",
        "Regression in Quillstack 3.1: exports hang at ninety percent, fine in 3.0.",
    ],
)
def test_a_tickets_problem_fields_name_no_tool_in_use(text: str) -> None:
    assert not speakers(text, "USES")


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Oncall rota: Bo (wk1), me (wk2). Pager = Opsgenie.", "Opsgenie"),
        ("Issue tracker: Linear", "Linear"),
        ("Site builder: Squarespace", "Squarespace"),
    ],
)
def test_a_tools_note_line_is_still_a_use(text: str, thing: str) -> None:
    assert thing in speakers(text, "USES")  # guards from the review


def test_a_new_clause_after_a_comma_is_not_the_verbs_object() -> None:
    found = speakers("I prefer Litestar for new services, the DTO layer saves a lot of boilerplate.", "PREFERS")
    assert found == {"Litestar"}


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("We use Redis, the Hetzner servers and Postgres.", "Postgres"),
        ("I use Slack, the Microsoft apps my company pays for, and Zoom.", "Zoom"),
    ],
)
def test_a_list_with_a_plural_noun_is_still_one_list(text: str, last: str) -> None:
    assert last in speakers(text, "USES")  # guards


def test_a_plural_name_before_project_is_the_project() -> None:
    found = edges("My lab partner Chidinma and I are both on the Wetland Sensors project.")
    assert ("user", "WORKS_ON", "Wetland Sensors") in found
    assert ("user", "PART_OF", "Wetland Sensors") not in found


def test_a_relative_clause_after_an_apposition_is_about_its_name() -> None:
    found = edges("Our team inherited Tallgrass, an old PHP app that depends on Guzzle and Monolog.")
    assert {("Tallgrass", "DEPENDS_ON", "Guzzle"), ("Tallgrass", "DEPENDS_ON", "Monolog")} <= found
    assert not any(source == "PHP" for source, _, _ in found)


@pytest.mark.parametrize(
    "text",
    [
        "Since I joined the receiving team at Gullwing Logistics my life is pallets.",
        "I've joined the Driftwood team as of this sprint.",
    ],
)
def test_joining_a_team_is_working_on_it(text: str) -> None:
    found = edges(text)
    assert any(rel == "WORKS_ON" and target.endswith("team") for source, rel, target in found if source == "user")
    assert not any(rel == "PART_OF" and target.endswith("team") for _, rel, target in found)


def test_someone_elses_joining_a_team_stays_membership() -> None:
    found = edges("Chloé joined the ML platform team last week.")
    assert ("Chloé", "PART_OF", "ML platform team") in found  # a guard


def test_working_in_the_kitchen_of_an_organization_is_part_of_it() -> None:
    found = edges("I am working in the kitchen of Trattoria Sole Mio.")
    assert ("user", "PART_OF", "Trattoria Sole Mio") in found
    assert ("user", "USES", "Trattoria Sole Mio") not in found


def test_a_todo_title_makes_its_bullets_no_use() -> None:
    assert not speakers("TODO\n- bump Ktor\n- ask Wiremu re: Keycloak realm", "USES")


def test_a_title_that_only_contains_an_open_word_is_no_todo() -> None:
    text = "Options trading setup\n- Interactive Brokers for trades\n- TradingView for charts"
    assert "TradingView" in speakers(text, "USES")  # a guard from the review
