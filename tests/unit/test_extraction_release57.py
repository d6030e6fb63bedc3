"""Release 57: read from all the development sets read so far, not from a new one. A
relative clause whose own subject is a negative ("a connector that nobody wants", "loaders
nobody remembers") no longer negates the clause it describes; a company's name before
"app" names its app; "I've been doing X" uses X; "with me" after the work someone is on;
"N and me, we ..." makes both the subject; "N is at/from O" and "N heads the X team at O"
are membership; a GP, physio or dentist is someone the speaker knows. Names are invented;
each case failed on release 56 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    "text",
    [
        "The Wrenport ingest job depends on a Tallyline connector that nobody wants to own.",
        "Wrenport depends on Tallyline and a pile of scripts nobody remembers writing.",
        "Wrenport depends on a Tallyline connector that we don't like.",
    ],
)
def test_a_negative_inside_a_relative_clause_keeps_the_main_clause(text: str) -> None:
    assert ("Wrenport", "DEPENDS_ON", "Tallyline") in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "Wrenport doesn't depend on Tallyline any more.",
        "Nobody here depends on Tallyline.",
        "My manager wants that we use Tallyline.",
    ],
)
def test_a_negation_of_the_main_clause_still_holds(text: str) -> None:
    assert not any(target == "Tallyline" and rel in ("DEPENDS_ON", "USES") for _, rel, target in edges(text))  # guards


def test_a_companys_name_before_app_names_its_app() -> None:
    found = edges("I always use the Corvane Health app for my readings.")
    assert ("user", "USES", "Corvane Health") in found


def test_a_companys_name_alone_stays_a_company() -> None:
    found = edges("Corvane Health called me about my readings.")
    assert not any(rel == "USES" for _, rel, _ in found)  # a guard


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("I've been doing intermittent fasting since March.", "intermittent fasting"),
        ("We've been doing Kestrelfit twice a week with the neighbours.", "Kestrelfit"),
    ],
)
def test_been_doing_a_practice_uses_it(text: str, thing: str) -> None:
    assert ("user", "USES", thing) in edges(text)


@pytest.mark.parametrize(
    ("text", "person", "work"),
    [
        ("Ruaridh is on the Fenwick rollout with me.", "Ruaridh", "Fenwick"),
        ("Tomasz and Ilse are on the billing team with me.", "Tomasz", "billing team"),
    ],
)
def test_with_me_after_the_work_someone_is_on(text: str, person: str, work: str) -> None:
    found = edges(text)
    assert (person, "WORKS_ON", work) in found
    assert ("user", "WORKS_ON", work) in found


def test_with_me_elsewhere_gives_the_speaker_no_work() -> None:
    found = edges("Ruaridh is on the Fenwick rollout and argues with me about naming.")
    assert ("user", "WORKS_ON", "Fenwick") not in found  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Baraka and me, we work on the Kijito project.",
        "My colleague Baraka and me we are working on the Kijito project.",
    ],
)
def test_a_subject_taken_up_by_we_is_both_of_them(text: str) -> None:
    found = edges(text)
    assert ("Baraka", "WORKS_ON", "Kijito") in found
    assert ("user", "WORKS_ON", "Kijito") in found


@pytest.mark.parametrize(
    ("text", "person", "org"),
    [
        ("Hakim is at Tarnbury Credit Union now.", "Hakim", "Tarnbury Credit Union"),
        ("My dentist, Dr. Ilinca Moraru, is at Pellfield Dental.", "Ilinca Moraru", "Pellfield Dental"),
        ("Saoirse heads the growth team at Brackmoor.", "Saoirse", "Brackmoor"),
        ("Tevite, who leads the search team at Quillon, wrote the parser.", "Tevite", "Quillon"),
    ],
)
def test_a_person_at_an_organization_or_its_team_belongs_to_it(text: str, person: str, org: str) -> None:
    assert (person, "PART_OF", org) in edges(text)


def test_a_team_of_an_organization_stays_its_part() -> None:
    found = edges("The growth team at Brackmoor uses Lumenboard.")
    assert ("growth team", "PART_OF", "Brackmoor") in found  # a guard


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("Dr. Kwabena Asare is my GP now.", "Kwabena Asare"),
        ("GP: Dr. Leilani Pahia, Harbour Clinic. Next appt 14/5.", "Leilani Pahia"),
        ("Physio: Tane Whaanga (Tuesdays), then swim.", "Tane Whaanga"),
    ],
)
def test_the_speakers_carers_are_known(text: str, person: str) -> None:
    assert ("user", "KNOWS", person) in edges(text)
