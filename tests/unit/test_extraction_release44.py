"""Release 44: the speaker's reliance as a dependency, a role opening the next clause,
notes that list dependencies or whose title names a project, plans in notes, a person
running a unit at an organization, institutions and teams named after people, preference
idioms, and names with a plural possessive. Names are invented; each case failed on
release 43 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities, speakers


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("We rely on Keystrand for login across all three apps.", "Keystrand"),
        ("Ever since the diagnosis I rely on my Glucoria sensor at night.", "Glucoria"),
        ("Our dental practice relies on Toothwell for bookings.", "Toothwell"),
    ],
)
def test_the_speakers_reliance_is_a_dependency(text: str, tool: str) -> None:
    assert speakers(text, "DEPENDS_ON") == {tool}
    assert tool not in speakers(text, "USES")


def test_a_persons_reliance_stays_their_use() -> None:
    assert ("Priya", "USES", "Keystrand") in edges("Priya leans on Keystrand for everything.")  # a guard


def test_a_role_after_a_comma_opens_the_next_clause() -> None:
    found = edges("We started logging every spray in Fieldnote, my brother does the entries from his phone.")
    assert ("user", "USES", "Fieldnote") in found
    assert ("user", "KNOWS", "Fieldnote") not in found


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("My stepdad Tevita still swears by his pager.", "Tevita"),
        ("My chess coach, Grandmaster Levani Gogua, makes me replay every loss.", "Levani Gogua"),
    ],
)
def test_kin_and_titles(text: str, person: str) -> None:
    assert speakers(text, "KNOWS") == {person}


def test_a_stepdads_preference_is_not_the_speakers() -> None:
    assert not speakers("My stepdad still swears by his BlackBerry.", "PREFERS")


@pytest.mark.parametrize(
    "text",
    [
        "Onboarding checklist for Ruaidhrí: laptop, Bitwarden invite, Gitea access",
        "Xmas gifts\n- Ifeoma: Kindle Paperwhite\n- Chukwudi: Nintendo Switch games",
    ],
)
def test_a_checklist_or_gift_list_is_no_use(text: str) -> None:
    assert not speakers(text, "USES")


def test_a_note_titled_with_a_project_gives_it_the_bullets() -> None:
    found = edges(
        "arch notes: Harrowmere service\n- lang: Kotlin + Ktor\n- depends on: CockroachDB, SQS\n- owner: Imani Kariuki"
    )
    expected = {
        ("Harrowmere", "USES", "Kotlin"),
        ("Harrowmere", "USES", "Ktor"),
        ("Harrowmere", "DEPENDS_ON", "CockroachDB"),
        ("Harrowmere", "DEPENDS_ON", "SQS"),
        ("Imani Kariuki", "WORKS_ON", "Harrowmere"),
    }
    assert expected <= found
    assert not {e for e in found if e[0] == "user"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Quillfen deps: Postgres 15, RabbitMQ, Keycloak for auth.", {"Postgres", "RabbitMQ", "Keycloak"}),
        ("Deps: Ledgerholt → Adyen, Twilio", {"Adyen", "Twilio"}),
        ("Project Honeywick deps:\n- Stripe\n- Postmark", {"Stripe", "Postmark"}),
    ],
)
def test_a_dependency_label_lists_what_its_project_depends_on(text: str, expected: set[str]) -> None:
    assert {target for _, relation, target in edges(text) if relation == "DEPENDS_ON"} == expected


def test_no_dependency_is_listed_under_a_negated_label() -> None:
    assert not {e for e in edges("Quillfen deps: not Redis, not Kafka.") if e[1] == "DEPENDS_ON"}  # a guard


@pytest.mark.parametrize(
    ("text", "person", "organization"),
    [
        (
            "Chef Oluwaseyi Bankole runs the pastry section at Marigold & Thyme.",
            "Oluwaseyi Bankole",
            "Marigold & Thyme",
        ),
        (
            "Nikolai Vasquez manages the cold chain at Brightwater Logistics.",
            "Nikolai Vasquez",
            "Brightwater Logistics",
        ),
    ],
)
def test_running_a_unit_at_an_organization_is_membership(text: str, person: str, organization: str) -> None:
    assert (person, "PART_OF", organization) in edges(text)


def test_an_institution_named_before_the_speakers_role_for_it_is_theirs() -> None:
    text = "Sunday rides with the Kettlebrook Wheelers, my cycling club, are the best part of my week."
    assert speakers(text, "PART_OF") == {"Kettlebrook Wheelers"}


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("The Steam Deck is my go-to for long sessions.", "Steam Deck"),
        ("For me the Couchsurfing is better than hotels, because you meet people.", "Couchsurfing"),
        ("For logging lifts, Hevy wins over Strong and Jefit every time.", "Hevy"),
    ],
)
def test_preference_idioms(text: str, thing: str) -> None:
    assert thing in speakers(text, "PREFERS")


def test_a_reported_win_is_no_preference() -> None:
    assert not speakers("My sister says Hevy wins over Jefit every time.", "PREFERS")  # a guard


@pytest.mark.parametrize(
    ("text", "relation", "people"),
    [
        ("Kofi is on my team.", "WORKS_WITH", {"Kofi"}),
        ("Kofi and Ama are on my team.", "WORKS_WITH", {"Kofi", "Ama"}),
        ("Kofi, Ama and Yaw are the other nurses on my ward.", "WORKS_WITH", {"Kofi", "Ama", "Yaw"}),
        ("Kofi and Ama are my cousins.", "KNOWS", {"Kofi", "Ama"}),
    ],
)
def test_people_said_to_be_on_the_speakers_team_or_in_a_role(text: str, relation: str, people: set[str]) -> None:
    assert speakers(text, relation) == people


@pytest.mark.parametrize(
    "text",
    ["Mr. Obrecht is my son's maths teacher.", "Kofi and Ama are the other finalists in the contest."],
)
def test_anothers_role_or_no_team_of_the_speakers_is_nothing(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user"}  # a guard


def test_a_name_with_a_plural_possessive_stays_whole() -> None:
    text = "Sunniva Haug from the Brookmere Residents' Association is collecting quotes."
    assert entities(text).get("Brookmere Residents' Association") == "organization"
    assert ("Sunniva Haug", "PART_OF", "Brookmere Residents' Association") in edges(text)


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        ("Meal prep\n- I use the Instant Pot every sunday", None),
        ("Barclays, my bank, charged me twice this month.", ("user", "PART_OF", "Barclays")),
        ("Acme Logistics, my old company, went bust last year.", ("user", "PART_OF", "Acme Logistics")),
        ("Ruth owns a house at Whitby.", ("Ruth", "PART_OF", "Whitby")),
        ("Kofi and Ama are the other patients on my ward.", ("user", "WORKS_WITH", "Kofi")),
        ("Kofi and Ama are the other kids in my son's class.", ("user", "WORKS_WITH", "Kofi")),
        ("Project Honeywick deps:\n- Redis\n- talk to Sam about Kafka", ("Honeywick", "DEPENDS_ON", "Kafka")),
        ("Ledgerholt deps: Stripe vs Adyen still undecided", ("Ledgerholt", "DEPENDS_ON", "Stripe")),
        ("npm deps: React, Lodash", ("npm", "DEPENDS_ON", "React")),
    ],
)
def test_what_the_review_found_the_draft_read_wrongly_is_not_read(
    text: str, wrong: tuple[str, str, str] | None
) -> None:
    found = edges(text)
    if wrong is None:
        assert ("user", "USES", "Instant Pot") in found  # a plan's heading keeps a bullet's "I use"
    else:
        assert wrong not in found  # a guard


def test_each_arrow_of_a_dependency_line_names_its_own_dependent() -> None:
    found = edges("Deps: Ledgerholt → Stripe, Kestrelby → Postgres")
    assert {("Ledgerholt", "DEPENDS_ON", "Stripe"), ("Kestrelby", "DEPENDS_ON", "Postgres")} <= found
    assert ("Ledgerholt", "DEPENDS_ON", "Postgres") not in found


def test_a_plural_possessive_before_a_product_is_no_name_of_its_own() -> None:
    assert "Chris' Lenovo" not in entities("I borrowed Chris' Lenovo for the trip.")  # a guard
