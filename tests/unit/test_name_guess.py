"""Names no list knows and no slot explains are typed by their spelling, and roles the
lists do not know are read from the grammar. Every name here is invented or absent from
the gazetteer's own lists, so each case fails if the rule it names is removed."""

from __future__ import annotations

import pytest

from memledger.extraction import gazetteer as gz
from memledger.extraction import name_guess
from memledger.extraction.heuristic import extract_text
from memledger.extraction.patterns import tokenize
from memledger.extraction.roles import any_role_after, any_role_before, relation_of


def edges(text: str) -> set[tuple[str, str, str]]:
    return {(r.source_name, r.relation, r.target_name) for r in extract_text(text, "user").relationships}


def entities(text: str) -> set[tuple[str, str]]:
    return {(e.name, e.entity_type) for e in extract_text(text, "user").entities}


@pytest.mark.parametrize("name", ["Tewodros", "Oluwadamilare", "Ragnheiður"])
def test_a_given_name_from_anywhere_reads_as_a_person(name: str) -> None:
    assert not gz.is_given_name(name.lower()), "the case must not be in the gazetteer already"
    assert name_guess.guess([name]) == "person"


@pytest.mark.parametrize("name", ["Nyokabi", "Mathemira", "Yousicana"])
def test_a_name_no_list_holds_is_not_a_person_by_its_spelling_alone(name: str) -> None:
    """Products are spelt like given names as often as not ("Makita", "Runna"): only a
    list of given names, or the words around a name, make it a person's."""
    assert name_guess._lists().model.score(name.lower()) > 1.0, "the case must be spelt like a given name"
    assert name_guess.guess([name]) is None


def test_what_the_speaker_owns_and_no_given_name_is_a_thing() -> None:
    assert name_guess.guess(["Quorvane", "Elemnt"], "my") == "tool"
    assert name_guess.guess(["Quorvane", "Elemnt"], "with") is None


@pytest.mark.parametrize("name", ["Cronometer", "Flowtrackr", "Syncbase"])
def test_a_coined_product_name_reads_as_a_tool(name: str) -> None:
    assert name_guess.guess([name]) == "tool"


@pytest.mark.parametrize(
    ("words", "before"),
    [
        (["Primary"], ""),
        (["Fair"], "the"),
        (["SFTP"], ""),
        (["Zakopane"], "near"),
        (["Sora"], "to"),
        (["Teachers"], ""),
    ],
)
def test_ordinary_words_acronyms_and_places_are_not_guessed(words: list[str], before: str) -> None:
    assert name_guess.guess(words, before) is None


def test_a_name_that_is_also_a_town_is_a_person_unless_a_preposition_of_place_precedes_it() -> None:
    assert name_guess.guess(["Sora"], "with") == "person"
    assert name_guess.guess(["Sora"], "near") is None


def test_a_full_name_and_a_product_line_are_told_apart() -> None:
    assert name_guess.guess(["Ashot", "Petrosyan"]) == "person"
    assert name_guess.guess(["Quorbix", "Disto"]) == "tool"
    assert name_guess.guess(["Night", "Ferry"]) is None


def test_guessed_names_reach_the_extraction_at_low_confidence() -> None:
    found = extract_text("Tewodros tracks my rehab exercises in Physitrack.", "user")
    by_name = {e.name: e for e in found.entities}
    assert by_name["Tewodros"].entity_type == "person"
    assert by_name["Physitrack"].entity_type == "tool"
    assert ("Tewodros", "USES", "Physitrack") in edges("Tewodros tracks my rehab exercises in Physitrack.")


def test_a_known_name_extended_by_a_kind_of_institution_is_an_organization() -> None:
    assert ("Mistral Bakery", "organization") in entities("I work at Mistral Bakery on weekends.")


@pytest.mark.parametrize(
    ("text", "person", "relation"),
    [
        ("Ebru is my financial planner at Drayvale Bank.", "Ebru", "KNOWS"),
        ("Rasa, my pottery teacher, sells her bowls online.", "Rasa", "KNOWS"),
        ("Our landlord Cengiz fixed the boiler.", "Cengiz", "KNOWS"),
        ("my manager is Anirudh and he is great.", "Anirudh", "WORKS_WITH"),
    ],
)
def test_any_noun_the_speaker_owns_is_a_role_of_a_person(text: str, person: str, relation: str) -> None:
    assert ("user", relation, person) in edges(text)


def test_a_participle_or_someone_elses_noun_is_no_role() -> None:
    lows = [w.lower() for w in tokenize("The plumber our neighbour recommended, Ashot Petrosyan, runs a firm.")]
    assert any_role_before(lows, lows.index("ashot")) is None
    words = tokenize("Ana is my sister's teacher.")
    assert any_role_after(words, [w.lower() for w in words], 1) is None
    assert relation_of("landlord") == "KNOWS" and relation_of("manager") == "WORKS_WITH"


def test_whom_the_speaker_does_something_with_they_know() -> None:
    assert {("user", "KNOWS", "Jurgis"), ("user", "KNOWS", "Cathal")} <= edges(
        "I restarted the band with Jurgis and Cathal after a break."
    )
    assert ("user", "KNOWS", "Jurgis") not in edges("I never went sailing with Jurgis.")
    assert not any(r == "KNOWS" for _, r, _ in edges("We replaced Jira with Linear."))


def test_a_passive_doer_uses_the_instrument_and_adverbs_do_not_hide_a_subject() -> None:
    assert ("Carys", "USES", "MuseScore") in edges("The sheet music is managed by Carys in MuseScore.")
    assert ("Gurpreet", "USES", "GnuCash") in edges("My dad Gurpreet still keeps his taxes in GnuCash.")


def test_a_company_after_a_word_of_use_is_the_service_it_sells() -> None:
    assert ("Etsy", "tool") in entities("She sells her bowls on Etsy.")
    assert ("Etsy", "organization") in entities("She works at Etsy.")


def test_an_opening_name_ending_in_a_kind_of_institution_is_whole() -> None:
    assert ("Saltmarsh Credit Union", "organization") in entities("Saltmarsh Credit Union is where Tamati works.")
    assert ("Credit Union", "organization") not in entities("Saltmarsh Credit Union is where Tamati works.")


def test_an_embedded_relative_clause_does_not_lend_its_subject_to_the_main_verb() -> None:
    found = edges("Quorvane, which Tadhg hates, runs on Postgres.")
    assert ("Tadhg", "USES", "Postgres") not in found
    assert ("Iker", "WORKS_ON", "Juniper Sync") in edges(
        "Iker, who joined from Ostara Robotics, now works on Juniper Sync with me."
    )


def test_a_second_verb_joined_by_and_is_said_of_the_opening_subject() -> None:
    assert ("Ximena Ortega", "WORKS_ON", "Quorvane") in edges(
        "Quorvane depends on Stripe and is maintained by Ximena Ortega."
    )


def test_names_listed_around_an_apposition_share_the_verb() -> None:
    found = edges("Amaru Quispe, our SRE, and Eleni Vlachou, the DBA, both work on Quorvane.")
    assert {("Amaru Quispe", "WORKS_ON", "Quorvane"), ("Eleni Vlachou", "WORKS_ON", "Quorvane")} <= found


def test_a_town_after_a_preposition_of_place_is_no_tool() -> None:
    assert ("user", "USES", "Lyon") not in edges("My sister, who lives in Lyon, uses Notion for everything.")


def test_what_a_relative_clause_says_someone_built_is_their_project() -> None:
    text = "The Halyard scheduler, which Bao wrote in Odin, is fast."
    assert ("Halyard", "project") in entities(text)
    assert ("Bao", "WORKS_ON", "Halyard") in edges(text)
    assert ("Halyard", "project") not in entities("The Halyard scheduler, which Bao hates, is slow.")


def test_a_piece_of_work_the_speaker_owns_or_builds_is_their_project() -> None:
    assert ("user", "WORKS_ON", "Quillmark") in edges("My side project Quillmark is written in Go.")
    assert ("Lantern", "project") in entities("Our app, Lantern, runs on Postgres.")  # a team's (release 33)
    assert ("user", "WORKS_ON", "Quillmark") in edges("I'm building Quillmark in my spare time.")
    assert ("user", "WORKS_ON", "Lantern") not in edges("Their app, Lantern, runs on Postgres.")
