"""Release 77: "we almost joined X" did not happen; "decide X vs. Y" and "maybe we go
with X" choose nothing yet; "back when ..." dates its clause; "we're sous chefs at O" and
"Kaveh and I are the only two nurses at O" say where the speaker (and the people named
with them) work; "supervises the lab at O" is a post at O. Names are invented; each case
failed on release 76 unless marked a guard."""

from __future__ import annotations

import pytest

from tests.unit.extracted import edges


@pytest.mark.parametrize(
    "text",
    ["We almost joined the Pellbrook Camera Club, but the fees were silly.", "I nearly joined Pellbrook Camera Club."],
)
def test_almost_doing_it_is_not_doing_it(text: str) -> None:
    assert ("user", "PART_OF", "Pellbrook Camera Club") not in edges(text)


def test_almost_always_is_still_always() -> None:
    assert ("user", "USES", "Quillet") in edges("We almost always use Quillet for the rota.")  # a guard


@pytest.mark.parametrize(
    "text",
    [
        "TODO: decide Fernbike vs. Rollgrid for winter training",
        "Spike: evaluate Vantor vs. Rollgrid for embeddings, report Fri.",
    ],
)
def test_x_versus_y_chooses_neither_yet(text: str) -> None:
    found = {(s, r, t) for s, r, t in edges(text) if s == "user" and r in ("DECIDED", "USES")}
    assert found == set()


def test_comparing_x_versus_y_chooses_neither() -> None:
    assert not {t for s, r, t in edges("Comparing Fernbike versus Rollgrid this week.") if s == "user"}  # a guard


def test_a_choice_made_before_versus_stands() -> None:
    assert ("user", "DECIDED", "Fernbike") in edges(
        "We went with Fernbike vs. Rollgrid because of the price."
    )  # a guard


def test_maybe_we_go_with_is_no_decision() -> None:
    text = "Maybe we go with Kestrelbus if the train is too expensive, I don't know yet."
    assert ("user", "DECIDED", "Kestrelbus") not in edges(text)


def test_maybe_before_a_plain_use_keeps_the_use() -> None:
    assert ("user", "USES", "Quillet") in edges("Maybe I use Quillet too much.")  # a guard


def test_back_when_dates_its_clause_and_keeps_the_one_before_past() -> None:
    found = edges("I miss budgeting with Pennyloom, back when it still linked to my Harrowbank account.")
    assert ("user", "USES", "Pennyloom") not in found
    assert ("user", "USES", "Harrowbank") not in found


def test_a_clause_that_says_it_still_holds_keeps_the_use() -> None:
    assert ("user", "USES", "Quillet") in edges("He taught me Quillet, which I still use.")  # a guard


@pytest.mark.parametrize(
    ("text", "people"),
    [
        ("We are sous chefs at Brindlewick & Sage.", {"user"}),
        ("Kaveh and I are the only two sous chefs at Brindlewick & Sage.", {"user", "Kaveh"}),
    ],
)
def test_a_plural_job_at_an_organization_says_who_works_there(text: str, people: set[str]) -> None:
    assert {s for s, r, t in edges(text) if r == "PART_OF" and t == "Brindlewick & Sage"} == people


@pytest.mark.parametrize("text", ["We are regulars at Brindlewick Cafe.", "I booked two nights at Hotel Brindlewick."])
def test_clients_and_bookings_are_no_jobs(text: str) -> None:
    assert not {t for s, r, t in edges(text) if s == "user" and r == "PART_OF"}  # a guard


def test_supervising_a_unit_at_an_organization_is_a_post_there() -> None:
    text = "Dr. Parvaneh Sadri supervises the lab at Cresthollow Diagnostics."
    assert ("Parvaneh Sadri", "PART_OF", "Cresthollow Diagnostics") in edges(text)
