"""Release 62: the forty-third set's first look. A word in -ing or -ed of an English verb is
no tool ("I keep dismissing them"); "<verb> me to", "<verb> us to" asks, and a bare verb
joined by "and" shares the infinitive before it; a verb of using or playing with an
unnamed object leaves its instrument to the frame ("I play chess on X"); "prefers we
<verb> with X" is a wish; a restrictive "who" after a company's name is about the person
("N is the lead at O who owns P"); "put me on P" puts the speaker on it; a passive's
agent owns the doing ("our scores are kept by N in X"); a calendar word closing a name
before its verb ("Tran Van Thu is ...") is part of it; "N and me are ..." and "me and my
<role> N ..." are groups with the speaker; "on the new X project, called P" names P. Names
are invented; each case failed on release 61 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("The alerts come at odd times and I keep snoozing them.", "snoozing"),
        ("My supplier moved the invoicing over to Tallybird.", "invoicing"),
        ("we do invoicing in quorvane now", "invoicing"),
    ],
)
def test_a_verb_form_is_no_tool(text: str, word: str) -> None:
    assert word not in entities(text)


@pytest.mark.parametrize(
    ("text", "asker", "tool"),
    [
        ("My bandmate Oyelaran keeps nagging us to move to Tessaract.", "Oyelaran", "Tessaract"),
        ("My aunt Ilse pesters me to switch to Brindlepay.", "Ilse", "Brindlepay"),
    ],
)
def test_a_verb_before_me_to_asks(text: str, asker: str, tool: str) -> None:
    found = edges(text)
    assert (asker, "USES", tool) not in found
    assert ("user", "USES", tool) not in found


def test_a_verb_that_makes_the_speaker_act_is_no_asking() -> None:
    assert ("user", "USES", "Quillary") in edges("My supervisor taught me to write everything in Quillary.")  # a guard


def test_a_bare_verb_after_and_shares_the_infinitive() -> None:
    found = edges("My swim coach Temperance told me to drop Finnly and train with Lapcount instead.")
    assert ("Temperance", "USES", "Lapcount") not in found


def test_a_subject_between_the_verbs_ends_the_shared_infinitive() -> None:
    found = edges("I wanted to try Finnly and Temperance trains with Lapcount every week.")
    assert ("Temperance", "USES", "Lapcount") in found  # a guard


@pytest.mark.parametrize(
    "text",
    ["I play chess on Knightfall most evenings.", "We play bridge on Trumpdeck every Sunday."],
)
def test_a_game_played_on_a_tool_uses_it(text: str) -> None:
    tool = "Knightfall" if "Knightfall" in text else "Trumpdeck"
    assert ("user", "USES", tool) in edges(text)


def test_a_game_not_played_on_a_tool_does_not_use_it() -> None:
    assert ("user", "USES", "Knightfall") not in edges("I don't play chess on Knightfall anymore.")  # a guard


def test_a_comparison_with_like_is_no_wish() -> None:
    assert ("user", "USES", "Signal") in edges("It's like we chat with Signal more than we talk.")  # a guard


def test_a_preferred_way_of_working_is_a_wish() -> None:
    found = edges("My team lead Ossian he prefer we write all the tests with pytest, no exceptions.")
    assert ("user", "USES", "pytest") not in found  # a guard: the game-and-tool reading must not take it


def test_a_restrictive_who_after_a_company_is_about_the_person() -> None:
    found = edges("Radomir Kask is the staff engineer at Pellucid Labs who owns the Driftnet service.")
    assert ("Radomir Kask", "WORKS_ON", "Driftnet") in found
    assert ("Pellucid Labs", "WORKS_ON", "Driftnet") not in found


def test_being_put_on_a_project_is_the_speakers_work() -> None:
    found = edges("My manager Yevgenia Sato put me on the Harrowgate Ledger project.")
    assert ("user", "WORKS_ON", "Harrowgate Ledger") in found
    assert ("Yevgenia Sato", "WORKS_ON", "Harrowgate Ledger") not in found


def test_a_restrictive_who_after_an_object_is_not_the_subjects() -> None:
    found = edges("I emailed Oriel about Kestrelnet who built Bluefinch.")
    assert ("Oriel", "WORKS_ON", "Bluefinch") not in found  # a guard


def test_a_passive_agent_owns_the_doing() -> None:
    found = edges("Our allotment rota is kept by Wilhelmina in a Tallysheet base.")
    assert ("user", "USES", "Tallysheet") not in found


def test_an_agent_of_another_verb_leaves_the_speakers_use() -> None:
    found = edges("Our recipes are typed up by Wilhelmina and stored in Tallysheet.")
    assert ("user", "USES", "Tallysheet") in found  # a guard


def test_the_speakers_thing_kept_in_a_tool_is_used() -> None:
    assert ("user", "USES", "Tallysheet") in edges("Our allotment rota is kept in Tallysheet.")  # a guard


def test_a_calendar_word_closing_a_name_before_its_verb_is_part_of_it() -> None:
    assert entities("My co-author Tran Van Thu is redrafting the discussion.").get("Tran Van Thu") == "person"


@pytest.mark.parametrize("text", ["Meet Oriel Thu at noon.", "Dinner with Oriel Vance Sat was lovely."])
def test_a_calendar_word_after_a_name_is_still_a_day(text: str) -> None:
    assert not any(name.endswith(("Thu", "Sat")) for name in entities(text))  # a guard


@pytest.mark.parametrize(
    ("text", "project"),
    [
        ("Kwabena and me are both on the Saltreed project until March.", "Saltreed"),
        ("me n my lab partner oskar r stuck on the fernwood project til june", "fernwood"),
        ("Ilkay and me both work on the Saltreed project.", "Saltreed"),
    ],
)
def test_the_speaker_in_a_group_works_on_it(text: str, project: str) -> None:
    assert ("user", "WORKS_ON", project) in edges(text)


def test_the_speaker_in_a_group_uses_it() -> None:
    assert ("user", "USES", "Drawbridge") in edges("Ilkay and me both use Drawbridge.")


@pytest.mark.parametrize(
    "text",
    ["Kwabena sent the Saltreed plan to Ana and me.", "The photos of Kwabena and me are on Picturelane."],
)
def test_me_after_a_preposition_is_no_subject(text: str) -> None:
    found = edges(text)
    assert ("user", "WORKS_ON", "Saltreed") not in found  # a guard
    assert ("user", "USES", "Picturelane") not in found


def test_a_project_called_after_a_comma_is_the_one_worked_on() -> None:
    assert ("user", "WORKS_ON", "Larkspur") in edges("I'm on the new payroll project, called Larkspur.")
