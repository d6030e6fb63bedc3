"""Release 19: appositions before a verb, possessives inside names, "insist on", a
sentence's opening "Before the ...," dating it. Names are invented; each case failed on
release 18 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges, entities


def test_a_passive_said_past_an_apposition_is_the_names() -> None:
    found = edges("Tallyhook, the invoicing module, is maintained by Ximena Oyelaran.")
    assert ("Ximena Oyelaran", "WORKS_ON", "Tallyhook") in found


def test_a_plain_passive_still_reads() -> None:
    assert ("Osric", "WORKS_ON", "Lantern") in edges("Lantern is maintained by Osric.")  # a guard


def test_a_possessive_inside_a_name_keeps_the_name_whole() -> None:
    assert entities("I'm a porter at St Aldhelm's Hospital.").get("St Aldhelm's Hospital") == "organization"
    assert entities("We ate at Tomasz's Bakery last night.").get("Tomasz's Bakery") == "organization"


def test_a_possessive_before_a_thing_of_ones_own_splits_the_names() -> None:
    found = entities("I fixed Ana's Notion page and Kemi's Mum called.")
    assert "Ana" in found and "Kemi" in found  # a guard


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("My neighbour Ilse always insists on Komoot.", ("Ilse", "PREFERS", "Komoot")),
    ],
)
def test_a_stated_relation_is_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("Before the merger, Oakleaf Freight ran everything on Transwide.", ("Oakleaf Freight", "USES", "Transwide")),
        ("Tarn, our ingestion service, is written in Zig.", ("user", "USES", "Zig")),
        ("My neighbour Ilse always insists on Komoot.", ("Ilse", "USES", "Komoot")),
    ],
)
def test_what_is_not_done_now_by_the_speaker_is_not_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge not in edges(text)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("For Kestrel, our team uses Jira.", ("user", "USES", "Jira")),
        ("Tarn, our ingestion service, is written in Zig.", ("Tarn", "USES", "Zig")),
        ("I know that we use Jira.", ("user", "USES", "Jira")),
        ("Hi Ana, our team moved to Linear.", ("user", "USES", "Linear")),
        ("Before my shift, meds are tracked in Medisafe.", ("user", "USES", "Medisafe")),
    ],
)
def test_guards_still_read(text: str, edge: tuple[str, str, str]) -> None:
    assert edge in edges(text)  # guards


def test_a_possessive_before_a_piece_of_work_keeps_the_person() -> None:
    assert entities("Priya's Migration is finally done.").get("Priya") == "person"  # a guard
