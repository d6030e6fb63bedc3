"""Release 28: former settings and schooling that date a clause, a name bracketed after
the speaker's noun naming it, a job said with "in" in non-native English. Names are
invented; each case failed on release 27 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Before this job I was writing Perl at a bank.", "Perl"),
        ("In my old job in the factory we was using Kanban boards.", "Kanban"),
        ("In undergrad I wrote everything in Lyxbook.", "Lyxbook"),
    ],
)
def test_a_former_setting_dates_the_clause(text: str, tool: str) -> None:
    assert ("user", "USES", tool) not in edges(text)


def test_schooling_now_is_still_a_use() -> None:
    assert ("user", "USES", "Notewell") in edges("In college I use Notewell for everything.")  # a guard


def test_a_name_bracketed_after_the_speakers_noun_is_its_subject() -> None:
    found = edges("Hello, our shop (Pryor & Teasel Stationers) relies on Tillmate for card payments.")
    assert ("Pryor & Teasel Stationers", "DEPENDS_ON", "Tillmate") in found
    assert ("user", "USES", "Tillmate") not in found


def test_a_name_bracketed_after_someone_is_their_organization() -> None:
    text = "Feature request from Wilhelmina Strand (Fernvale Software): webhooks for builds in Shipyardly."
    assert ("Fernvale Software", "USES", "Shipyardly") not in edges(text)  # a guard


@pytest.mark.parametrize(
    ("text", "org"),
    [("I am backend developer in Kairomark.", "Kairomark"), ("I am nurse in Klinikum Auenfeld.", "Klinikum Auenfeld")],
)
def test_a_job_in_an_organization_is_membership(text: str, org: str) -> None:
    found = edges(text)
    assert ("user", "PART_OF", org) in found
    assert ("user", "USES", org) not in found


def test_a_job_in_a_team_is_no_workplace() -> None:
    assert ("user", "PART_OF", "Pomelo team") not in edges("I am developer in the Pomelo team.")  # a guard
