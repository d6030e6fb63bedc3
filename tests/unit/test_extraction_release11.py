"""Shapes read since release 10: unnamed third parties as subjects (plural roles, a
possessive inside a phrase, a new subject after a comma), a service role that is the
speaker's own or shared, one party named twice by apposition, and a word no list
knows read as a product. Every name is invented, so each case fails if the rule it
names is removed."""

from __future__ import annotations

from tests.unit.extracted import edges, entities


def test_people_named_by_a_plural_role_are_not_the_speaker() -> None:
    assert ("user", "USES", "Quorvo") not in edges("My neighbours use Quorvo doorbells.")
    assert ("user", "USES", "Quorvo") in edges("My flat uses Quorvo doorbells.")


def test_a_possessive_inside_a_phrase_is_not_the_subject() -> None:
    assert ("user", "USES", "Quizzly") not in edges("Everyone in my class uses Quizzly.")
    assert ("user", "USES", "Jira") in edges("In my team we use Jira.")


def test_a_new_subject_after_a_comma_is_not_the_speaker() -> None:
    found = edges("In the hospital where I work, the nurses are writing everything in Meditrax.")
    assert ("user", "USES", "Meditrax") not in found
    found = edges("Margrit, the head baker, prefers the Rational oven.")
    assert ("Margrit", "PREFERS", "Rational") in found


def test_the_speakers_own_accountant_is_known_and_a_shared_one_a_colleague() -> None:
    assert ("user", "KNOWS", "Farida Hadley") in edges("My accountant Farida Hadley says I should file early.")
    assert ("user", "WORKS_WITH", "Okoye") in edges("Our accountant, Mrs. Okoye, said we need to file the VAT.")


def test_a_party_named_twice_by_apposition_is_one_subject() -> None:
    found = edges("Our HOA, Willow Brook Residents Association, decided to use TownSq.")
    assert ("Willow Brook Residents Association", "DECIDED", "TownSq") in found
    assert not any(source == "HOA" for source, _, _ in found)
    found = edges("Ana, Bo, Cy use Slack.")
    assert {("Ana", "USES", "Slack"), ("Bo", "USES", "Slack"), ("Cy", "USES", "Slack")} <= found


def test_a_word_no_list_knows_inside_a_sentence_is_most_likely_a_product() -> None:
    assert entities("We booked the flights on Skyscanvo.") == {"Skyscanvo": "tool"}
    assert entities("Been practising the openings on Lichessa.").get("Lichessa") == "tool"


def test_an_english_word_or_a_given_name_is_not_taken_for_a_product() -> None:
    assert "Bramble" not in entities("We shipped Bramble last week.")
    assert entities("I had coffee with Ikaika yesterday.").get("Ikaika") != "tool"


def test_a_longer_name_opening_with_a_word_no_list_knows_is_a_product() -> None:
    assert entities("I'm saving up for a used Korvan Astronaut.").get("Korvan Astronaut") == "tool"


def test_an_ordinary_word_before_app_names_the_app() -> None:
    assert entities("I'd like to know if the Calm app offers a family plan.") == {"Calm": "tool"}
    assert "My" not in entities("I check on the Find My app.")
    assert entities("Our Lantern app ships Friday.") == {"Lantern": "project"}
