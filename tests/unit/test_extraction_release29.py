"""Release 29: who a clause is said of when a name or a possessive stands in the object or
inside a noun phrase, names listed with "me", the pluperfect, a pronoun in a clause that
asserts nothing, reported duties and wishes in non-native English, packing lists. Names
are invented; each case failed on release 28 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_a_name_after_an_object_and_and_opens_its_own_subject() -> None:
    found = edges("Tuuli is on the billing team and Oskari works on Brackwater with me.")
    assert ("Oskari", "WORKS_ON", "Brackwater") in found
    assert ("Tuuli", "WORKS_ON", "Brackwater") not in found
    assert ("user", "WORKS_WITH", "Tuuli") not in found


def test_names_joined_as_subjects_still_share_the_verb() -> None:
    found = edges("Tuuli and Oskari work on Brackwater.")
    assert {("Tuuli", "WORKS_ON", "Brackwater"), ("Oskari", "WORKS_ON", "Brackwater")} <= found  # a guard


@pytest.mark.parametrize(
    ("text", "source", "relation", "target"),
    [
        (
            "Professor Ilse Marrow supervises my thesis and works at the Quennell Institute.",
            "Ilse Marrow",
            "PART_OF",
            "Quennell Institute",
        ),
        (
            "Dr Amadi Oyelaran treats my knee and works at Saltcote Clinic.",
            "Amadi Oyelaran",
            "PART_OF",
            "Saltcote Clinic",
        ),
    ],
)
def test_a_possessive_after_a_subjects_verb_is_in_the_object(
    text: str, source: str, relation: str, target: str
) -> None:
    found = edges(text)
    assert (source, relation, target) in found
    assert ("user", relation, target) not in found


def test_a_possessive_opening_the_clause_is_still_the_speaker() -> None:
    assert ("user", "USES", "Pinwheel") in edges("Honestly our team uses Pinwheel for everything.")  # a guard


@pytest.mark.parametrize(
    ("text", "subject", "relation", "target"),
    [
        (
            "The plumbers we work with, Dunmore Brothers, depend on Jobwise for invoices.",
            "Dunmore Brothers",
            "DEPENDS_ON",
            "Jobwise",
        ),
        (
            "The club I play for, Ferncastle Rovers, uses Pitchbook for fixtures.",
            "Ferncastle Rovers",
            "USES",
            "Pitchbook",
        ),
    ],
)
def test_a_name_between_commas_before_the_verb_is_its_subject(
    text: str, subject: str, relation: str, target: str
) -> None:
    found = edges(text)
    assert (subject, relation, target) in found
    assert ("user", "USES", target) not in found


@pytest.mark.parametrize(
    "text",
    [
        "The little bakery I run with my cousin Jovana depends on Tillwise for the tills.",
        "The clinic we go to has switched to Medibook.",
        "Most groups I play with have moved their games to Tabletopia.",
    ],
)
def test_a_pronoun_inside_the_subjects_noun_phrase_is_not_its_subject(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user" and e[1] in ("USES", "DEPENDS_ON")}


def test_the_speaker_who_uses_it_still_uses_it() -> None:
    assert ("user", "USES", "Medibook") in edges("At the clinic we use Medibook.")  # a guard


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("- lates: me, Anahera, Tipene", ["Anahera", "Tipene"]),
        ("- on the stall: me, Brannock, Tiarnach", ["Brannock", "Tiarnach"]),
    ],
)
def test_names_listed_with_me_are_people(text: str, names: list[str]) -> None:
    found = entities(text)
    for name in names:
        assert found.get(name) == "person"
        assert ("user", "USES", name) not in edges(text)


@pytest.mark.parametrize(
    ("text", "relation", "target"),
    [
        ("We picked Consul. Rasmus had been running it at home.", "USES", "Consul"),
        ("Ingrid had been running Fedora on her laptop.", "USES", "Fedora"),
        ("Dorota had relied on Clinicbook for years.", "DEPENDS_ON", "Clinicbook"),
    ],
)
def test_the_pluperfect_tells_a_past_before_the_past(text: str, relation: str, target: str) -> None:
    assert not {e for e in edges(text) if e[1] == relation and e[2] == target}


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("We had to move everything to Notewell.", ("user", "USES", "Notewell")),
        ("I've had my Kindle for years.", ("user", "USES", "Kindle")),
        ("We picked Consul. Rasmus runs it.", ("Rasmus", "USES", "Consul")),
    ],
)
def test_a_duty_a_present_perfect_and_a_pronoun_now_still_hold(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # guards


@pytest.mark.parametrize(
    "text",
    [
        "My doctor, Dr. Emeka Nwosu, she say I must use the Glucowise meter every morning.",
        "My physio is saying I must use the Flexband kit after every run.",
        "My supervisor want that I write the thesis in Overleaf.",
    ],
)
def test_a_reported_duty_or_a_wish_asserts_no_use(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user" and e[1] == "USES"}


@pytest.mark.parametrize(
    "text",
    [
        "Packing: passport, Chargewell power bank, adaptor.",
        "trip checklist: passports, Roamly eSIM, sunscreen",
        "Shopping: Tidewell screws, sandpaper.",
    ],
)
def test_a_packing_or_shopping_list_is_a_plan(text: str) -> None:
    assert not {e for e in edges(text) if e[1] == "USES"}
