"""Release 24: a note's label naming the project whose tools it lists, and the speaker's
company named after "our company". Names are invented; each case failed on release 23
unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities

STACK = "Stack for Merganser: LiteDB via Replistream, Ferryproxy in front."


def test_a_stack_labels_project_uses_what_it_lists() -> None:
    found = edges(STACK)
    assert entities(STACK).get("Merganser") == "project"
    assert {("Merganser", "USES", "LiteDB"), ("Merganser", "USES", "Ferryproxy")} <= found
    assert ("user", "USES", "LiteDB") not in found


def test_our_company_named_is_the_speakers_workplace() -> None:
    assert ("user", "PART_OF", "Dunvale Agro") in edges("Our company Dunvale Agro is using Cropwheel for the fields.")


def test_an_office_beside_a_name_is_still_membership() -> None:
    assert ("Kofi", "PART_OF", "Acme Labs") in edges("Kofi, head of Acme Labs, called.")  # a guard


def test_a_job_beside_a_name_is_membership() -> None:
    assert ("Ravi", "PART_OF", "Acme Labs") in edges("Ravi, contractor for Acme Labs, called.")


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("my old company Initech fired me", ("user", "PART_OF", "Initech")),
        ("my phone company Vodafone overcharged me", ("user", "PART_OF", "Vodafone")),
        ("Ravi, former contractor for Acme Labs, called.", ("Ravi", "PART_OF", "Acme Labs")),
    ],
)
def test_what_a_review_of_the_draft_found_is_not_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)  # guards from the review


def test_an_english_word_after_a_label_is_no_project() -> None:
    assert entities("Testing for Covid: negative").get("Covid") != "project"  # a guard
