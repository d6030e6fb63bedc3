"""Release 65: the forty-sixth set's first look. A thing named after "at" is a place, no
instrument ("runs a repair café at the X Hall"); "mate" is a friend, and "my lab mates"
are people, not the speaker; "as our X" says what the thing before is; an institution's
noun inside a name makes it an institution ("Tramping Club Ōtautahi"); "members of" as
"member of", but not after a preposition ("played for members of X"); "..., and so do I"
takes up someone's preference for the speaker. Names are invented; each case failed on
release 64 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "doer", "place"),
    [
        ("Tevaite and Marlo run the night shift at the Whareroa packhouse with me.", "Tevaite", "Whareroa"),
    ],
)
def test_a_name_after_at_is_no_instrument(text: str, doer: str, place: str) -> None:
    assert (doer, "USES", place) not in edges(text)


def test_a_tool_after_on_is_still_an_instrument() -> None:
    assert ("user", "USES", "Buildkite") in edges("We run our CI on Buildkite.")  # a guard


def test_my_mates_are_people_not_the_speaker() -> None:
    found = edges("My lab mates use Quillref for the group project references.")
    assert ("user", "USES", "Quillref") not in found


def test_a_mate_is_known() -> None:
    found = edges("Me and my best mate Tauvaga started a little project called Tidecall.")
    assert ("user", "KNOWS", "Tauvaga") in found


def test_as_our_says_what_the_thing_before_is() -> None:
    found = edges("We chose Tillcraft as our POS after the old system crashed.")
    assert ("user", "DECIDED", "Tillcraft") in found
    assert not any(target == "POS" for _, _, target in found)


def test_as_well_as_lists_another() -> None:
    assert ("user", "USES", "Linear") in edges("We use Notion as well as Linear.")  # a guard


def test_an_institution_noun_inside_a_name_makes_an_institution() -> None:
    text = "Kalani, Hiwa and I are doing the Milford Track in March with the Tramping Club Ōtautahi."
    assert entities(text).get("Tramping Club Ōtautahi") == "organization"
    assert ("user", "USES", "Tramping Club Ōtautahi") not in edges(text)


def test_members_of_is_membership() -> None:
    assert ("user", "PART_OF", "Saltmere Birding Society") in edges(
        "We're members of the Saltmere Birding Society and do a count every April."
    )


def test_members_of_after_a_preposition_is_none() -> None:
    found = edges("The Copperkites played for members of the Harbourlight Food Bank.")
    assert not any(relation == "PART_OF" for _, relation, _ in found)  # a guard: "members of" is new


def test_so_do_i_takes_up_a_preference() -> None:
    found = edges("My co-teacher Lupe prefers Classwell to Teams and honestly so do I.")
    assert ("Lupe", "PREFERS", "Classwell") in found
    assert ("user", "PREFERS", "Classwell") in found


def test_without_so_do_i_the_preference_is_theirs() -> None:
    found = edges("My co-teacher Lupe prefers Classwell to Teams.")
    assert ("user", "PREFERS", "Classwell") not in found  # a guard
