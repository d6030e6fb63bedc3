"""Release 63: the forty-fourth set's first look. After a verb of preference, a rival after
"to" past a determiner and adjectives is contrasted ("X bulbs to the cheap Y ones"); a
hyphenated verb is a verb ("video-call him on X"); "I've gone with X" is a choice; "N
moved our CI to X" changes the speaker's tools; "works on P at O" names the workplace;
"N runs a bakery called O" is N's business, not a project called so; a modal perfect ("we'd
have gone with X") is no choice. Names are invented; each case failed on release 62 unless
marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


def test_a_rival_after_to_with_adjectives_is_no_preference() -> None:
    found = edges("I prefer Lumora bulbs to the cheap Glimmet ones, the colours are better.")
    assert ("user", "PREFERS", "Lumora") in found
    assert ("user", "PREFERS", "Glimmet") not in found


def test_a_rival_right_after_to_is_no_preference() -> None:
    assert ("user", "PREFERS", "Glimmet") not in edges("I prefer Lumora to Glimmet.")  # a guard


@pytest.mark.parametrize(
    ("text", "doer"),
    [
        ("We always video-call Grandpa on Talkwire.", "user"),
        ("My aunt Ifeyinwa video-calls the cousins on Talkwire every Sunday.", "Ifeyinwa"),
    ],
)
def test_a_hyphenated_verb_takes_its_instrument(text: str, doer: str) -> None:
    assert (doer, "USES", "Talkwire") in edges(text)


def test_a_perfect_going_with_is_a_choice() -> None:
    assert ("user", "DECIDED", "Pagewick") in edges("My old notes app was a mess, so I've gone with Pagewick.")


def test_a_choice_not_gone_with_is_none() -> None:
    assert ("user", "DECIDED", "Pagewick") not in edges("I haven't gone with Pagewick.")  # a guard


def test_moving_our_things_changes_the_speakers_tools() -> None:
    found = edges("Yesterday Mireia from the platform team moved our CI from Cogwell to Runlark.")
    assert ("user", "USES", "Runlark") in found
    assert ("Mireia", "USES", "Runlark") not in found


def test_a_project_worked_on_at_an_organization_names_the_workplace() -> None:
    found = edges("Teuila and I both work on the Makaira Reef restoration at the Lowtide Marine Trust.")
    assert ("Teuila", "PART_OF", "Lowtide Marine Trust") in found
    assert ("user", "PART_OF", "Lowtide Marine Trust") in found


def test_a_time_after_the_project_names_no_workplace() -> None:
    found = edges("I work on Makaira at night.")
    assert not any(relation == "PART_OF" for _, relation, _ in found)  # a guard


def test_a_business_someone_runs_is_theirs() -> None:
    assert ("Tavake", "PART_OF", "Hinemoa Loaves") in edges(
        "My cousin Tavake runs a small bakery called Hinemoa Loaves near the harbour."
    )


@pytest.mark.parametrize(
    ("text", "tool"), [("We'd have picked Kafka, honestly.", "Kafka"), ("I would've chosen Svelte.", "Svelte")]
)
def test_a_modal_perfect_is_no_choice(text: str, tool: str) -> None:
    assert ("user", "DECIDED", tool) not in edges(text)


def test_a_modal_perfect_switch_is_none() -> None:
    assert ("user", "USES", "Cloudmere") not in edges("We could have switched to Cloudmere.")  # a guard


def test_a_project_someone_runs_is_no_business() -> None:
    found = edges("Tavake runs a small charity project called Warm Hands.")
    assert ("Tavake", "PART_OF", "Warm Hands") not in found  # a guard: the business reading must not take it
