"""Shapes read since release 7: particles inside a name, "the X app" as a product, a
role that holds whatever its verb says, someone's job as a subject, a lone "on" after
a verb of doing, a company's service when compared, and a note's reduced passive.
Every name is invented, so each case fails if the rule it names is removed."""

from __future__ import annotations

from memledger.extraction import gazetteer as gz
from tests.unit.extracted import edges, entities


def test_lower_case_particles_between_capitalised_words_stay_in_one_name() -> None:
    assert entities("We had dinner at Casa do Varelho.") == {"Casa do Varelho": "organization"}
    assert entities("My lawyer is at Van der Quellen Partners.") == {"Van der Quellen Partners": "organization"}
    assert "Universidad del Tormello" in entities("My boss Ilse moved to the Universidad del Tormello.")


def test_of_after_a_given_name_still_separates_a_person_from_a_place() -> None:
    found = entities("Radka of Brantwell Analytics called.")
    assert "Radka of Brantwell Analytics" not in found
    assert found.get("Brantwell Analytics") == "organization"


def test_the_name_of_an_app_is_a_product_unless_the_speaker_owns_it() -> None:
    assert entities("Honestly the Velmory app is great.") == {"Velmory": "tool"}
    assert ("user", "USES", "Stridelo") in edges("I log runs in the Stridelo app.")
    assert entities("Our Lanterno app ships on Friday.") == {"Lanterno": "project"}


def test_a_role_holds_when_the_verb_after_it_is_negated() -> None:
    assert ("user", "KNOWS", "Anirudh") in edges("my husband Anirudh cannot see the calendar")
    assert ("user", "WORKS_WITH", "Bertilo") in edges("My colleague Bertilo doesn't like Jira.")


def test_a_negation_before_the_role_still_denies_it() -> None:
    assert ("user", "KNOWS", "Maelis") not in edges("I don't think my sister Maelis uses Notion.")


def test_someone_named_by_their_job_is_not_the_speaker() -> None:
    assert "teacher" not in gz.ROLES
    assert not any(source == "user" for source, _, _ in edges("Our teacher uses Kahootle in every class."))
    assert not any(source == "user" for source, _, _ in edges("My prof uses Mathemora for everything."))
    assert ("user", "USES", "Linear") in edges("My team uses Linear.")


def test_a_lone_on_after_a_verb_of_doing_names_what_is_used() -> None:
    assert ("user", "USES", "Chessvale.com") in edges("I play on Chessvale.com most nights.")
    assert ("user", "USES", "Etsy") in edges("I mostly sell my bowls on Etsy.")
    assert ("user", "WORKS_ON", "Kestrelo") in edges("I work on project Kestrelo.")


def test_a_lone_on_does_not_reach_back_past_a_comma() -> None:
    found = edges("My mate Oisín records everything in Reaper, I'm still on GarageBand.")
    assert ("Oisín", "USES", "GarageBand") not in found
    assert ("user", "USES", "GarageBand") in found


def test_a_company_compared_with_another_is_the_service_it_sells() -> None:
    assert "flipkart" in gz.ORGANIZATIONS and "flipkart" not in gz.TOOL_KIND
    assert entities("I prefer Jumia over Flipkart.").get("Flipkart") == "tool"
    assert entities("She is a partner at Flipkart now.").get("Flipkart") == "organization"


def test_a_notes_line_opening_with_a_thing_and_a_participle_is_the_speakers_doing() -> None:
    assert ("user", "USES", "Backblaze") in edges("Backups stored on Backblaze.")
    assert ("user", "USES", "Xero") in edges("Invoices exported via Xero every Friday.")
    assert ("Sarah", "USES", "Lightroom") in edges("Sarah edited it in Lightroom.")
