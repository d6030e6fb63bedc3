"""Shapes read since release 8: titles before names, named methods, ", where I work,",
double given names, notes' labels and participles, a verb of use before a plural name,
"switched us to X", a role's noun that is also a verb, a co-subject's instrument, a
team one is on, and a workplace one works in. Every name is invented, so each case
fails if the rule it names is removed."""

from __future__ import annotations

from tests.unit.extracted import edges, entities


def test_a_role_written_as_a_title_is_not_part_of_the_name() -> None:
    assert entities("I emailed Professor Mekdes Halloran about it.") == {"Mekdes Halloran": "person"}
    assert entities("Coach Barakel uses Hevy.").get("Barakel") == "person"


def test_a_name_before_a_noun_for_a_way_of_working_is_a_method() -> None:
    assert entities("I've been trying the Quorlan technique for revision.") == {"Quorlan technique": "concept"}
    assert entities("Baking with the tartivelle method this week.") == {"tartivelle method": "concept"}
    assert entities("The new method is faster.") == {}


def test_where_the_speaker_works_is_their_workplace_and_the_clause_resumes() -> None:
    found = edges("Ostervane Bank, where I work, uses Temenos.")
    assert ("user", "PART_OF", "Ostervane Bank") in found
    assert ("Ostervane Bank", "USES", "Temenos") in found
    assert ("user", "USES", "Temenos") not in found


def test_two_given_names_joined_by_a_hyphen_are_a_person() -> None:
    found = entities("Jean-Baptiste, who works at Fromagerie Delvaux, sent me cheese.")
    assert found.get("Jean-Baptiste") == "person"
    assert ("Jean-Baptiste", "PART_OF", "Fromagerie Delvaux") in edges(
        "Jean-Baptiste, who works at Fromagerie Delvaux, sent me cheese."
    )
    assert entities("We ordered from Hydro-Serwant.").get("Hydro-Serwant") != "person"


def test_a_notes_participle_after_its_label_is_the_speakers_doing() -> None:
    assert ("user", "USES", "Medivane") in edges("meds: tracked in Medivane. refill Thurs.")


def test_a_note_label_leaves_the_speaker_as_the_subject() -> None:
    assert ("user", "USES", "Organic Mapsly") in edges("- maps: using Organic Mapsly")


def test_a_plural_last_word_makes_no_group_after_a_verb_of_use() -> None:
    assert entities("We keep using Quillon Maps for hikes.").get("Quillon Maps") == "tool"
    assert entities("We joined the Windmere Paddlers last year.").get("Windmere Paddlers") == "organization"


def test_switching_us_to_a_tool_changes_the_speakers_tools() -> None:
    assert ("user", "USES", "Toastly") in edges("Olumide switched us from paper tickets to Toastly.")


def test_a_roles_noun_before_the_name_is_no_verb() -> None:
    found = edges("My shift lead Olumide switched us to Toastly.")
    assert {("user", "WORKS_WITH", "Olumide"), ("user", "USES", "Toastly")} <= found


def test_a_co_subject_uses_the_instrument_too() -> None:
    found = edges("My colleague Soraya and I are rebuilding the booking site in SvelteKit.")
    assert {("user", "USES", "SvelteKit"), ("Soraya", "USES", "SvelteKit")} <= found
    assert ("Hauke", "USES", "Loyverse") not in edges("my boss is Hauke and we make the orders in Loyverse")


def test_being_on_a_team_is_working_on_it() -> None:
    found = edges("Mateus and I are on the platform team.")
    assert {("user", "WORKS_ON", "platform team"), ("Mateus", "WORKS_ON", "platform team")} <= found


def test_working_in_an_organisation_is_belonging_to_it() -> None:
    assert ("user", "PART_OF", "Sunvale Hospital") in edges("I work in Sunvale Hospital since March.")
    assert ("user", "USES", "Figma") in edges("I work in Figma all day.")
