"""Release 31: one-off past doings with an instrument, clauses after a bracket, relative
clauses of several words and with "where", clauses after a comma with their own subject,
wishes with "would love", preferences in notes, and smaller limits. Names are invented;
each case failed on release 30 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I drew the garden plan in Plotwise.", "Plotwise"),
        ("We booked the whole trip through Tripwhistle.", "Tripwhistle"),
        ("I came back at 5 and logged the hours in Harvest.", "Harvest"),
    ],
)
def test_a_one_off_past_doing_with_an_instrument_is_no_use_now(text: str, tool: str) -> None:
    assert ("user", "USES", tool) not in edges(text)


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I've logged every run in Stridewell since March.", "Stridewell"),
        ("My tutor set me up on Graphwise.", "Graphwise"),
        ("Backups stored on Vaultbay.", "Vaultbay"),
        ("I deleted my old posts and now I only post on Chirpwell.", "Chirpwell"),
    ],
)
def test_what_holds_or_goes_on_stays_a_use(text: str, tool: str) -> None:
    assert ("user", "USES", tool) in edges(text)  # a guard


def test_the_clause_after_a_bracket_is_the_named_things() -> None:
    text = "Quillstack (our booking app) depends on Paywick for payments."
    found = edges(text)
    assert ("Quillstack", "DEPENDS_ON", "Paywick") in found
    assert ("user", "USES", "Paywick") not in found
    assert entities(text).get("Quillstack") == "project"


def test_an_aside_in_brackets_leaves_the_clause_the_speakers() -> None:
    assert ("user", "USES", "Notewick") in edges("I use Notewick (mostly for recipes) and love it.")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "The Lindenfall recipe site I'm building depends on Basewick for logins.",
        "The Lindenfall weather station I built depends on Basewick.",
    ],
)
def test_a_relative_clause_after_a_longer_noun_phrase_is_said_of_the_name(text: str) -> None:
    found = edges(text)
    assert ("Lindenfall", "DEPENDS_ON", "Basewick") in found
    assert ("user", "USES", "Basewick") not in found


def test_a_where_clause_ending_before_the_verb_names_its_noun() -> None:
    assert not edges("The hotel where I stay use Roomwise for the bookings.")


def test_a_comma_before_a_subject_and_its_verb_ends_the_objects() -> None:
    found = edges("We decided on Glowbeam for the lamps, the Brightly and Lumo ones kept disconnecting.")
    assert ("user", "DECIDED", "Glowbeam") in found
    assert not {e for e in found if e[2] in ("Brightly", "Lumo")}


@pytest.mark.parametrize(
    "text",
    [
        "For my birthday I'd love a Crumbmaster or a Whiskwell.",
        "I'd love to move the choir to Scorewell one day.",
    ],
)
def test_would_love_is_a_wish(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user"}


def test_would_rather_is_still_a_preference() -> None:
    assert ("user", "PREFERS", "Crumbmaster") in edges("I would rather use Crumbmaster.")  # a guard


def test_to_prefer_cooking_with_a_thing_is_a_preference_only() -> None:
    found = edges("I am prefer to cook with a Thermomix because is more fast.")
    assert ("user", "PREFERS", "Thermomix") in found
    assert ("user", "USES", "Thermomix") not in found


def test_a_note_ranking_one_name_over_another_prefers_it() -> None:
    found = edges("Flight prefs: KLM over easyJet")
    assert ("user", "PREFERS", "KLM") in found
    assert not {e for e in found if e[1] == "USES"}


def test_a_shop_of_someone_elses_is_not_the_speakers_trade() -> None:
    assert ("user", "USES", "Shopify") not in edges("My aunt Temperance runs a small Shopify shop.")


def test_we_are_a_shop_is_still_the_speakers_trade() -> None:
    assert ("user", "USES", "Rails") in edges("We're a Rails shop.")  # a guard


def test_a_passive_done_by_people_is_theirs() -> None:
    assert ("user", "USES", "Chatwell") not in edges("The Chatwell app is used by all my family in Porto.")


def test_a_copula_before_a_gerund_names_no_object() -> None:
    found = edges("I've decided to learn Colemak, my wrists are killing me on Qwertyline.")
    assert ("user", "DECIDED", "Qwertyline") not in found


def test_a_duty_still_not_done_is_not_a_use() -> None:
    found = edges("My manager Ilse Brandt say we must use Docwise for documentation, but still nobody do it.")
    assert ("user", "USES", "Docwise") not in found


def test_what_a_dependency_is_for_is_no_dependency() -> None:
    found = edges("Project Sorrelwick depends on Ectowire for every Yugabase query.")
    assert ("Sorrelwick", "DEPENDS_ON", "Ectowire") in found
    assert ("Sorrelwick", "DEPENDS_ON", "Yugabase") not in found


def test_a_gerund_before_a_role_noun_is_no_verb() -> None:
    found = edges("Leontine, my running coach, wants me on Pacewell intervals for eight weeks.")
    assert ("Leontine", "USES", "Pacewell") not in found
    assert ("user", "KNOWS", "Leontine") in found


def test_someone_who_got_the_speaker_hooked_on_a_thing_put_them_on_it() -> None:
    found = edges("My sister Mele just got me hooked on Stridewell, I log every run now.")
    assert ("user", "USES", "Stridewell") in found
    assert ("Mele", "USES", "Stridewell") not in found


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("I (finally) switched to Quillpad.", "Quillpad"),
        ("Our team (mostly) uses Trackwell.", "Trackwell"),
        ("I paid the rent with Monzo, like every month.", "Monzo"),
        ("I edited the photos in Lumenroom as usual.", "Lumenroom"),
        ("I planned the route with Komoot, which I use for every ride.", "Komoot"),
        ("I put all my passwords in Lockwell.", "Lockwell"),
        ("I have an eBay shop for old records.", "eBay"),
        ("Signal is used by my whole family and me.", "Signal"),
        ("The policy says we must use Trackwell, and we still do.", "Trackwell"),
    ],
)
def test_what_the_review_found_the_draft_lost_is_read(text: str, tool: str) -> None:
    assert ("user", "USES", tool) in edges(text)  # a guard
