"""Release 58: the thirty-ninth set's first look. A rejection ends at a second verb joined
by "and" ("decided against X and went with Y"); someone "decided together with me"; "I'll
always take X over Y", "Thabo would take X over Y"; "in my opinion"; "My gaming group is
me, A and B"; "the X team is me, A and B" only at work; a passive's tool "at O" is O's;
the speaker's own device failing to reach a tool. Names are invented; each case failed on
release 57 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


def test_a_rejection_ends_at_a_second_verb() -> None:
    found = edges("We decided against Pennyloom and went with Tallyrun instead.")
    assert ("user", "DECIDED", "Tallyrun") in found
    assert ("user", "DECIDED", "Pennyloom") not in found


def test_a_rejection_of_two_things_rejects_both() -> None:
    found = edges("We decided against Pennyloom and Tallyrun.")
    assert not any(rel == "DECIDED" for _, rel, _ in found)  # a guard


def test_a_choice_made_together_with_the_speaker_is_theirs_too() -> None:
    found = edges("Mrs. Oyelaran, my manager, decided together with me to go with Stockwell for the stock.")
    assert ("user", "DECIDED", "Stockwell") in found
    assert ("Oyelaran", "DECIDED", "Stockwell") in found


def test_a_choice_made_by_someone_else_alone_is_theirs() -> None:
    assert ("user", "DECIDED", "Stockwell") not in edges("Mrs. Oyelaran decided to go with Stockwell.")  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I'll always take Lumenpad over Draftly for long notes.", ("user", "PREFERS", "Lumenpad")),
        ("Kojo would take Lumenpad over Draftly any day.", ("Kojo", "PREFERS", "Lumenpad")),
        ("Lumenpad beats every other editor for long notes, in my opinion.", ("user", "PREFERS", "Lumenpad")),
    ],
)
def test_preferences_said_by_taking_or_in_an_opinion(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


def test_she_would_take_names_no_one() -> None:
    assert not any(rel == "PREFERS" for _, rel, _ in edges("She would take Lumenpad over Draftly."))  # a guard


def test_a_group_of_the_speaker_and_friends_are_known() -> None:
    found = edges("My board game group is me, Hemi, Ludmila and Okoro, and we meet on Fridays.")
    for person in ("Hemi", "Ludmila", "Okoro"):
        assert ("user", "KNOWS", person) in found


def test_a_team_away_from_work_names_no_colleagues() -> None:
    found = edges("The pub quiz team is me, Hemi and Okoro, and we never win.")
    assert not any(rel == "WORKS_WITH" for _, rel, _ in found)  # a guard


def test_a_team_at_work_names_colleagues() -> None:
    found = edges("The night team is me, Hemi and Okoro, all on one ward rota.")
    assert ("user", "WORKS_WITH", "Hemi") in found  # a guard


def test_a_passives_tool_at_an_organization_is_its() -> None:
    found = edges("Deployments are handled by Shipwren at Corvale Analytics.")
    assert ("Corvale Analytics", "USES", "Shipwren") in found
    assert ("user", "USES", "Shipwren") not in found


@pytest.mark.parametrize(
    "text",
    [
        "My Pulsewell watch stopped syncing with Heartnest after the update.",
        "Hi, my Pulsewell scale won't sync with the Heartnest app.",
    ],
)
def test_the_speakers_device_failing_to_reach_a_tool(text: str) -> None:
    assert ("user", "USES", "Heartnest") in edges(text)


def test_the_speakers_device_depending_on_a_tool_is_the_devices() -> None:
    found = edges("Our Pulsewell hub depends on a Heartnest bridge.")
    assert ("user", "DEPENDS_ON", "Heartnest") not in found  # a guard
