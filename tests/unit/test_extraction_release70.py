"""Release 70: the fifty-first set's first look. ", and Paora coaches ..." opens a clause of
its own; a role word before a plural possessive is no role ("a kids' savings app"); a
main clause with a modal after an "if" clause is supposed; a name of another type after a
comma is a new subject; a sentence opening with a verb in -s is someone else's; "N, our
accountant, does our filings through X" is N's use. Names are invented; each case failed
on release 69 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_and_a_name_with_its_own_verb_opens_a_clause() -> None:
    text = "The Ferrymead Rowing Club runs its erg sessions on Concept2 machines, and Tamati coaches the novices."
    found = edges(text)
    assert ("Ferrymead Rowing Club", "USES", "Concept2") in found
    assert not any(target == "Tamati" and rel == "USES" for _, rel, target in found)


def test_a_role_before_a_plural_possessive_is_no_role() -> None:
    text = "We are building Pennywort Lane, a kids' savings app."
    assert entities(text).get("Pennywort Lane") != "person"


def test_kids_teachers_are_no_speakers_acquaintances() -> None:
    assert ("user", "KNOWS", "Ama") not in edges("Kofi and Ama are my kids' teachers")


@pytest.mark.parametrize(
    "text",
    [
        "If the client accept, we will rewrite the Sardine backend in Spring Boot.",
        "If visa will not come in time, we must to cancel the booking on Agoda.",
    ],
)
def test_a_modal_after_an_if_clause_is_supposed(text: str) -> None:
    assert not any(source == "user" for source, _, _ in edges(text))


def test_a_plain_present_after_an_if_clause_still_holds() -> None:
    assert ("user", "USES", "Zoom") in edges("If it rains we move the meeting, and we use Zoom every week.")  # a guard


def test_a_name_of_another_type_after_a_comma_is_a_new_subject() -> None:
    text = "I'm on Tansywick with Ewa Kowalczyk and Dumisani, Tansywick depends on Snowflake."
    found = edges(text)
    assert ("Tansywick", "DEPENDS_ON", "Snowflake") in found
    assert ("Dumisani", "USES", "Snowflake") not in found


def test_our_project_apposed_keeps_its_subject() -> None:
    text = "Project Saltcellar, our new booking site for the restaurant, is built on Tock."
    assert ("Saltcellar", "USES", "Tock") in edges(text)  # a guard


def test_a_sentence_opening_with_a_third_person_verb_is_not_the_speakers() -> None:
    text = "Q3 accountant = Folasade Ogunbiyi (Brightledger). Prefers Xero over Sage."
    assert ("user", "PREFERS", "Xero") not in edges(text)


def test_which_with_a_third_person_verb_keeps_its_antecedent() -> None:
    assert ("user", "USES", "Substack") in edges("I started a newsletter, which uses Substack.")  # a guard


def test_does_after_an_apposition_is_the_named_ones_doing() -> None:
    text = "My accountant, Rustam Tashkentov, does all our filings through Xero."
    assert ("Rustam Tashkentov", "USES", "Xero") in edges(text)


def test_a_plural_noun_before_are_is_the_subject() -> None:
    text = "Builds are run by CircleCI at Quantico Systems, which I hate."
    assert ("Quantico Systems", "USES", "CircleCI") in edges(text)  # a guard
    assert ("user", "USES", "CircleCI") in edges(text)
