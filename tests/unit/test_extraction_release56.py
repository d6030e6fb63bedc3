"""Release 56: the thirty-eighth set's first look. A possessive before a verb makes it
a noun ("our lead, N, would rather ...", "our running club"); "in my book", "hands down"
and "over every other <noun>" say a preference; a chosen name ending in a work noun is a
product ("settled on Kelpie Deploy"); "N, which ..." is no person; "X is our main
service" names a piece of work; the speaker's own failed attempt at a tool ("I can't log
in to X") is a use; the speaker among the doers of a passive ("led by N and me"); "The
weekend crew is me, A and B"; a person at a fronted workplace ("At O, N runs the night
shift"). Names are invented; each case failed on release 55 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Our lead, Tamati, would rather use Cobblequeue.", ("Tamati", "PREFERS", "Cobblequeue")),
        (
            "Our running club, the Kestrel Harriers, logs every run on Stridely.",
            ("Kestrel Harriers", "USES", "Stridely"),
        ),
    ],
)
def test_a_verb_after_a_possessive_is_a_noun(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_a_possessive_before_favourite_still_prefers() -> None:
    assert ("user", "PREFERS", "Quillmark") in edges("My favourite editor is Quillmark, no contest.")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Tallyfox wins over Sumbook for my receipts, in my book.",
        "Plates over dishes, and Tallyfox over every other ledger app.",
        "Tallyfox, hands down, for receipts; Sumbook is too slow.",
    ],
)
def test_said_for_the_speaker_a_name_first_is_preferred(text: str) -> None:
    assert ("user", "PREFERS", "Tallyfox") in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "Tallyfox, every time I open it, crashes.",
        "My brother says Tallyfox wins over Sumbook.",
    ],
)
def test_no_preference_without_the_speakers_verdict(text: str) -> None:
    assert not any(rel == "PREFERS" for _, rel, _ in edges(text))  # guards


def test_a_chosen_name_ending_in_a_work_noun_is_a_product() -> None:
    found = edges("After two outages we settled on Kelpie Deploy for releases.")
    assert ("user", "DECIDED", "Kelpie Deploy") in found


def test_a_name_before_which_is_a_thing() -> None:
    text = "Ormond, which depends on Bindlewire for its parsers, broke after the upgrade."
    assert ("Ormond", "DEPENDS_ON", "Bindlewire") in edges(text)
    assert entities(text).get("Ormond") not in (None, "person")


def test_a_name_said_to_be_our_service_is_our_work() -> None:
    text = "Quorvex is our main service, and it depends on Tidemill."
    assert entities(text).get("Quorvex") == "project"
    assert ("Quorvex", "DEPENDS_ON", "Tidemill") in edges(text)


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Hi, I can't log in to Gradewell with my student account.", "Gradewell"),
        ("My glucose meter won't pair with the Sugarline app since the update.", "Sugarline"),
        ("I cannot upload my essay to the Markbay portal, it times out.", "Markbay"),
    ],
)
def test_the_speakers_failed_attempt_at_a_tool_is_a_use(text: str, tool: str) -> None:
    assert ("user", "USES", tool) in edges(text)


@pytest.mark.parametrize(
    "text",
    [
        "My sister can't log in to Gradewell.",
        "We didn't go with Gradewell in the end.",
        "I can't stand Gradewell.",
        "Gradewell is not connecting to my calendar.",
        "If I can't log in to Gradewell tomorrow, I'll ring them.",
        "We couldn't agree on Gradewell.",
        "The clerk said I cannot pay with Gradewell.",
    ],
)
def test_no_use_from_others_faults_choices_or_feelings(text: str) -> None:
    assert ("user", "USES", "Gradewell") not in edges(text)  # guards


@pytest.mark.parametrize(
    "text",
    [
        "The Saltreed project is being led by Keoni and me.",
        "The Saltreed project is led by me and Keoni.",
    ],
)
def test_the_speaker_among_a_passives_doers_works_on_it(text: str) -> None:
    found = edges(text)
    assert ("user", "WORKS_ON", "Saltreed") in found
    assert ("user", "WORKS_WITH", "Keoni") in found


def test_a_passive_without_the_speaker_gives_them_nothing() -> None:
    found = edges("The Saltreed project is led by Keoni.")
    assert ("Keoni", "WORKS_ON", "Saltreed") in found  # a guard
    assert ("user", "WORKS_ON", "Saltreed") not in found


def test_a_team_said_to_be_the_speaker_and_others_are_colleagues() -> None:
    found = edges("The weekend crew is me, Ngozi, Tavita and Ilse, all on one rota.")
    for person in ("Ngozi", "Tavita", "Ilse"):
        assert ("user", "WORKS_WITH", person) in found


def test_a_team_of_others_gives_the_speaker_no_colleagues() -> None:
    found = edges("The weekend crew is Ngozi, Tavita and Ilse.")
    assert not any(rel == "WORKS_WITH" for _, rel, _ in found)  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "Over at Harrowby Foods, Kwabena Mensah sits on the safety team.",
        "At Harrowby Foods, Kwabena Mensah runs the night shift.",
    ],
)
def test_a_person_at_a_fronted_workplace_belongs_to_it(text: str) -> None:
    assert ("Kwabena Mensah", "PART_OF", "Harrowby Foods") in edges(text)


def test_a_fronted_place_of_a_visit_is_no_workplace() -> None:
    found = edges("At Harrowby Foods, Kwabena Mensah bought a pie.")
    assert not any(rel == "PART_OF" for _, rel, _ in found)  # a guard
