"""Readings release 15's rules must not make, found by a review of the release: a date
inside a relative clause, a service used to cancel something, a tool's lower-case name
after a verb of making, a person "called" by a name, a state or a client described like
a job, a field of work named like a firm, a thing that came with a tool, a linked
complement clause, and a town after "a woman from". Each case failed on the release."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I run Ubuntu on the laptop my dad gave me last christmas.", ("user", "USES", "Ubuntu")),
        ("I use Anki to review the words I learned the day before.", ("user", "USES", "Anki")),
        ("I cancelled my dentist appointment via Doctolo.", ("user", "USES", "Doctolo")),
        ("I deleted my old tweets and now I only post on Chirply.", ("user", "USES", "Chirply")),
        ("I think the problem is I run Pixelo on an old phone.", ("user", "USES", "Pixelo")),
    ],
)
def test_a_present_use_beside_a_past_or_a_stop_is_kept(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "word"),
    [("we built the frontend in react", "react"), ("I keep my budget in excel", "excel")],
)
def test_a_lower_case_tool_after_a_verb_of_making_is_the_tool(text: str, word: str) -> None:
    assert entities(text).get(word) == "tool"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I have a friend of mine called Tomas who fixes bikes.", "Tomas"),
        ("There's someone at work called Dana who always helps me.", "Dana"),
    ],
)
def test_someone_called_by_a_name_is_a_person(text: str, name: str) -> None:
    assert entities(text).get(name) == "person"


@pytest.mark.parametrize(
    "text",
    [
        "I'm a little late with Norvik Bank payments this month.",
        "I'm a tenant with Harbor Homes and the heating is broken again.",
        "I work in Digital Marketing.",
    ],
)
def test_a_state_a_tenancy_or_a_field_is_no_membership(text: str) -> None:
    assert not {e for e in edges(text) if e[1] == "PART_OF"}


def test_a_field_of_study_named_with_a_trade_is_no_firm() -> None:
    assert entities("I'm taking a course on Cyber Security.").get("Cyber Security") != "organization"


@pytest.mark.parametrize(
    "text", ["My laptop came with Windows but I put Linux on it.", "my dog sleeps on the Cozzo bed every night"]
)
def test_what_a_thing_came_with_or_rests_on_is_not_used(text: str) -> None:
    assert not {e for e in edges(text) if e[1] == "USES" and e[2] in ("Windows", "Cozzo")}


def test_a_town_after_a_woman_from_is_no_firm() -> None:
    assert entities("our nanny is a lovely woman from Kerikeri").get("Kerikeri") != "organization"
