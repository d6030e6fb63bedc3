"""False readings a review of release 18's draft found, each confirmed on the draft and
fixed before the release: what the new rules must not read. Names are invented."""

from __future__ import annotations

import pytest

from memledger.extraction.heuristic import extract_text
from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I gave the keys to Kamala my neighbour.", ("user", "KNOWS", "Kamala")),
        ("With Ayodele my cousin we drove to Accra.", ("user", "KNOWS", "Ayodele")),
        ("Not adopting: Bazel, but we use Gradle.", ("user", "USES", "Gradle")),
        ("I come back at 5 and log the hours in Harvest.", ("user", "USES", "Harvest")),
        ("I used the Flo app every day when I was pregnant, and I still use it.", ("user", "USES", "Flo")),
        ("I still use my iPod in the car.", ("user", "USES", "iPod")),
    ],
)
def test_what_the_draft_lost_is_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Fatima texted me on Signal.", ("user", "USES", "Signal")),
        ("Bongani paid me via PayPal.", ("user", "USES", "PayPal")),
        ("We play Chopin at every recital.", ("user", "USES", "Chopin")),
        ("Loved the ending in the Netflix version.", ("user", "USES", "Netflix")),
        ("Hated the new layout on Instagram.", ("user", "USES", "Instagram")),
    ],
)
def test_what_the_draft_read_wrongly_is_not_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My sister has Power of Attorney for our mum now.", "Power of Attorney"),
        ("We walked along the Water of Leith on sunday.", "Water of Leith"),
        ("I voted for Harris.", "Harris"),
    ],
)
def test_phrases_the_draft_took_for_names_are_not_typed_so(text: str, name: str) -> None:
    assert entities(text).get(name) not in ("organization", "tool")


def test_a_greeting_before_a_given_name_is_no_part_of_it() -> None:
    assert entities("Inshallah Tunde will come on friday.").get("Tunde") == "person"


def test_a_name_keeps_each_type_a_relationship_stands_on() -> None:
    found = extract_text("My colleague Julia writes all her models in Julia.", "user")
    assert {e.entity_type for e in found.entities if e.name == "Julia"} == {"person", "tool"}


def test_a_subjectless_verb_with_a_bare_object_is_the_speakers() -> None:
    assert ("user", "USES", "Logic") in edges("Recorded vocals in Logic.")


def test_a_relative_put_the_speaker_on_a_service() -> None:
    assert ("user", "USES", "Wordle") in edges("My sister got me on Wordle.")
