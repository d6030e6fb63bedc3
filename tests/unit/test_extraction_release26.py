"""Release 26: plans given up and choices still open, people named by their ending, what
writing is about, cues inside names, and choices said as "went for a X" or "decided for
X". Names are invented; each case failed
on release 25 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_a_plan_given_up_is_no_use() -> None:
    found = edges("We were going to use Quarrel but went with Brisklet instead.")
    assert ("user", "USES", "Quarrel") not in found
    assert ("user", "DECIDED", "Brisklet") in found  # a guard


def test_a_choice_still_open_is_no_decision() -> None:
    assert not {e for e in edges("We're trying to decide between Portwise and Gatekin.") if e[1] == "DECIDED"}


def test_a_decision_made_is_still_read() -> None:
    assert ("user", "DECIDED", "Portwise") in edges("We decided on Portwise.")  # a guard


def test_a_preference_over_a_numbered_model_keeps_its_contrast() -> None:
    assert ("user", "PREFERS", "Vacuflo") not in edges("I prefer the Dustara 12 to the Vacuflo, its bin is tiny.")


def test_people_named_by_their_ending_are_not_the_speaker() -> None:
    assert ("user", "PART_OF", "Fixwell Services") not in edges("Our handyman works for Fixwell Services.")
    assert ("user", "USES", "Tallyline") in edges("Our team uses Tallyline.")  # a guard


def test_a_deputy_is_a_colleague() -> None:
    assert ("user", "WORKS_WITH", "Bisi Olawale") in edges("My deputy, Bisi Olawale, pushed for Careleaf.")


def test_what_writing_is_about_is_not_used() -> None:
    found = edges("My friend Torvi is writing her dissertation on the Kodaly approach.")
    assert ("Torvi", "USES", "Kodaly approach") not in found
    assert ("user", "USES", "Chirpnet") in edges("I deleted my old posts and now I only post on Chirpnet.")  # a guard


def test_texting_spellings_of_modals_are_read() -> None:
    assert ("user", "USES", "Flexloop") not in edges("my physio says i shld use the Flexloop every day")


def test_a_cue_inside_a_name_is_no_cue() -> None:
    assert ("Harwood Debating Society", "DECIDED", "Debatedesk") in edges(
        "Harwood Debating Society decided on Debatedesk."
    )


@pytest.mark.parametrize(
    ("text", "chosen"),
    [
        ("We went for a Grillmaster Spirit grill for the garden.", "Grillmaster Spirit"),
        ("For the thesis I decided for Citeloom and not Refwise.", "Citeloom"),
    ],
)
def test_choices_said_otherwise_are_decisions(text: str, chosen: str) -> None:
    assert ("user", "DECIDED", chosen) in edges(text)


def test_a_named_pattern_is_a_concept() -> None:
    assert entities("We settled on the Wayfarer pattern for the sync.").get("Wayfarer pattern") == "concept"
    assert "Stitchly pattern" not in entities("Anyone tried the Stitchly pattern app?")  # a guard


def test_a_relative_clause_without_that_is_not_the_subject() -> None:
    assert ("user", "USES", "Buildpad") not in edges("The contractor we hired uses Buildpad.")
    assert ("user", "DECIDED", "Tallyco") in edges("For the money of the house we have chosen the Tallyco.")  # a guard
