"""Shapes read since release 5: names compared or listed with a typed one, a company's
or a tool's name extended by its product's words or model code, what the speaker owns,
"my partner X and I", an institution's noun before its name, and where the speaker
studies, drives or has been. Every name is invented, so each case fails if the rule it
names is removed."""

from __future__ import annotations

from memledger.extraction import gazetteer as gz
from tests.unit.extracted import edges, entities


def test_a_name_compared_with_a_tool_is_a_tool() -> None:
    assert entities("Honestly Trello vs Zanquel is a coin toss.").get("Zanquel") == "tool"
    assert entities("I'd pick Trello over Zanquel any day.").get("Zanquel") == "tool"


def test_a_name_listed_with_a_guessed_product_takes_its_type() -> None:
    found = entities("Anyone know if Stormbridge or Zanquel is cheaper?")
    assert found == {"Stormbridge": "tool", "Zanquel": "tool"}


def test_a_comma_does_not_carry_a_guessed_type_into_the_next_clause() -> None:
    found = entities("We met in Zanquel, Ragnheiður already booked the van.")
    assert found.get("Zanquel") != "person"


def test_a_companys_name_with_its_products_words_is_the_product() -> None:
    assert "google" in gz.KNOWN_NAMES and "google earth" not in gz.KNOWN_NAMES
    assert entities("I mostly navigate with Google Earth.") == {"Google Earth": "tool"}


def test_a_model_code_after_a_known_name_is_part_of_it() -> None:
    assert entities("I shoot everything on a Sony A6400.") == {"Sony A6400": "tool"}


def test_what_the_speaker_owns_past_a_describing_word_is_used() -> None:
    assert ("user", "USES", "Kindle") in edges("I read it on my old Kindle.")
    assert ("user", "USES", "Jira") not in edges("my brother's Jira board is chaos")


def test_an_unknown_name_the_speaker_owns_is_a_thing() -> None:
    assert entities("the route will not sync to my Quorvane Elemnt.") == {"Quorvane Elemnt": "tool"}


def test_a_named_partner_and_i_are_one_subject() -> None:
    found = edges("My partner Zdravka and I decided to use Xero.")
    assert {("Zdravka", "DECIDED", "Xero"), ("user", "DECIDED", "Xero")} <= found


def test_a_name_after_an_institutions_noun_is_that_institution() -> None:
    assert entities("The clinic Salud Veranera decided to use Xero.").get("Salud Veranera") == "organization"
    assert ("Salud Veranera", "DECIDED", "Xero") in edges("The clinic Salud Veranera decided to use Xero.")


def test_where_the_speaker_studies_drives_or_has_been_is_where_they_belong() -> None:
    assert ("user", "PART_OF", "Quellmoor College") in edges("I study at Quellmoor College.")
    assert ("user", "PART_OF", "Lumbrel Freight") in edges("Now I drive for Lumbrel Freight.")
    assert ("user", "PART_OF", "Vantree Bistro") in edges("been at Vantree Bistro six years now")


def test_a_role_at_work_makes_a_colleague() -> None:
    assert ("user", "WORKS_WITH", "Zdravka") in edges("My lab partner Zdravka swears by Zotero.")
    assert ("user", "KNOWS", "Zdravka") in edges("My partner Zdravka swears by Zotero.")


def test_a_passive_whose_doer_has_an_untyped_name_says_nothing_of_the_speaker() -> None:
    assert ("user", "USES", "Zentrix") not in edges("Zentrix is used by the Vaskel storefront for search.")
    assert ("user", "USES", "Zentrix") in edges("Zentrix is used by the storefront for search.")


def test_a_passives_subject_may_be_the_name_modifying_its_noun() -> None:
    found = edges("The Quarnby importer is powered by Apache Tika.")
    assert ("Quarnby", "USES", "Apache Tika") in found and ("user", "USES", "Apache Tika") not in found


def test_a_relative_clause_about_someone_unnamed_says_nothing_of_the_speaker() -> None:
    assert edges("The guy who did our loft only uses Zentrix kit.") == set()
    assert edges("I hired a fitter who uses Zentrix.") == set()
    assert ("Quarnby", "USES", "Zentrix") in edges("We maintain Quarnby, which uses Zentrix.")


def test_an_owned_noun_before_a_named_person_is_that_persons_role() -> None:
    found = edges("Our head chef, Tomasz Wrona, prefers Zentrix ovens.")
    assert ("Tomasz Wrona", "PREFERS", "Zentrix") in found and ("user", "PREFERS", "Zentrix") not in found


def test_it_is_the_last_thing_named_when_that_is_a_piece_of_work() -> None:
    found = edges("My colleague Zdravka maintains the Quarnby library, it depends on NumPy.")
    assert ("Quarnby", "DEPENDS_ON", "NumPy") in found
    assert not any(rel == "DEPENDS_ON" for _, rel, _ in edges("We run Quarnby on Postgres, it depends on NumPy."))


def test_what_a_piece_of_work_needs_or_is_depending_on_it_depends_on() -> None:
    assert ("Quarnby", "DEPENDS_ON", "Valkey") in edges("The Quarnby service needs Valkey or it falls over.")
    assert ("Quarnby", "DEPENDS_ON", "NumPy") in edges("The project Quarnby is depending on NumPy.")


def test_a_pronoun_opening_a_sentence_may_stand_for_the_last_sentences_name() -> None:
    assert ("Quarnby", "DEPENDS_ON", "Kafka") in edges("We built Quarnby last spring. It depends on Kafka.")
    assert ("Zdravka", "PREFERS", "Zotero") in edges("I met Zdravka at the lab. She prefers Zotero.")


def test_a_role_labelling_a_person_in_a_note_is_the_speakers() -> None:
    assert ("user", "KNOWS", "Zdravka Quill") in edges("Tutor: Zdravka Quill (Spanish), Weds online.")
    assert ("user", "WORKS_WITH", "Zdravka Quill") in edges("Thesis: supervisor = Prof. Zdravka Quill.")
    assert not any(rel == "KNOWS" for _, rel, _ in edges("Standup: Zdravka Quill blocked on review."))


def test_informal_kin_words_are_roles() -> None:
    assert ("user", "KNOWS", "chidi") in edges("my bf chidi n i went w/ a joint account at starling")


def test_a_progressive_verb_takes_its_instrument() -> None:
    assert ("user", "USES", "Vesterby") in edges("I've been logging my runs in Vesterby since March.")
    assert ("user", "USES", "Google Fit") in edges("So I am counting my steps with Google Fit.")


def test_it_after_a_verb_of_evaluation_does_not_end_its_scope() -> None:
    assert ("user", "USES", "Vesterby") not in edges("Now I'm looking at doing it online through Vesterby instead.")


def test_through_the_name_of_a_region_is_no_instrument() -> None:
    assert "Vaskels" not in entities("We're doing a three-week loop through the Vaskels in the autumn.")
    assert ("user", "USES", "Vesterby") in edges("I submit my drafts through the Vesterby portal.")


def test_note_shorthand_reads_as_the_words_it_stands_for() -> None:
    assert ("Yerlan", "PART_OF", "Vaskel Routes Travel") in edges("visa: ask Yerlan @ Vaskel Routes Travel")
    assert ("Quarnby", "DEPENDS_ON", "Postgres") in edges("Quarnby svc → depends on NATS + Postgres")


def test_the_speakers_job_at_an_organization_places_them_there() -> None:
    assert ("user", "PART_OF", "Vaskel General") in edges("I've been a porter at Vaskel General for six years.")


def test_a_verb_after_a_projects_head_noun_is_no_project_name() -> None:
    found = entities("The Quarnby project depends from the old Postgres cluster.")
    assert "depends" not in found and ("Quarnby", "DEPENDS_ON", "Postgres") in edges(
        "The Quarnby project depends from the old Postgres cluster."
    )


def test_a_wh_word_before_its_clauses_subject_opens_no_question() -> None:
    assert ("user", "PREFERS", "Vesterby") in edges("When I travel I prefer Vesterby.")
    assert edges("When do I prefer Vesterby.") == set()
