"""Release 33: work the speaker calls "our", items of notes that run on as sentences,
pasts told in the progressive or with "'d been", and items marked as on trial. Names are
invented; each case failed on release 32 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


def test_a_teams_service_says_nothing_of_the_speakers_work_on_it() -> None:
    found = edges("Our service Larkwick depends on Queuewell for rate limiting.")
    assert ("Larkwick", "DEPENDS_ON", "Queuewell") in found
    assert ("user", "WORKS_ON", "Larkwick") not in found


def test_a_project_of_the_speakers_own_is_their_work() -> None:
    found = edges("My side project Pebblewick runs on a Fernhost box.")
    assert ("user", "WORKS_ON", "Pebblewick") in found  # a guard


def test_a_labelled_line_that_runs_on_as_a_sentence_lists_nothing() -> None:
    text = "Ticket: the Kilnwise controller my husband bought shows error E-04 on every firing."
    assert ("user", "USES", "Kilnwise") not in edges(text)


def test_a_short_labelled_item_is_still_listed() -> None:
    assert ("user", "USES", "Ledgerwick") in edges("Invoices: Ledgerwick")  # a guard


@pytest.mark.parametrize(
    ("text", "before", "now"),
    [
        ("We was using Dropwell but now we change to Cloudwick.", "Dropwell", None),
        ("We'd been using Mailwick for years, but last autumn we moved to Postwell.", "Mailwick", "Postwell"),
    ],
)
def test_a_past_told_as_going_on_then_is_no_use_now(text: str, before: str, now: str | None) -> None:
    found = edges(text)
    assert ("user", "USES", before) not in found
    if now is not None:
        assert ("user", "USES", now) in found


def test_a_progressive_past_that_still_holds_is_a_use() -> None:
    assert ("user", "USES", "Slack") in edges("We were using Slack and we still are.")  # a guard


def test_a_listed_item_on_trial_is_not_used() -> None:
    found = edges("stack for the shop:\n- Shopwell (live)\n- Klavwick (trial, undecided)")
    assert ("user", "USES", "Shopwell") in found
    assert ("user", "USES", "Klavwick") not in found


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("stack for the shop: Shopwell, Klavwick (trial), Gorgwick", "Gorgwick"),
        ("stack for the shop:\n- Shopwell\n- Xero (trial balance exports weekly)", "Xero"),
        ("I was using Garmin Connect, and now I'm using Strava too.", "Garmin Connect"),
        ("We were using Trello, but now we are thinking about Linear.", "Trello"),
    ],
)
def test_what_the_review_found_the_draft_lost_is_read(text: str, tool: str) -> None:
    assert ("user", "USES", tool) in edges(text)  # a guard


def test_work_the_speaker_says_they_do_on_our_thing_is_theirs() -> None:
    assert ("user", "WORKS_ON", "Pelwick") in edges("Our app Pelwick, I work on it daily.")  # a guard
