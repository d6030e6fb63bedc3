"""Release 66: the forty-seventh set's first look. A name set between commas after "my" or
"our" and a noun for people is that person ("my guitar teacher, Obiageli, records ...");
"Project X, my <work>," names the project X; a British -ised form of an English verb is no
name ("my dad digitised them"). Names are invented; each case failed on release 65
unless marked a guard."""

from __future__ import annotations

from tests.unit.extracted import edges, entities


def test_a_name_apposed_to_my_people_noun_is_a_person() -> None:
    text = "My guitar teacher, Chinonso Adeyemi-Park, records every lesson on a Tapewell recorder."
    assert entities(text).get("Chinonso Adeyemi-Park") == "person"
    assert ("Chinonso Adeyemi-Park", "USES", "Tapewell") in edges(text)


def test_a_name_apposed_to_our_work_noun_is_no_person() -> None:
    assert entities("Our app, Lanternwick, is nearly done.").get("Lanternwick") != "person"  # a guard


def test_project_before_an_apposition_is_dropped_from_the_name() -> None:
    found = edges("Project Emberwell, my smart-home rebuild, depends on Zigbee2MQTT.")
    assert ("Emberwell", "DEPENDS_ON", "Zigbee2MQTT") in found
    assert ("user", "WORKS_ON", "Emberwell") in found


def test_a_british_verb_form_is_no_name() -> None:
    text = "we watched old home videos that my dad digitised years ago, so sweet"
    assert "digitised" not in entities(text)
