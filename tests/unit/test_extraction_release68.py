"""Release 68: the forty-ninth set's first look. "Our band X" names the band, not a person,
and makes the speaker a member; a model's code names no person; "before" right before a
past verb closes its clause; a role's noun is no lower-case name; "spent N years doing"
is over; "N is with the X, ..." and "N is captain of the X" say where N belongs; "N is ...
and keeps the accounts in X" is N's use; an institution's whole name opens a sentence; a
lower-case name with a number closing it is a tool's. Names are invented; each case
failed on release 67 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_our_band_names_the_band() -> None:
    text = "Our band Velvet Harrowgate records everything through a Focusrite Scarlett."
    assert entities(text).get("Velvet Harrowgate") == "organization"
    found = edges(text)
    assert ("user", "PART_OF", "Velvet Harrowgate") in found
    assert ("user", "KNOWS", "Velvet Harrowgate") not in found


def test_my_study_group_listed_stays_people() -> None:
    text = "I revise with my study group, Ngozi, Gulnara and Yerlan, before exams."
    assert entities(text).get("Ngozi") == "person"  # a guard


def test_a_models_code_names_no_person() -> None:
    assert ("user", "KNOWS", "Pentax K-1000") not in edges(
        "Got into photography with a Pentax K-1000 my grandad left me."
    )


def test_before_a_past_verb_is_an_adverb() -> None:
    text = "Whoever owned this codebase before built the monitoring on Grafana plus Loki."
    assert ("user", "USES", "Grafana") not in edges(text)


def test_a_roles_noun_is_no_lower_case_tool() -> None:
    assert "flatmates" not in entities("my flatmates set up splitwise for the rent n bills")


@pytest.mark.parametrize(
    "text",
    [
        "I spent twelve years driving for Castellan Trasporti before I moved into the office.",
        "I spent three years writing CoffeeScript and I don't want to talk about it.",
    ],
)
def test_years_spent_doing_are_over(text: str) -> None:
    assert not any(source == "user" for source, _, _ in edges(text))


def test_a_weekend_spent_doing_keeps_its_tools() -> None:
    text = "I spent the weekend putting up shelves with my Boltwright drill, which is the best thing I've bought."
    assert ("user", "USES", "Boltwright") in edges(text)  # a guard


@pytest.mark.parametrize(
    ("text", "person", "org"),
    [
        (
            "My running coach Tariq Ansari is with the Kelvedon Harriers, that's how we met.",
            "Tariq Ansari",
            "Kelvedon Harriers",
        ),
        (
            "Our accountant, Rosalind Vermaak, is with Fenwick & Moor and she's been brilliant.",
            "Rosalind Vermaak",
            "Fenwick & Moor",
        ),
        (
            "Emilia Kowalska is captain of the Northgate Rowing Club this season.",
            "Emilia Kowalska",
            "Northgate Rowing Club",
        ),
    ],
)
def test_where_a_person_belongs(text: str, person: str, org: str) -> None:
    assert (person, "PART_OF", org) in edges(text)


def test_customers_compared_belong_nowhere() -> None:
    assert not any(rel == "PART_OF" for _, rel, _ in edges("Sofia is with Vodafone, I'm with EE."))  # a guard


def test_a_verb_joined_by_and_is_the_opening_persons() -> None:
    text = "Nadia Haddad is treasurer of the Oakvale Residents Association and keeps the accounts in GnuCash."
    assert ("Nadia Haddad", "USES", "GnuCash") in edges(text)


def test_a_list_joined_by_and_has_no_verb() -> None:
    assert not any(e[0] == "Nadia" for e in edges("Nadia bought apples and pears in Lidl."))  # a guard


def test_an_institution_opening_the_sentence_is_named_whole() -> None:
    text = "Orchard Crest Farm decided to go with Trimble guidance on all three tractors."
    assert ("Orchard Crest Farm", "DECIDED", "Trimble") in edges(text)


def test_a_possessive_after_an_institution_is_no_verb() -> None:
    assert "Members of Lumenfold Software" not in entities("Members of Lumenfold Software's board resigned.")  # a guard


def test_a_lower_case_name_with_a_version_number_is_a_tool() -> None:
    assert ("Spindlewick", "DEPENDS_ON", "libgit2") in edges("Spindlewick depends on libgit2.")
