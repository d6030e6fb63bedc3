"""Release 52: the thirty-fourth set's first look. A name before an apposition that holds
a relative clause is the subject of the verb after it; "picking", "choosing", "settle on"
choose, but not the open choices of "between"; "my doctor at O is Dr. N"; a person doing
something in a named group takes part in it; "N from work"; "the three devs on my
squad"; "runs a project called P". Names are invented; each case failed on release 51
unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, speakers


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Quillon, the design system, depends on Storybook.", ("Quillon", "DEPENDS_ON", "Storybook")),
        (
            "Wrenfold, the design system that the mobile team owns, depends on Storybook.",
            ("Wrenfold", "DEPENDS_ON", "Storybook"),
        ),
        ("Quillon, the CLI that I maintain, relies on Click.", ("Quillon", "DEPENDS_ON", "Click")),
        ("Quillon, the CLI that I maintain, relies on Click.", ("user", "WORKS_ON", "Quillon")),
    ],
)
def test_a_name_before_a_described_apposition_is_the_verbs_subject(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Quillon, the design system that we own, depends on Storybook.", ("user", "DEPENDS_ON", "Storybook")),
        ("Quillon, the CLI that I maintain, relies on Click.", ("user", "DEPENDS_ON", "Click")),
    ],
)
def test_the_relative_clauses_subject_is_not_the_main_verbs(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)


def test_a_relative_clause_after_an_apposition_still_reads() -> None:
    found = edges("Tallgrass, an old PHP app that depends on Redis, is slow.")
    assert ("Tallgrass", "DEPENDS_ON", "Redis") in found  # a guard


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("We ended up picking Foundry VTT for the campaign.", "Foundry VTT"),
        ("We are choosing finally Planday for the shifts.", "Planday"),
        ("After a month of trials we are settling on Kidoodle.", "Kidoodle"),
    ],
)
def test_phrasal_verbs_of_choosing_decide(text: str, tool: str) -> None:
    assert tool in speakers(text, "DECIDED")


@pytest.mark.parametrize(
    "text",
    [
        "I went for a run with Strava.",
        "I landed on the Stripe docs page by accident.",
        "Now we're stuck choosing between Xero, Zoho Books and FreeAgent.",
        "Our apprentice is picking it up faster than I did with Procore.",
    ],
)
def test_an_activity_an_open_choice_or_pick_up_decides_nothing(text: str) -> None:
    assert not speakers(text, "DECIDED")  # guards


def test_a_choice_of_a_thing_at_a_firm_is_still_a_decision() -> None:
    assert "Ally Bank" in speakers("We agreed on a joint account at Ally Bank.", "DECIDED")  # a guard


@pytest.mark.parametrize(
    ("text", "person", "relation"),
    [
        ("My doctor is Dr. Halloran.", "Halloran", "KNOWS"),
        ("My doctor at Quarry Street Surgery is Dr. Halloran.", "Halloran", "KNOWS"),
        ("My manager at Fernhill Studios is Grace Okoro.", "Grace Okoro", "WORKS_WITH"),
        ("My manager at Harrow & Finch, Zuzana Horáková, prefers MaintainX.", "Zuzana Horáková", "WORKS_WITH"),
    ],
)
def test_a_role_held_somewhere_is_still_the_speakers(text: str, person: str, relation: str) -> None:
    assert person in speakers(text, relation)


@pytest.mark.parametrize(
    "text",
    [
        "My old boss at Rennick Data, Sunniva, got me into Hypothesis.",
        "My former manager at Riverside Clinic is Dr. Lund.",
    ],
)
def test_a_former_role_held_somewhere_gives_no_relation_now(text: str) -> None:
    assert not speakers(text, "WORKS_WITH")  # guards, the second from the review


def test_a_list_of_names_is_no_role() -> None:
    assert "Wren Talbot" not in speakers("My colleagues Corvin, Wren Talbot and Ana use Jira.", "KNOWS")  # a guard


@pytest.mark.parametrize(
    ("text", "person", "group"),
    [
        ("My niece Wairimu just got into the Thornbury Youth Orchestra.", "Wairimu", "Thornbury Youth Orchestra"),
        ("Sione plays prop for the Harbourside Rugby Club.", "Sione", "Harbourside Rugby Club"),
        ("Ana is in the Hillside Chess Club.", "Ana", "Hillside Chess Club"),
    ],
)
def test_doing_something_in_a_named_group_is_taking_part(text: str, person: str, group: str) -> None:
    assert (person, "PART_OF", group) in edges(text)


@pytest.mark.parametrize("text", ["Ana played against the Hillside Chess Club.", "Ana was in the Hillside Chess Club."])
def test_playing_against_or_a_past_place_is_no_membership(text: str) -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges(text))  # guards


def test_a_group_named_by_its_noun_is_no_instrument() -> None:
    assert not any(rel == "USES" for _, rel, _ in edges("Kasia plays cornet in the Quay Brass Band."))


def test_people_from_work_work_with_the_speaker() -> None:
    found = speakers("I run the league on Fantrax now, Dawit and Selam from work are in it.", "WORKS_WITH")
    assert {"Dawit", "Selam"} <= set(found)


def test_people_counted_on_the_speakers_squad_work_with_them() -> None:
    text = "Mirela Vasilescu, Kaito Fujimoto and Dariga Seitkali are the three backend devs on my squad."
    assert {"Mirela Vasilescu", "Kaito Fujimoto", "Dariga Seitkali"} <= set(speakers(text, "WORKS_WITH"))
    assert not speakers("Tove and Signe are the two kids on my team.", "WORKS_WITH")  # from the review


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Ana runs a tiny pedal project called Nettlefuzz.", ("Ana", "WORKS_ON", "Nettlefuzz")),
        ("I run a small project called Nettlefuzz.", ("user", "WORKS_ON", "Nettlefuzz")),
    ],
)
def test_running_a_project_called_p_is_work_on_it(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_running_a_script_called_p_is_no_work_on_it() -> None:
    found = edges("We run a script called Nettlefuzz every night.")
    assert not any(rel == "WORKS_ON" for _, rel, _ in found)  # a guard
