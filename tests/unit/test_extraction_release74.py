"""Release 74: the fifty-fourth set's first look. "N says the <noun> ..." reports a clause
with a subject of its own; "spent six years at X" is over; ", <name> <noun> was ..." opens
a clause; "N's stepdad uses X" is the stepdad's use, not N's. Names are invented; each
case failed on release 73 unless marked a guard."""

from __future__ import annotations

from tests.unit.extracted import edges


def test_says_the_noun_has_its_own_subject() -> None:
    text = "My coworker Lerato says the checkout service depends on Spring Boot."
    assert ("Lerato", "USES", "Spring Boot") not in edges(text)


def test_says_a_named_subject_keeps_it() -> None:
    text = "Lerato says the Quorvane service depends on Spring Boot."
    assert ("Quorvane", "DEPENDS_ON", "Spring Boot") in edges(text)  # a guard


def test_years_spent_at_a_firm_are_over() -> None:
    text = "Before I moved into teaching I spent six years at Ravensholt Solicitors."
    assert ("user", "PART_OF", "Ravensholt Solicitors") not in edges(text)


def test_a_named_noun_before_a_copula_opens_a_clause() -> None:
    found = edges("we went w/ supabase for the side project, firebase pricing was scary")
    assert ("user", "DECIDED", "supabase") in found
    assert ("user", "DECIDED", "firebase") not in found


def test_a_persons_relative_is_the_subject() -> None:
    assert not edges("Amaru's stepdad swears by Life360 to keep track of everyone.")


def test_a_persons_own_tool_stays_theirs() -> None:
    assert ("Amaru", "USES", "Life360") in edges("Amaru uses Life360 to keep track of everyone.")  # a guard
