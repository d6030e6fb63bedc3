"""Release 35: choices almost made or meant, a plan said after "keep", what someone lets
the speaker do, a note's labels of change and of an organization's tools. Names are
invented; each case failed on release 34 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    "text",
    [
        "We almost went with Boxwell or Crateful, but the packaging put us off, so no.",
        "we were meant to go with a builder from Harlow Homes for the extension",
        "I keep telling him we should move it to Notewell.",
    ],
)
def test_a_choice_not_made_states_nothing(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user"}


def test_keeping_on_using_is_still_a_use() -> None:
    assert ("user", "USES", "Notion") in edges("I keep using Notion for everything.")  # a guard


def test_what_someone_lets_the_speaker_do_is_the_speakers() -> None:
    found = edges("my boss renata finally let us use chatwell instead of endless email chains")
    assert ("user", "USES", "chatwell") in found
    assert ("renata", "USES", "chatwell") not in found


def test_a_plain_labelled_line_still_lists_a_use() -> None:
    assert ("user", "USES", "Fly.io") in edges("Hosting: Fly.io")  # a guard


def test_the_name_left_under_a_label_of_change_is_no_use() -> None:
    found = edges("Switched: Evernote -> Obsidian (done)")
    assert ("user", "USES", "Evernote") not in found
    assert ("user", "USES", "Obsidian") in found


def test_an_organization_that_uses_a_labelled_list_uses_its_items() -> None:
    found = edges("Riverbend Allotments uses: Trello (jobs), WhatsApp (chat), SumUp (plot fees)")
    assert ("Riverbend Allotments", "USES", "WhatsApp") in found
    assert not {e for e in found if e[0] == "user"}


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("I almost always go with Postgres for new projects.", ("user", "DECIDED", "Postgres")),
        ("We are thinking to keep using MySQL.", ("user", "USES", "MySQL")),
        ("Auth: Auth0 (decided last sprint)", ("user", "USES", "Auth0")),
    ],
)
def test_what_the_review_found_the_draft_lost_is_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # a guard


@pytest.mark.parametrize(
    "text",
    ["Let me use Pythonwell for this one.", "My neighbour lets me use her Wifiwell.", "Please let me use Rwell."],
)
def test_a_proposal_or_a_loan_is_no_use(text: str) -> None:
    assert not {e for e in edges(text) if e[0] == "user" and e[1] == "USES"}  # a guard
