"""Release 67: the forty-eighth set's first look. "X is my project" says the speaker works
on X; ", which I'm leading," too; a verb of work or organising takes its tool after an
unnamed object ("I manage citations in X"); ", who books ... through X" is the person's
use; "is depending also on" and "are co-maintainers of" are their verbs; "the flow in P
depends on X" is P's dependency; "X & Y" is one firm's name, though X is known; "the firm
I temp for, N," is the speaker's workplace; "we didn't bother with X" reports no fault;
"Fish shell over zsh" in a note is a preference. Names are invented; each case failed on
release 66 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_a_name_said_to_be_my_project_is_worked_on() -> None:
    assert ("user", "WORKS_ON", "Corvasset") in edges("Corvasset is my main project this year, and it's mostly Go.")


def test_a_name_said_to_be_my_preferred_program_is_not_worked_on() -> None:
    assert ("user", "WORKS_ON", "Tinsmere") not in edges("Tinsmere is my preferred program for sketching.")  # a guard


def test_the_determiner_is_no_part_of_a_project_named_first() -> None:
    found = edges("The Larder Revamp is my project this year, and it depends on the Hobart mixers.")
    assert ("user", "WORKS_ON", "Larder Revamp") in found
    assert ("Larder Revamp", "DEPENDS_ON", "Hobart") in found


def test_a_progressive_relative_clause_of_work() -> None:
    assert ("user", "WORKS_ON", "Quillmoor") in edges("Quillmoor, which I'm coordinating, is late again.")


def test_a_past_relative_clause_of_work_is_not_now() -> None:
    text = "The company I worked for, Brantholm Foods, closed."
    assert ("user", "PART_OF", "Brantholm Foods") not in edges(text)  # a guard


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I manage citations in Zotero and my references finally make sense.", "Zotero"),
        ("We've been coordinating everything on WhatsApp since March.", "WhatsApp"),
    ],
)
def test_a_verb_of_work_takes_its_instrument_after_an_unnamed_object(text: str, tool: str) -> None:
    assert ("user", "USES", tool) in edges(text)


def test_a_guessed_name_after_in_following_work_may_be_a_place() -> None:
    assert not any(e[2] == "Rangitoto" for e in edges("I manage a sheep farm in Rangitoto."))  # a guard


def test_who_after_a_name_does_the_using() -> None:
    text = "Our darts team is run by Oyelaran Bakare, who books the venues through Playtomic."
    assert ("Oyelaran Bakare", "USES", "Playtomic") in edges(text)


def test_who_after_a_name_in_the_past_tells_an_episode() -> None:
    text = "Our plumber, Fintan Ó Dálaigh, who put in a Combi-Flo pump last spring, is booked solid."
    assert ("Fintan Ó Dálaigh", "USES", "Combi-Flo") not in edges(text)  # a guard


def test_an_adverb_between_a_verb_and_its_particle() -> None:
    assert ("Kestrelby", "DEPENDS_ON", "Elasticsearch") in edges("Kestrelby is depending also on Elasticsearch.")


def test_a_plural_role_noun_before_of() -> None:
    found = edges("Ilkka Suominen and Tevita Lolo are co-maintainers of Brindlecote with me.")
    assert ("Ilkka Suominen", "WORKS_ON", "Brindlecote") in found
    assert ("user", "WORKS_ON", "Brindlecote") in found


def test_a_part_in_a_project_names_the_project_as_subject() -> None:
    found = edges("The checkout flow in Merrowdale depends on Stripe and a feature flag in Unleash.")
    assert ("Merrowdale", "DEPENDS_ON", "Stripe") in found


def test_people_in_a_place_are_no_project() -> None:
    assert not any(e[0] == "Hackney" for e in edges("People in Hackney rely on Citymapper."))  # a guard


@pytest.mark.parametrize(
    ("text", "firm"),
    [
        ("Ayomide Ferreira, who runs Hinge & Anvil, quoted us for the decking.", "Hinge & Anvil"),
        ("Pan & Quern, our little deli, runs on Square.", "Pan & Quern"),
    ],
)
def test_an_ampersand_joins_one_firms_name(text: str, firm: str) -> None:
    assert entities(text).get(firm) == "organization"


def test_two_known_names_joined_by_ampersand_stay_two() -> None:
    found = entities("I use Slack & Notion every day.")  # a guard
    assert found.get("Slack") == "tool" and found.get("Notion") == "tool"


def test_the_firm_i_temp_for_is_my_workplace() -> None:
    text = "The law firm I temp for, Whitcombe & Ashdown, keeps every file in iManage."
    assert ("user", "PART_OF", "Whitcombe & Ashdown") in edges(text)


def test_a_group_played_in_with_me_has_me_too() -> None:
    text = "Kwabena and Ingeborg both play in the Saltmarsh Brass Band with me."
    assert ("user", "PART_OF", "Saltmarsh Brass Band") in edges(text)


def test_a_plain_negation_of_mine_reports_no_fault() -> None:
    assert ("user", "USES", "Airalo") not in edges("We didn't bother with Airalo this time, the wifi was fine.")


def test_a_failed_attempt_still_reports_a_fault() -> None:
    assert ("user", "USES", "Docuvault") in edges("I didn't manage to upload the scans into Docuvault.")  # a guard


def test_a_which_clause_about_a_feeling_makes_no_habit() -> None:
    text = "At my last job we ran everything on Heroku, which feels like a different century now."
    assert ("user", "USES", "Heroku") not in edges(text)


def test_a_noted_tool_with_its_noun_over_another_is_preferred() -> None:
    found = edges("Prefs: dark mode, 2-space indent, Fish shell over zsh.")
    assert ("user", "PREFERS", "Fish") in found
    assert ("user", "USES", "Fish") not in found
