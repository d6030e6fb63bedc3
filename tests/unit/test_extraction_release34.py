"""Release 34: part of a group as a subject, complement clauses with a possessive
subject, refusals, being torn between options, the speaker's former things. Names are
invented; each case failed on release 33 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


def test_part_of_the_speakers_group_is_not_the_speaker() -> None:
    found = edges("Half my lab writes in Texwell and the other half uses Wordly with Citewise.")
    assert not {e for e in found if e[0] == "user"}


def test_the_speakers_group_as_a_whole_is_still_the_speaker() -> None:
    assert ("user", "USES", "Texwell") in edges("My lab writes everything in Texwell.")  # a guard


def test_a_possessive_subject_of_a_complement_clause_is_not_the_speaker() -> None:
    assert ("user", "USES", "Ledgerly") not in edges("I'm pretty sure our accountant uses Ledgerly.")


def test_a_refusal_states_no_use() -> None:
    assert ("Ngaire", "USES", "WhatsApp") not in edges("My grandma Ngaire still refuses to use WhatsApp.")


def test_being_torn_between_options_states_no_use() -> None:
    assert not {e for e in edges("phones: still torn between Callwise and Ringwell") if e[0] == "user"}


def test_the_speakers_former_thing_is_no_use_now() -> None:
    assert ("user", "USES", "Dellwick") not in edges("My former Dellwick laptop sits in a drawer now.")


def test_the_speakers_thing_is_still_theirs() -> None:
    assert ("user", "USES", "Kindle") in edges("My Kindle is always in my bag.")  # a guard


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Half our servers run Ubuntu.", "Ubuntu"),
        ("Half my day is spent in Slack.", "Slack"),
        ("Half my lab, including me, writes in Texwell.", "Texwell"),
        ("I refuse to let go of my Kindle.", "Kindle"),
        ("I refuse to part with my ThinkPad.", "ThinkPad"),
        ("I'm wondering about our Postgres backup strategy.", "Postgres"),
    ],
)
def test_what_the_review_found_the_draft_lost_is_read(text: str, tool: str) -> None:
    assert ("user", "USES", tool) in edges(text)  # a guard
